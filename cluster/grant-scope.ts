/**
 * Whether a binding under review can grant anything a rule forbids, asked before anything else of it: a binding
 * that cannot is judged with its own namespace alone, not with the Stacks of every namespace its subjects reach.
 *
 * The question is the rules' own (policies/model/rbac/grants.ts `adminGrant`, over the RBAC model the rules
 * build, `rbacModel`): the binding, the role it names and the aggregating ClusterRoles with the roles they
 * select are the RBAC objects the full judgement would model for it (admission.ts relatedObjects), so the answer
 * is the one the rules would reach there. When it is "no" (`view`, `edit` in a RoleBinding, a role of plain
 * reads), no rule that reads bindings can find anything on it that depends on which Stacks it reaches:
 * - pko-stack-no-cluster-admin and rbac-no-cluster-admin-serviceaccount's wildcard findings need the grant to
 *   be "yes" or "maybe";
 * - rbac-no-cluster-admin-serviceaccount's open-aggregation finding reads the roles alone;
 * - pko-stack-auth-delegator's findings are on Stacks and only go away as bindings are added.
 * test/unit/cluster/grant-scope.spec.ts names these three as the rules that read bindings: a new rule that reads
 * them fails it until it is reasoned about here too. One rule implementation: nothing of a rule is repeated here.
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
