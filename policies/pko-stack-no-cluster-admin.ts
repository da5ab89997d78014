/**
 * pko-stack-no-cluster-admin (mandatory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { governed } from "./model/examples";
import { RuleFinding, programRule } from "./model/policy";
import { Binding, ServiceAccountRef } from "./model/rbac/objects";
import { StackIdentity, StackIndex } from "./model/rbac/stacks";
import { adminGrant, bindingCovers, subjectCovers, subjectUnresolved } from "./model/rbac/grants";
import { describeBinding, describeBindingRole, describeSubject } from "./model/rbac/describe";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";
import { judgedInPreview } from "./model/origin";

export const NAME = "pko-stack-no-cluster-admin";

/** Why a binding only may cover a Stack's account, for the fail-closed message. */
function coverDoubts(binding: Binding, st: StackIdentity, preview: boolean): string[] {
    if (binding.subjects === UNKNOWN) return ["its subjects are unknown during preview"];
    const out: string[] = [];
    for (const s of binding.subjects) {
        if (subjectCovers(s, binding, st.serviceAccount) === "maybe" && subjectUnresolved(s, binding)) {
            out.push(
                `its subject ${describeSubject(s)} could not be resolved (its name, kind or namespace is ${preview ? "missing, or unknown during preview" : "missing"})`,
            );
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

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "no ClusterRoleBinding or RoleBinding of the program gives the service account a PKO Stack runs\nas `cluster-admin`, or a role equivalent to it by what it permits: every verb on every resource, or a\nprivilege-escalation path held cluster-wide or in `kube-system`.",
            why: "the workspace pod runs arbitrary program code from Git; with cluster-admin, whoever can push to\nthat repository owns the cluster. PKO's own v2 migration guide (docs/migration.md, \"here's how to assign\nthe `cluster-admin` role\") shows a ClusterRoleBinding of `cluster-admin` to the Stack's service account;\nthat is exactly what this rule refuses, whatever the role is called: the guide's binding makes the\nrepository's committers cluster administrators.",
            fix: "bind a role with only the permissions the Stack's program needs, in the namespaces it deploys to,\nplus the `system:auth-delegator` ClusterRoleBinding PKO v2 workspaces need (`pko-guard explain` and\ndocs/rules.md show an example).",
            notes: [
                "Equivalent to `cluster-admin` is judged by what the bound role permits:\n- every verb on every resource: `*`, or every verb listed, on `*` resources, over one rule or several;\n- a privilege-escalation path, when it holds cluster-wide (ClusterRoleBinding) or in `kube-system`:\n  `escalate`/`bind` on roles or clusterroles, `impersonate` on users, groups or serviceaccounts, `create`\n  on `serviceaccounts/token`, `create` on pods or `create`/`update`/`patch` on workloads (a pod runs as any\n  account of its namespace), reading `secrets`, `nodes/proxy` (the kubelet's API), `pods/exec`, `attach` or\n  `ephemeralcontainers`, writing admission webhook configurations, or creating and approving CSRs for the\n  API server's client signer. The built-in `admin` and `edit` roles hold such paths, so a ClusterRoleBinding\n  of either counts; a RoleBinding of `admin` or `edit` in the Stack's own namespace does not.",
                "The account follows PKO's merge order: `spec.workspaceTemplate.spec.podTemplate.spec.serviceAccountName`\n(merged last by the workspace controller), else `spec.workspaceTemplate.spec.serviceAccountName`, else\n`spec.serviceAccountName`, else `default`, in the Stack's namespace. Group subjects that cover it\n(`system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:authenticated`) and the\n`system:serviceaccount:<ns>:<name>` user count too; `system:masters` does not (no service account is\never in it). The `system:auth-delegator` binding PKO v2 needs is fine. A Stack is judged as its `StackPatch`es leave\nit, and a `Workspace` object's account the same way.",
                "A least-privilege Role for a program that deploys an app into namespace `apps`:",
                '  apiVersion: rbac.authorization.k8s.io/v1\n  kind: Role\n  metadata: {name: my-stack-deployer, namespace: apps}\n  rules:\n  - apiGroups: [""]\n    resources: [configmaps, services]\n    verbs: [get, list, watch, create, update, patch, delete]\n  - apiGroups: [apps]\n    resources: [deployments]\n    verbs: [get, list, watch, create, update, patch, delete]\n  ---\n  apiVersion: rbac.authorization.k8s.io/v1\n  kind: RoleBinding\n  metadata: {name: my-stack-deployer, namespace: apps}\n  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: my-stack-deployer}\n  subjects: [{kind: ServiceAccount, name: my-stack, namespace: default}]',
                "Aggregated ClusterRoles are resolved (the rules of every ClusterRole of the program, or built-in\none, whose labels match a selector, transitively). Server-side-apply patches of bindings and roles\nare judged merged with the object they patch; a patch that grants what its target\nalready grants is not reported twice.",
                "Reported on the binding (or the patch), naming the Stack. Fails closed when the role, the subjects, a\nsubject's name (or the namespace of a ClusterRoleBinding's ServiceAccount subject), an aggregation\nselector or the labels it reads, or the Stack's service account are missing (or, in a preview, unknown):\na name that is not there yet is never taken for a concrete account.",
            ],
            reads: [
                "pulumi.com/Stack",
                "auto.pulumi.com/Workspace",
                "core/ServiceAccount",
                "rbac.authorization.k8s.io/ClusterRole",
                "rbac.authorization.k8s.io/ClusterRoleBinding",
                "rbac.authorization.k8s.io/Role",
                "rbac.authorization.k8s.io/RoleBinding",
            ],
            readsProduction: false,
            patternSettings: [],
            example: governed,
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources, _config, ctx) => {
        const model = ctx.views.rbacModel(resources);
        const identities = ctx.views.stackIdentities(resources);
        const stacks = new StackIndex([...identities, ...ctx.views.workspaceIdentities(resources, identities.length)]);
        const findings: RuleFinding[] = [];
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
                    findings.push({
                        message: `${describeBinding(binding)} grants ${role} to ${who}; bind a least-privilege role instead.`,
                        urn: binding.urn,
                        field: subjectField(binding, st.serviceAccount),
                    });
                    continue;
                }
                // Values are unknown only in a preview; as written (check, the cluster) they are missing: set them.
                const preview = judgedInPreview(binding.urn);
                const doubts = [
                    ...(grant.admin === "maybe" && grant.unknown ? [grant.unknown] : []),
                    ...(covers === "maybe" ? coverDoubts(binding, st, preview) : []),
                ];
                const settle = preview ? "Make them known at preview time" : "Set them";
                findings.push({
                    message: `${describeBinding(binding)} may grant ${role} to ${who}, and the rule fails closed: ${doubts.join("; ") || `values are ${preview ? "unknown during preview" : "missing"}`}. ${settle} or bind a least-privilege role.`,
                    urn: binding.urn,
                    field: subjectField(binding, st.serviceAccount),
                });
            }
        }
        return findings;
    },
);
