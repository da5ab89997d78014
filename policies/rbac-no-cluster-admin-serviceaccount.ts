/**
 * rbac-no-cluster-admin-serviceaccount (advisory, stack-level)
 *
 * What: a ClusterRoleBinding or RoleBinding of the program grants `cluster-admin` (or a wildcard
 * ClusterRole/Role of the program) to a service account, or to a group of service accounts, that no
 * PKO Stack of the program runs as. (Bindings to a Stack's account are `pko-stack-no-cluster-admin`.)
 *
 * Why: any pod running as that account can do anything in the cluster; it is usually a leftover of a
 * "cluster-admin for simplicity" setup.
 *
 * Fix: bind a least-privilege role, or remove the binding.
 */
import { Finding, programRule } from "./model/policy";
import { StackIndex, describeSubject, grantsAdmin, rbacModel, stackIdentities, subjectCovers } from "./model/rbac";
import { UNKNOWN } from "./model/values";

export const NAME = "rbac-no-cluster-admin-serviceaccount";

function isServiceAccountSubject(kind: unknown, name: unknown): boolean {
    if (kind === "ServiceAccount") return true;
    if (typeof name !== "string") return false;
    if (kind === "Group") return name === "system:serviceaccounts" || name === "system:authenticated" || name.startsWith("system:serviceaccounts:");
    return kind === "User" && name.startsWith("system:serviceaccount:");
}

export const policy = programRule(
    {
        name: NAME,
        description: "No binding grants cluster-admin or a wildcard-equivalent role to a service account.",
        enforcementLevel: "advisory",
        severity: "high",
        remediationSteps: "Bind a role with only the permissions the workload needs, or remove the binding.",
        url: "https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles",
    },
    (resources) => {
        const model = rbacModel(resources);
        const stacks = new StackIndex(stackIdentities(resources));
        const findings: Finding[] = [];
        for (const binding of model.bindings) {
            if (grantsAdmin(binding, model) !== "yes" || binding.subjects === UNKNOWN) continue;
            const role = binding.roleName === "cluster-admin" ? "cluster-admin" : `wildcard role ${JSON.stringify(binding.roleName)}`;
            for (const [index, subject] of binding.subjects.entries()) {
                if (!isServiceAccountSubject(subject.kind, subject.name)) continue;
                if (stacks.candidates(subject, binding).some((st) => subjectCovers(subject, binding, st.serviceAccount) !== "no")) continue;
                findings.push({
                    message: `${binding.kind} ${JSON.stringify(binding.resourceName)} grants ${role} to ${describeSubject(subject)}, which no PKO Stack of this program runs as; bind a least-privilege role or remove the binding.`,
                    urn: binding.urn,
                    field: `subjects[${index}]`,
                });
            }
        }
        return findings;
    },
);
