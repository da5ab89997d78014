/**
 * Kubernetes RBAC as declared in a Pulumi program: roles, bindings, their subjects, and whether a
 * binding grants cluster-admin (or a wildcard-equivalent role) to a given service account.
 * Three-valued where preview leaves values unknown. Aggregated ClusterRoles resolve as the aggregation
 * controller does (built-in roles included unless the program redeclares them). Server-side-apply patches are
 * merged with their object: `subjects`, `rules`, `clusterRoleSelectors` and `roleRef` are atomic (no list-type
 * markers; `+structType=atomic`), labels merge by key, and unset fields of an undeclared object are the
 * cluster's, hence unknown. A missing or unknown name is never taken for a concrete object (fail closed).
 */
import { UNKNOWN, Unknown } from "../values";
import { escalationScope } from "../permissions";
import {
    AdminGrant,
    Binding,
    DEFAULT_NAMESPACE,
    RANK,
    RbacModel,
    Role,
    RoleGrant,
    ServiceAccountRef,
    Subject,
    Tri,
    and,
    missing,
    or,
} from "./objects";
import { eq, selectorMatches } from "./aggregation";

/** How a role grants (or may grant) `*` on `*`, or an escalation path, with aggregation resolved. */

/**
 * The role's wildcard status with aggregation resolved: the best over every ClusterRole reachable by
 * selectors (each path as certain as its least certain match), its own rules included. Cycle-safe: each
 * role's reach can only improve from "no" to "maybe" to "yes".
 */
export function roleGrant(role: Role, model: RbacModel): RoleGrant {
    const hit = model.grants.get(role);
    if (hit) return hit;
    const reach = aggregationReach(role, model.clusterRoles);
    let wildcard: Tri = "no";
    let source: Role | undefined;
    let escalation: Tri = "no";
    let escalationSource: Role | undefined;
    const openAggregators: Role[] = [];
    for (const [r, t] of reach) {
        const w = and(t, r.wildcard);
        if (RANK[w] > RANK[wildcard] || (w === wildcard && w !== "no" && r === role)) {
            wildcard = w;
            source = r;
        }
        const e = and(t, r.escalation);
        if (RANK[e] > RANK[escalation] || (e === escalation && e !== "no" && r === role)) {
            escalation = e;
            escalationSource = r;
        }
        if (r.selectors !== undefined && !r.builtIn) openAggregators.push(r);
    }
    const result: RoleGrant = { wildcard, source, escalation, escalationSource, openAggregators };
    model.grants.set(role, result);
    return result;
}

/**
 * The roles whose rules `role` holds with aggregation resolved: itself ("yes") and every ClusterRole of
 * `clusterRoles` its selectors reach, transitively, each as certain as its least certain match, as the
 * Kubernetes aggregation controller copies them (it skips the aggregating role itself, by name).
 * Cycle-safe: each role's reach can only improve from "no" to "maybe" to "yes".
 */
export function aggregationReach(role: Role, clusterRoles: readonly Role[]): Map<Role, Tri> {
    const reach = new Map<Role, Tri>([[role, "yes"]]);
    const queue: Role[] = [role];
    while (queue.length > 0) {
        const from = queue.shift()!;
        const selectors = from.selectors;
        if (selectors === undefined) continue;
        const here = reach.get(from)!;
        for (const to of clusterRoles) {
            if (to === from) continue;
            if (typeof to.name === "string" && to.name === from.name) continue;
            const edge = selectors === UNKNOWN ? "maybe" : or(selectors.map((s) => selectorMatches(s, to)));
            const t = and(here, edge);
            if (t === "no" || RANK[t] <= RANK[reach.get(to) ?? "no"]) continue;
            reach.set(to, t);
            queue.push(to);
        }
    }
    return reach;
}

/**
 * The aggregating ClusterRoles of `clusterRoles` that reach `role` (directly or through others, "maybe"
 * included): the roles whose effective rules `role` widens. A ClusterRole labelled to feed `admin` widens
 * `admin`, and every binding of `admin` grants what it adds.
 */
export function aggregatorsOf(role: Role, clusterRoles: readonly Role[]): Role[] {
    return clusterRoles.filter(
        (r) =>
            r !== role && r.selectors !== undefined && (aggregationReach(r, clusterRoles).get(role) ?? "no") !== "no",
    );
}

/** Whether the binding's role is cluster-admin or a wildcard-equivalent role, with what decides it. */
export function adminGrant(binding: Binding, model: RbacModel): AdminGrant {
    const hit = model.adminGrants.get(binding);
    if (hit) return hit;
    const result = computeAdminGrant(binding, model);
    model.adminGrants.set(binding, result);
    return result;
}

export function computeAdminGrant(binding: Binding, model: RbacModel): AdminGrant {
    const { roleKind, roleName } = binding;
    if (roleName === UNKNOWN || roleKind === UNKNOWN || missing(roleName) || missing(roleKind)) {
        const why = binding.patch?.roleOutsideProgram
            ? "it sets subjects of a binding this program does not declare without its roleRef, so their role is one the program cannot see"
            : `its roleRef is ${roleName === UNKNOWN || roleKind === UNKNOWN ? "unknown during preview" : "missing"}`;
        return { admin: "maybe", unknown: why, openAggregators: [] };
    }
    if (roleKind === "ClusterRole" && roleName === "cluster-admin") return { admin: "yes", openAggregators: [] };
    const bindingNs = binding.namespace ?? DEFAULT_NAMESPACE;
    const candidates = [...(model.rolesByName.get(`${roleKind}/${roleName}`) ?? []), ...model.rolesWithUnknownName];
    let best: AdminGrant = { admin: "no", openAggregators: [] };
    const open = new Set<Role>();
    for (const role of candidates) {
        if (role.kind !== roleKind) continue;
        const sameName = typeof role.name === "string" && role.name !== "" ? eq(role.name, roleName) : "maybe";
        const sameNamespace = role.kind === "Role" ? eq(role.namespace ?? DEFAULT_NAMESPACE, bindingNs) : "yes";
        const target = and(sameName, sameNamespace);
        if (target === "no") continue;
        const grant = roleGrant(role, model);
        if (target === "yes") for (const a of grant.openAggregators) open.add(a);
        const admin = and(target, grant.wildcard);
        const scope = escalationScope(binding.kind, binding.namespace);
        const escalates = and(and(target, grant.escalation), scope);
        const via = RANK[escalates] > RANK[admin] ? escalates : admin;
        const byEscalation = RANK[escalates] > RANK[admin];
        // At equal certainty, `*` on `*` is the plainer reason to report than an escalation path.
        if (
            RANK[via] > RANK[best.admin] ||
            (via !== "no" && via === best.admin && !byEscalation && best.escalation !== undefined)
        ) {
            const what = grant.escalationSource?.escalationWhat ?? "escalate its privileges";
            best = {
                admin: via,
                role,
                grant,
                openAggregators: [],
                ...(byEscalation
                    ? {
                          escalation: `it can ${what}${binding.kind === "ClusterRoleBinding" ? " cluster-wide" : " in a privileged namespace"}`,
                      }
                    : {}),
                ...(via === "maybe"
                    ? {
                          unknown:
                              target === "maybe"
                                  ? `a role judged with it whose name is ${role.name === UNKNOWN ? "unknown during preview" : "missing"} may be it`
                                  : byEscalation && scope === "maybe"
                                    ? "the binding's namespace is unknown during preview and its role can escalate privileges in a privileged namespace"
                                    : "its role's rules, labels or aggregation selectors are unknown during preview",
                      }
                    : {}),
            };
        }
    }
    return { ...best, openAggregators: [...open] };
}

/**
 * Groups that cover every service account: all service accounts and all authenticated identities (every
 * service account token authenticates as a member of both). `system:masters` is not one: the API server
 * never puts a service account in it (its groups are `system:serviceaccounts`, `system:serviceaccounts:<ns>`
 * and `system:authenticated`), so binding a role to it grants a Stack's account nothing (and the group
 * already bypasses authorization).
 */
export const GROUPS_COVERING_ALL_ACCOUNTS: ReadonlySet<string> = new Set([
    "system:serviceaccounts",
    "system:authenticated",
]);

/**
 * The namespace a ServiceAccount subject names: its own, else (in a RoleBinding) the binding's; UNKNOWN
 * when unknown, and undefined when it is missing where it decides (a ClusterRoleBinding's subject).
 */
export function subjectNamespace(subject: Subject, binding: Binding): string | Unknown | undefined {
    if (subject.namespace === UNKNOWN) return UNKNOWN;
    if (!missing(subject.namespace)) return subject.namespace;
    return binding.kind === "RoleBinding" ? (binding.namespace ?? DEFAULT_NAMESPACE) : undefined;
}

/**
 * Whether the API server rejects the subject, so the binding is never stored and grants nothing: a
 * ClusterRoleBinding's ServiceAccount subject with no namespace (kubernetes pkg/apis/rbac/validation
 * `ValidateRoleBindingSubject`: the namespace is required when the binding is not namespaced).
 */
export function subjectRejected(subject: Subject, binding: Binding): boolean {
    return (
        subject.kind === "ServiceAccount" &&
        binding.kind === "ClusterRoleBinding" &&
        subject.namespace !== UNKNOWN &&
        missing(subject.namespace)
    );
}

/**
 * Whether a subject's identity could not be resolved during preview: its kind or name is unknown or
 * missing, or (for a ServiceAccount of a ClusterRoleBinding) its namespace is. Such a subject is never
 * taken for a concrete account: it may be any.
 */
export function subjectUnresolved(subject: Subject, binding: Binding): boolean {
    const { kind, name } = subject;
    if (kind === UNKNOWN || name === UNKNOWN || missing(kind) || missing(name)) return true;
    if (kind !== "ServiceAccount" || subjectRejected(subject, binding)) return false;
    const ns = subjectNamespace(subject, binding);
    return ns === UNKNOWN || missing(ns);
}

/** Whether one subject of a binding covers a service account. */
export function subjectCovers(subject: Subject, binding: Binding, sa: ServiceAccountRef): Tri {
    const { kind, name } = subject;
    if (kind === UNKNOWN || missing(kind)) return "maybe";
    if (kind === "ServiceAccount") {
        if (subjectRejected(subject, binding)) return "no";
        // A RoleBinding's ServiceAccount subject defaults to the binding's namespace; a missing name or
        // (where it decides) namespace is not resolved yet, so it may be any.
        const ns = subjectNamespace(subject, binding);
        const sameName = missing(name) ? "maybe" : eq(name, sa.name);
        const sameNs = missing(ns) ? "maybe" : eq(ns, sa.namespace);
        return and(sameName, sameNs);
    }
    if (name === UNKNOWN || missing(name)) {
        // A group or user whose name is not known may be one that covers every account.
        return kind === "Group" || kind === "User" ? "maybe" : "no";
    }
    if (kind === "Group") {
        if (GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return "yes";
        if (name.startsWith("system:serviceaccounts:")) {
            return eq(name.slice("system:serviceaccounts:".length), sa.namespace);
        }
        return "no";
    }
    if (kind === "User" && name.startsWith("system:serviceaccount:")) {
        const [ns, ...rest] = name.slice("system:serviceaccount:".length).split(":");
        return and(eq(ns, sa.namespace), eq(rest.join(":"), sa.name));
    }
    return "no";
}

/** Whether any subject of the binding covers the service account. */
export function bindingCovers(binding: Binding, sa: ServiceAccountRef): Tri {
    if (binding.subjects === UNKNOWN) return "maybe";
    return or(binding.subjects.map((s) => subjectCovers(s, binding, sa)));
}
