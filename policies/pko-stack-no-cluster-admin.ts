/**
 * pko-stack-no-cluster-admin (mandatory, stack-level)
 *
 * What: no ClusterRoleBinding or RoleBinding of the program gives the service account a PKO Stack runs
 * as `cluster-admin` or anything equivalent to it, judged by what the bound role permits (model/permissions.ts):
 * - every verb on every resource: `*`, or every verb listed, on `*` resources, over one rule or several;
 * - a privilege-escalation path, when it holds cluster-wide (ClusterRoleBinding) or in `kube-system`:
 *   `escalate`/`bind` on roles or clusterroles, `impersonate` on users, groups or serviceaccounts, `create`
 *   on `serviceaccounts/token`, `create` on pods or `create`/`update`/`patch` on workloads (a pod runs as any
 *   account of its namespace). The built-in `admin` and `edit` roles hold such paths, so a ClusterRoleBinding
 *   of either counts; a RoleBinding of `admin` or `edit` in the Stack's own namespace does not.
 * The account follows PKO's merge order: `spec.workspaceTemplate.spec.podTemplate.spec.serviceAccountName`
 * (merged last by the workspace controller), else `spec.workspaceTemplate.spec.serviceAccountName`, else
 * `spec.serviceAccountName`, else `default`, in the Stack's namespace. Group subjects that cover it
 * (`system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:authenticated`) and the
 * `system:serviceaccount:<ns>:<name>` user count too; `system:masters` does not (no service account is
 * ever in it). The `system:auth-delegator` binding PKO v2 needs is fine.
 *
 * Why: the workspace pod runs arbitrary program code from Git; with cluster-admin, whoever can push to
 * that repository owns the cluster. PKO's own v2 migration guide (docs/migration.md, "here's how to assign
 * the `cluster-admin` role") shows a ClusterRoleBinding of `cluster-admin` to the Stack's service account;
 * that is exactly what this rule refuses, whatever the role is called: the guide's binding makes the
 * repository's committers cluster administrators.
 *
 * Fix: bind a role with only the permissions the Stack's program needs, in the namespaces it deploys to,
 * plus the `system:auth-delegator` ClusterRoleBinding PKO v2 workspaces need. For a program that deploys
 * an app into namespace `apps`:
 *
 *   apiVersion: rbac.authorization.k8s.io/v1
 *   kind: Role
 *   metadata: {name: my-stack-deployer, namespace: apps}
 *   rules:
 *   - apiGroups: [""]
 *     resources: [configmaps, services]
 *     verbs: [get, list, watch, create, update, patch, delete]
 *   - apiGroups: [apps]
 *     resources: [deployments]
 *     verbs: [get, list, watch, create, update, patch, delete]
 *   ---
 *   apiVersion: rbac.authorization.k8s.io/v1
 *   kind: RoleBinding
 *   metadata: {name: my-stack-deployer, namespace: apps}
 *   roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: my-stack-deployer}
 *   subjects: [{kind: ServiceAccount, name: my-stack, namespace: default}]
 *
 * Aggregated ClusterRoles are resolved (the rules of every ClusterRole of the program, or built-in
 * one, whose labels match a selector, transitively). Server-side-apply patches of bindings and roles
 * are judged merged with the object they patch (see model/rbac.ts); a patch that grants what its target
 * already grants is not reported twice.
 *
 * Reported on the binding (or the patch), naming the Stack. Fails closed when the role, the subjects, a
 * subject's name (or the namespace of a ClusterRoleBinding's ServiceAccount subject), an aggregation
 * selector or the labels it reads, or the Stack's service account are unknown or missing during preview:
 * a name that is not there yet is never taken for a concrete account.
 */
import { Finding, programRule } from "./model/policy";
import {
    Binding,
    ServiceAccountRef,
    StackIdentity,
    StackIndex,
    adminGrant,
    bindingCovers,
    describeBinding,
    describeBindingRole,
    describeSubject,
    rbacModel,
    stackIdentities,
    workspaceIdentities,
    subjectCovers,
    subjectUnresolved,
} from "./model/rbac";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-no-cluster-admin";

/** Why a binding only may cover a Stack's account, for the fail-closed message. */
function coverDoubts(binding: Binding, st: StackIdentity): string[] {
    if (binding.subjects === UNKNOWN) return ["its subjects are unknown during preview"];
    const out: string[] = [];
    for (const s of binding.subjects) {
        if (subjectCovers(s, binding, st.serviceAccount) === "maybe" && subjectUnresolved(s, binding)) {
            out.push(`its subject ${describeSubject(s)} could not be resolved during preview (name, kind or namespace unknown or missing)`);
        }
    }
    if (out.length === 0 && (st.serviceAccount.name === UNKNOWN || st.serviceAccount.namespace === UNKNOWN)) {
        out.push(`the service account ${describeStack(st.view)} runs as is unknown during preview`);
    }
    return out;
}

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
            "No binding grants cluster-admin, or a role equivalent to it (every verb on every resource, or a privilege-escalation path cluster-wide), to the service account a PKO Stack runs as.",
        enforcementLevel: "mandatory",
        severity: "critical",
        remediationSteps:
            "Bind the Stack's service account to a role with only the permissions its program needs (keep the system:auth-delegator binding PKO requires); never cluster-admin or a '*' on '*' role.",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources) => {
        const model = rbacModel(resources);
        const identities = stackIdentities(resources);
        const stacks = new StackIndex([...identities, ...workspaceIdentities(resources, identities.length)]);
        const findings: Finding[] = [];
        const reported = new Map<Binding, Set<StackIdentity>>();
        for (const binding of model.bindings) {
            const grant = adminGrant(binding, model);
            if (grant.admin === "no") continue;
            const role = describeBindingRole(binding, grant);
            const already = binding.patch?.base ? reported.get(binding.patch.base) : undefined;
            const mine = new Set<StackIdentity>();
            reported.set(binding, mine);
            for (const st of stacks.coveredBy(binding)) {
                const covers = bindingCovers(binding, st.serviceAccount);
                if (covers === "no") continue;
                mine.add(st);
                // A patch that grants what its target already grants adds nothing to report.
                if (already?.has(st)) continue;
                const sa = describeSubject({ kind: "ServiceAccount", ...st.serviceAccount });
                const who = `${sa}, which ${describeStack(st.view)} runs as (${st.source})`;
                if (grant.admin === "yes" && covers === "yes") {
                    findings.push({ message: `${describeBinding(binding)} grants ${role} to ${who}; bind a least-privilege role instead.`, urn: binding.urn, field: subjectField(binding, st.serviceAccount) });
                    continue;
                }
                const doubts = [...(grant.admin === "maybe" && grant.unknown ? [grant.unknown] : []), ...(covers === "maybe" ? coverDoubts(binding, st) : [])];
                findings.push({
                    message: `${describeBinding(binding)} may grant ${role} to ${who}, and the rule fails closed: ${doubts.join("; ") || "values are unknown during preview"}. Make them known at preview time or bind a least-privilege role.`,
                    urn: binding.urn,
                    field: subjectField(binding, st.serviceAccount),
                });
            }
        }
        return findings;
    },
);
