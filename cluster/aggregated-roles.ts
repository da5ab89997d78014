/**
 * ClusterRole aggregation in live state: which bound roles a ClusterRole widens, and which ClusterRoles the
 * aggregating ones select. The aggregation controller's own update is never judged (its identity is left
 * free), so what is judged is the change that makes it copy: a role labelled to feed an aggregating one, or
 * new selectors. Both resolve through the rules' RBAC model (policies/model/rbac).
 */
import { aggregationReach, aggregatorsOf } from "../policies/model/rbac/grants";
import { Role, rbacModel } from "../policies/model/rbac/objects";
import { KObject, clusterResource, identityOf } from "./kinds";

function isAggregating(o: KObject): boolean {
    return o.kind === "ClusterRole" && o.aggregationRule !== undefined && o.aggregationRule !== null;
}

/** The live ClusterRoles as the rules' model holds them, with `incoming` in place of its live version. */
function modelOf(incoming: KObject | undefined, live: KObject[]): { roles: Role[]; byIdentity: Map<string, KObject> } {
    const byIdentity = new Map(live.map((o) => [identityOf(o), o]));
    if (incoming) byIdentity.set(identityOf(incoming), incoming);
    const model = rbacModel([...byIdentity.values()].map(clusterResource));
    return { roles: model.clusterRoles, byIdentity };
}

/**
 * The names of the ClusterRoles (of `aggregating`, the live aggregating ones) whose effective rules `role`
 * widens: those whose selectors reach it, directly or through another aggregating role. Every binding of
 * one of them grants what `role` holds.
 */
export function aggregatorNames(role: KObject, aggregating: KObject[]): string[] {
    if (role.kind !== "ClusterRole") return [];
    const { roles } = modelOf(role, aggregating);
    const me = roles.find((r) => r.resourceName === identityOf(role));
    if (!me) return [];
    return aggregatorsOf(me, roles)
        .map((r) => r.name)
        .filter((n): n is string => typeof n === "string" && n !== "");
}

/**
 * The ClusterRoles of `clusterRoles` that an aggregating one of them (or `incoming`, with its own
 * selectors) selects, transitively: what the aggregation controller copies. Judged with them, an
 * aggregating role is judged by its selectors, not by the rules the controller copied last.
 */
export function selectedRoles(clusterRoles: KObject[], incoming?: KObject): KObject[] {
    const aggregating = [...clusterRoles, ...(incoming ? [incoming] : [])].filter(isAggregating);
    if (aggregating.length === 0) return [];
    const { roles, byIdentity } = modelOf(incoming, clusterRoles);
    const out = new Map<string, KObject>();
    for (const from of roles) {
        if (from.selectors === undefined || from.builtIn) continue;
        for (const [to] of aggregationReach(from, roles)) {
            const o = to === from || to.builtIn ? undefined : byIdentity.get(to.resourceName);
            if (o && !isAggregating(o)) out.set(to.resourceName, o);
        }
    }
    return [...out.values()];
}
