/**
 * pko-stack-no-cluster-admin (mandatory, stack-level)
 *
 * What: no ClusterRoleBinding or RoleBinding of the program grants `cluster-admin`, or a ClusterRole/
 * Role of the program whose rules give `*` verbs on `*` resources, to the service account a PKO Stack
 * runs as. That account is the workspace template's `spec.serviceAccountName` when set, else
 * `spec.serviceAccountName`, else `default`, in the Stack's namespace. Group subjects that cover it
 * (`system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:masters`) and the
 * `system:serviceaccount:<ns>:<name>` user count too. The `system:auth-delegator` binding PKO v2 needs
 * is fine.
 *
 * Why: the workspace pod runs arbitrary program code from Git; with cluster-admin, whoever can push to
 * that repository owns the cluster. The Argo CD + PKO guide binds cluster-admin "for simplicity" and
 * says to grant only what the program needs in production.
 *
 * Fix: bind a role with only the permissions the Stack's program needs.
 *
 * Reported on the binding, naming the Stack. Fails closed when the role, the subjects or the Stack's
 * service account are unknown during preview.
 */
import { Finding, programRule } from "./model/policy";
import { Binding, ServiceAccountRef, StackIndex, bindingCovers, describeSubject, grantsAdmin, rbacModel, stackIdentities, subjectCovers } from "./model/rbac";
import { describeStack } from "./model/stack";
import { UNKNOWN, Unknown } from "./model/values";

export const NAME = "pko-stack-no-cluster-admin";

const show = (v: string | Unknown | undefined) => (v === UNKNOWN ? "<unknown during preview>" : JSON.stringify(v ?? ""));

/** The binding's field a finding points at: the first subject that covers the service account. */
function subjectField(binding: Binding, sa: ServiceAccountRef): string {
    if (binding.subjects === UNKNOWN) return "subjects";
    const i = binding.subjects.findIndex((s) => subjectCovers(s, binding, sa) !== "no");
    return i >= 0 ? `subjects[${i}]` : "roleRef";
}

export const policy = programRule(
    {
        name: NAME,
        description:
            "No binding grants cluster-admin or a wildcard-equivalent role to the service account a PKO Stack runs as.",
        enforcementLevel: "mandatory",
        severity: "critical",
        remediationSteps:
            "Bind the Stack's service account to a role with only the permissions its program needs (keep the system:auth-delegator binding PKO requires); never cluster-admin or a '*' on '*' role.",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources) => {
        const model = rbacModel(resources);
        const stacks = new StackIndex(stackIdentities(resources));
        const findings: Finding[] = [];
        for (const binding of model.bindings) {
            const admin = grantsAdmin(binding, model);
            if (admin === "no") continue;
            const role =
                binding.roleName === "cluster-admin" && binding.roleKind === "ClusterRole"
                    ? "cluster-admin"
                    : `${binding.roleKind === UNKNOWN ? "role" : binding.roleKind ?? "role"} ${show(binding.roleName)}${admin === "yes" ? " (wildcard: * verbs on * resources)" : ""}`;
            for (const st of stacks.coveredBy(binding)) {
                const covers = bindingCovers(binding, st.serviceAccount);
                if (covers === "no") continue;
                const sa = describeSubject({ kind: "ServiceAccount", ...st.serviceAccount });
                const message =
                    admin === "yes" && covers === "yes"
                        ? `${binding.kind} ${JSON.stringify(binding.resourceName)} grants ${role} to ${sa}, which ${describeStack(st.view)} runs as (${st.source}); bind a least-privilege role instead.`
                        : `${binding.kind} ${JSON.stringify(binding.resourceName)} may grant ${role} to ${sa}, which ${describeStack(st.view)} runs as (${st.source}): the role or subjects are unknown during preview, so the rule fails closed; make them known at preview time or bind a least-privilege role.`;
                findings.push({ message, urn: binding.urn, field: subjectField(binding, st.serviceAccount) });
            }
        }
        return findings;
    },
);
