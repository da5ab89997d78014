/**
 * pko-stack-auth-delegator (advisory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { governed } from "./model/examples";
import { RuleFinding, programRule } from "./model/policy";
import { StackIndex } from "./model/rbac/stacks";
import { bindingCovers } from "./model/rbac/grants";
import { describeSubject } from "./model/rbac/describe";
import { describeStack } from "./model/stack";
import { judgedWith } from "./model/origin";

export const NAME = "pko-stack-auth-delegator";

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "the service account each PKO v2 Stack (pulumi.com/v1) runs as has a ClusterRoleBinding to\n`system:auth-delegator` in the program.",
            why: "PKO v2 workspace pods authenticate the operator's requests with TokenReview/SubjectAccessReview;\nwithout that binding the Stack never gets past its first reconcile. The Argo CD + PKO guide declares\nit next to every Stack's service account.",
            fix: "add a ClusterRoleBinding of `system:auth-delegator` to the Stack's service account.",
            notes: [
                "A binding patch that adds the account counts, and so does a subject whose name is not resolved during\npreview (it may be the account).",
            ],
            reads: ["pulumi.com/Stack", "core/ServiceAccount", "rbac.authorization.k8s.io/ClusterRoleBinding"],
            readsProduction: false,
            patternSettings: [],
            example: governed,
        },
        enforcementLevel: "advisory",
        severity: "medium",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (resources, _config, ctx) => {
        const model = ctx.views.rbacModel(resources);
        const delegators = model.bindings.filter(
            (b) =>
                b.kind === "ClusterRoleBinding" &&
                b.roleKind === "ClusterRole" &&
                b.roleName === "system:auth-delegator",
        );
        // The Stacks each delegator binding may cover, found through the index rather than by scanning.
        const index = new StackIndex(ctx.views.stackIdentities(resources));
        const covered = new Set<unknown>();
        for (const b of delegators) {
            for (const st of index.coveredBy(b)) if (bindingCovers(b, st.serviceAccount) !== "no") covered.add(st);
        }
        const findings: RuleFinding[] = [];
        for (const st of index.stacks) {
            if (st.view.apiVersion !== "pulumi.com/v1") continue;
            if (covered.has(st)) continue;
            const finding: RuleFinding = {
                message: `${describeStack(st.view)} runs as ${describeSubject({ kind: "ServiceAccount", ...st.serviceAccount })} (${st.source}), which has no system:auth-delegator ClusterRoleBinding ${judgedWith(st.view.urn, ctx.scope?.name).among}; PKO v2 needs it, add one.`,
                urn: st.view.urn,
            };
            if (st.field !== undefined) finding.field = st.field;
            findings.push(finding);
        }
        return findings;
    },
);
