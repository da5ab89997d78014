import * as assert from "assert";
import { EvalResource, evaluatePack } from "../../../evaluation/evaluate";
import { packPolicies, reconcilePackConfig } from "../../../evaluation/pack-config";
import { rule as policy } from "../../../policies/pko-stack-auth-delegator";
import {
    ExpectedFinding,
    TestResource,
    UNKNOWN_WIRE,
    assertFindings,
    goodSpec,
    runStackPolicy,
    stackResource,
} from "../../support/helpers";

const delegator = (subjects: unknown): TestResource => ({
    type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    name: "d",
    props: { metadata: { name: "d" }, roleRef: { kind: "ClusterRole", name: "system:auth-delegator" }, subjects },
});
const stack = stackResource("app", goodSpec({ serviceAccountName: "deployer" }));
/** The one (advisory) finding on Stack "app". */
const onApp = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource: "app", message },
];

describe("pko-stack-auth-delegator", () => {
    it("passes when the Stack's account has the binding (or may have it)", () => {
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                delegator([{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }]),
            ]),
            [],
        );
        assert.deepStrictEqual(runStackPolicy(policy, [stack, delegator(UNKNOWN_WIRE)]), []);
    });
    it("reports each v1 Stack whose account lacks it, on the Stack", () => {
        const r = runStackPolicy(policy, [
            stack,
            delegator([{ kind: "ServiceAccount", name: "other", namespace: "pulumi" }]),
        ]);
        assertFindings(r, onApp(/ServiceAccount pulumi\/deployer/));
        assert.match(r[0].urn!, /Stack::app$/);
    });
    it("says what the Stack was judged with: the program, the manifests checked, or the cluster", () => {
        for (const [urn, where] of [
            [undefined, /ClusterRoleBinding in this program;/],
            [
                "urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::Stack/pulumi/app",
                /ClusterRoleBinding among the manifests checked with it;/,
            ],
            [
                "urn:pulumi:cluster::live::kubernetes:pulumi.com/v1:Stack::Stack/pulumi/app",
                /ClusterRoleBinding in the cluster;/,
            ],
        ] as const) {
            const r = runStackPolicy(policy, [{ ...stack, urn }]);
            assert.strictEqual(r.length, 1);
            assert.match(r[0].message, where);
        }
    });
    it('says that a Stack naming no namespace is read in "default", as the account it runs as', () => {
        const bare = stackResource("app", goodSpec({ serviceAccountName: "deployer" }), { namespace: undefined });
        const r = runStackPolicy(policy, [bare]);
        assert.strictEqual(r.length, 1);
        assert.match(
            r[0].message,
            /ServiceAccount default\/deployer \(spec\.serviceAccountName; no namespace set, "default" assumed\)/,
        );
    });
    it("skips v1alpha1 (PKO v1) Stacks", () => {
        const old = stackResource("old", goodSpec(), {}, "kubernetes:pulumi.com/v1alpha1:Stack");
        assert.deepStrictEqual(runStackPolicy(policy, [old]), []);
    });
    it("counts a patch that adds the account to a delegator binding, judged merged", () => {
        const other = delegator([{ kind: "ServiceAccount", name: "other", namespace: "pulumi" }]);
        const patch = (subjects: unknown): TestResource => ({
            type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBindingPatch",
            name: "p",
            props: { metadata: { name: "d" }, subjects },
        });
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                other,
                patch([{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }]),
            ]),
            [],
        );
        assertFindings(
            runStackPolicy(policy, [stack, other, patch([{ kind: "ServiceAccount", name: "x", namespace: "pulumi" }])]),
            onApp(/ServiceAccount pulumi\/deployer/),
        );
    });
    it("takes a delegator subject whose name is not resolved yet as possibly the Stack's (advisory: no noise)", () => {
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, delegator([{ kind: "ServiceAccount", namespace: "pulumi" }])]),
            [],
        );
    });
});

describe("pko-stack-auth-delegator: in check, with objects in several scopes (clusters)", () => {
    it("names the cluster whose manifests have no binding for the Stack's account", () => {
        const type = "kubernetes:pulumi.com/v1:Stack";
        const stackIn = (scope: string): EvalResource => ({
            type,
            name: "Stack/pulumi/app",
            urn: `urn:pulumi:check::manifests::${type}::${scope}/Stack/pulumi/app`,
            props: {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "app", namespace: "pulumi" },
                spec: goodSpec({ serviceAccountName: "deployer" }),
            },
            scope,
            scopeName: `in cluster ${JSON.stringify(scope)}`,
        });
        const messages = evaluatePack(
            [stackIn("https://a"), stackIn("https://b")],
            reconcilePackConfig(packPolicies(), {}, "test"),
        )
            .filter((r) => r.policy === policy.name)
            .map((r) => r.message)
            .sort();
        assert.strictEqual(messages.length, 2);
        assert.match(
            messages[0],
            /no system:auth-delegator ClusterRoleBinding among the manifests checked with it in cluster "https:\/\/a";/,
        );
        assert.match(
            messages[1],
            /no system:auth-delegator ClusterRoleBinding among the manifests checked with it in cluster "https:\/\/b";/,
        );
    });
});
