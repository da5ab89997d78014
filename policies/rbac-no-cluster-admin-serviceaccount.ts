/**
 * rbac-no-cluster-admin-serviceaccount (advisory, stack-level)
 *
 * What: two findings.
 * 1. A ClusterRoleBinding or RoleBinding of the program (or a patch of one, judged merged) grants
 *    `cluster-admin`, or a ClusterRole/Role whose rules, own or aggregated, give `*` verbs on `*`
 *    resources, to a service account, or to a group of service accounts, that no PKO Stack of the
 *    program runs as. (Bindings to a Stack's account are `pko-stack-no-cluster-admin`.)
 * 2. A binding gives a service account (any, a Stack's included) a ClusterRole that aggregates by label
 *    selectors declared in this program, and the program's roles do not make it wildcard: the cluster
 *    may hold ClusterRoles the program does not declare that match those selectors (built-in ones such
 *    as those labelled `rbac.authorization.k8s.io/aggregate-to-admin`, or any install's), so the role's
 *    effective rules cannot be judged from the program. The pack does not guess; it says so here. The
 *    built-in `admin`/`edit`/`view` roles bound as they are do not raise this.
 *
 * Why: any pod running as that account can do anything in the cluster; it is usually a leftover of a
 * "cluster-admin for simplicity" setup. An aggregated role grows with whatever is installed later.
 *
 * Fix: bind a least-privilege role, or remove the binding; for aggregation, use selectors only your
 * own roles carry, or a role with explicit rules.
 */
import { Finding, programRule } from "./model/policy";
import {
    Binding,
    Subject,
    StackIndex,
    adminGrant,
    describeBinding,
    describeBindingRole,
    describeSubject,
    rbacModel,
    stackIdentities,
    workspaceIdentities,
    subjectCovers,
} from "./model/rbac";
import { UNKNOWN } from "./model/values";

export const NAME = "rbac-no-cluster-admin-serviceaccount";

function isServiceAccountSubject(kind: unknown, name: unknown): boolean {
    if (kind === "ServiceAccount") return true;
    if (typeof name !== "string") return false;
    if (kind === "Group") return name === "system:serviceaccounts" || name === "system:authenticated" || name.startsWith("system:serviceaccounts:");
    return kind === "User" && name.startsWith("system:serviceaccount:");
}

/** Whether a subject may be a service account (or a group of them); unknown kinds or names may. */
function mayBeServiceAccount(s: Subject): boolean {
    if (s.kind === UNKNOWN || s.kind === undefined || s.kind === "") return true;
    if ((s.kind === "Group" || s.kind === "User") && (s.name === UNKNOWN || s.name === undefined || s.name === "")) return true;
    return isServiceAccountSubject(s.kind, s.name);
}

const key = (s: Subject) => JSON.stringify([s.kind === UNKNOWN ? "?" : s.kind, s.name === UNKNOWN ? "?" : s.name, s.namespace === UNKNOWN ? "?" : s.namespace]);

export const policy = programRule(
    {
        name: NAME,
        description:
            "No binding grants cluster-admin or a wildcard-equivalent role to a service account; aggregated roles whose selectors may match roles outside the program are pointed out.",
        enforcementLevel: "advisory",
        severity: "high",
        remediationSteps:
            "Bind a role with only the permissions the workload needs, or remove the binding; for an aggregated ClusterRole, select only labels your own roles carry or use explicit rules.",
        url: "https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles",
    },
    (resources) => {
        const model = rbacModel(resources);
        const identities = stackIdentities(resources);
        const stacks = new StackIndex([...identities, ...workspaceIdentities(resources, identities.length)]);
        const findings: Finding[] = [];
        const wildcardReported = new Map<Binding, Set<string>>();
        const openReported = new Set<Binding>();
        for (const binding of model.bindings) {
            const grant = adminGrant(binding, model);
            const base = binding.patch?.base;
            if (grant.admin === "yes" && binding.subjects !== UNKNOWN) {
                const role = describeBindingRole(binding, grant);
                const mine = new Set<string>();
                wildcardReported.set(binding, mine);
                const already = base ? wildcardReported.get(base) : undefined;
                for (const [index, subject] of binding.subjects.entries()) {
                    if (!isServiceAccountSubject(subject.kind, subject.name)) continue;
                    if (stacks.candidates(subject, binding).some((st) => subjectCovers(subject, binding, st.serviceAccount) !== "no")) continue;
                    mine.add(key(subject));
                    if (already?.has(key(subject))) continue;
                    findings.push({
                        message: `${describeBinding(binding)} grants ${role} to ${describeSubject(subject)}, which no PKO Stack of this program runs as; bind a least-privilege role or remove the binding.`,
                        urn: binding.urn,
                        field: `subjects[${index}]`,
                    });
                }
                continue;
            }
            if (grant.admin === "yes" || grant.openAggregators.length === 0) continue;
            if (binding.subjects !== UNKNOWN && !binding.subjects.some(mayBeServiceAccount)) continue;
            openReported.add(binding);
            if (base && openReported.has(base)) continue;
            const aggregators = grant.openAggregators
                .slice(0, 3)
                .map((r) => `ClusterRole ${typeof r.name === "string" ? JSON.stringify(r.name) : "<name unknown during preview>"}`)
                .join(", ");
            findings.push({
                message: `${describeBinding(binding)} binds ${describeBindingRole(binding, grant)} to service accounts, and it aggregates through ${aggregators}, whose clusterRoleSelectors may match ClusterRoles this program does not declare (the cluster's own or another install's); only the program's roles were judged. Select labels only your own roles carry, or bind a role with explicit rules.`,
                urn: binding.urn,
            });
        }
        return findings;
    },
);
