/**
 * Whether a binding under review can grant anything a rule forbids, asked before anything else of it: a binding
 * that cannot is judged with its own namespace alone, not with the Stacks of every namespace its subjects reach.
 * The question is the rules' own (policies/model/rbac/grants.ts `adminGrant`). "No" is safe for each rule that
 * reads bindings: the no-cluster-admin wildcard findings need "yes" or "maybe"; the open-aggregation finding
 * reads roles alone; pko-stack-auth-delegator's findings are on Stacks and only go as bindings are added.
 * test/unit/cluster/grant-scope.spec.ts fails for a new rule that reads bindings until it is reasoned about here.
 */
import { rbacModel } from "../policies/model/rbac/objects";
import { adminGrant } from "../policies/model/rbac/grants";
import { KObject, clusterResource } from "./kinds";
import { ClusterView } from "./view";
import { record } from "../support/records";

export function isBinding(o: KObject): boolean {
    return o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding";
}

/** The role a binding names: kind, namespace (a Role's is the binding's) and name; undefined when unreadable. */
export function boundRole(b: KObject): { kind: "Role" | "ClusterRole"; ns: string; name: string } | undefined {
    const ref = record(b.roleRef);
    if (typeof ref?.name !== "string" || (ref.kind !== "Role" && ref.kind !== "ClusterRole")) return undefined;
    const ns = (b.metadata ?? {}).namespace;
    return { kind: ref.kind, ns: ref.kind === "Role" && typeof ns === "string" ? ns : "", name: ref.name };
}

/**
 * Whether `binding` may grant what a rule forbids ("yes" or "maybe" by the rules' model), judged with `role`
 * (the role it names, as read: undefined when there is none) and the cluster's aggregating ClusterRoles and
 * the roles they select (from `view`).
 */
export function mayGrantForbidden(binding: KObject, role: KObject | undefined, view: ClusterView): boolean {
    const roles = new Map<string, KObject>();
    for (const r of [...view.aggregatingClusterRoles(), ...view.aggregatedClusterRoles(), ...(role ? [role] : [])])
        roles.set(
            `${String(r.kind)}/${String((r.metadata ?? {}).namespace ?? "")}/${String((r.metadata ?? {}).name)}`,
            r,
        );
    const model = rbacModel([binding, ...roles.values()].map(clusterResource));
    const judged = model.bindings[0];
    return judged === undefined || adminGrant(judged, model).admin !== "no";
}
