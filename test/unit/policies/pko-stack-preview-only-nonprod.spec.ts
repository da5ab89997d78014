import * as assert from "assert";
import { EvalResource, evaluatePack } from "../../../evaluation/evaluate";
import { packPolicies, reconcilePackConfig } from "../../../evaluation/pack-config";
import { rule as policy } from "../../../policies/pko-stack-preview-only-nonprod";
import {
    UNKNOWN_WIRE,
    goodSpec,
    runStackPolicy,
    stackResource,
    ExpectedFinding,
    TestResource,
    assertFindings,
} from "../../support/helpers";

const run = (spec: unknown, config: Record<string, unknown> = {}) =>
    runStackPolicy(policy, [stackResource("app", spec)], config);
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-preview-only-nonprod", () => {
    it("passes preview stacks with preview: true and production without it", () => {
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/preview", preview: true })), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/pr-17", preview: true })), []);
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/dev", preview: true })), []);
    });
    it("flags a preview-only stack that would deploy", () => {
        assertFindings(run(goodSpec({ stack: "o/p/preview" })), one(/expected to be preview-only/));
        assertFindings(run(goodSpec({ stack: "o/p/pr-3", preview: false })), one(/would deploy/));
        assertFindings(run(goodSpec({ stack: "o/p/pr-3", preview: UNKNOWN_WIRE })), one(/unknown during preview/));
    });
    it("flags production stuck in preview", () => {
        assertFindings(
            run(goodSpec({ preview: true })),
            one(
                /^Stack "app" \(stack "acme\/app\/prod"\) is production by spec\.stack .* but sets spec\.preview: true, so it never deploys, and no Stack judged with it deploys this stack\. If it previews a Stack deployed elsewhere \(a preview twin\), keep spec\.preview: true and list its name in previewTwinNames; if it is meant to deploy, first make sure no other Stack deploys this stack, then set spec\.preview: false\.$/,
            ),
        );
        assert.ok(!check(goodSpec({ preview: true }))[0].includes("remove spec.preview"));
        assertFindings(
            run(goodSpec({ preview: UNKNOWN_WIRE })),
            one(/spec\.preview is unknown during preview, so it may never deploy; make spec\.preview known\.$/),
        );
    });
    it("recognises a preview twin: a preview: true Stack of the stack another Stack deploys", () => {
        // PKO's examples/preview-demo: two Stacks on one Pulumi stack, the second with preview: true.
        const twin = stackResource("app-next", goodSpec({ preview: true, commit: "c".repeat(40) }));
        const deployer = stackResource("app", goodSpec());
        assert.deepStrictEqual(runStackPolicy(policy, [deployer, twin]), []);
        assert.deepStrictEqual(runStackPolicy(policy, [twin, deployer]), []);
        // Another stack's deployer, or a deployer that is itself preview-only, is no twin.
        const other = stackResource("other", goodSpec({ stack: "acme/other/prod" }));
        assert.strictEqual(runStackPolicy(policy, [other, twin]).length, 1);
        const alsoPreview = stackResource("app", goodSpec({ preview: true }));
        assert.strictEqual(runStackPolicy(policy, [alsoPreview, twin]).length, 2);
        // A patch that turns the deployer into a preview Stack leaves the twin alone, and is reported itself.
        const patch: TestResource = {
            type: "kubernetes:pulumi.com/v1:StackPatch",
            name: "app-patch",
            props: {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "app", namespace: "pulumi" },
                spec: { preview: true },
            },
        };
        const r = runStackPolicy(policy, [deployer, twin, patch]);
        assert.deepStrictEqual(r.map((f) => f.resource).sort(), ["app-next", "app-patch"]);
    });
    it("recognises a twin in another namespace of the program, but not one on another state backend", () => {
        const deployer = stackResource("app", goodSpec(), { namespace: "prod" });
        const twin = stackResource("app-next", goodSpec({ preview: true }), { namespace: "previews" });
        assert.deepStrictEqual(runStackPolicy(policy, [deployer, twin]), []);
        // One spec.stack in two backends is two Pulumi stacks: the preview Stack's own one deploys nowhere.
        const elsewhere = stackResource("app-next", goodSpec({ preview: true, backend: "s3://other-state" }));
        assert.deepStrictEqual(
            runStackPolicy(policy, [deployer, elsewhere]).map((f) => f.resource),
            ["app-next"],
        );
        const sameBackend = (name: string, extra: Record<string, unknown>) =>
            stackResource(name, goodSpec({ backend: "s3://state", ...extra }));
        assert.deepStrictEqual(
            runStackPolicy(policy, [sameBackend("app", {}), sameBackend("app-next", { preview: true })]),
            [],
        );
        // A backend unknown during preview is never taken for the deployer's: fail closed.
        const unknown = stackResource("app-next", goodSpec({ preview: true, backend: UNKNOWN_WIRE }));
        assert.strictEqual(runStackPolicy(policy, [deployer, unknown]).length, 1);
    });
    it("in check, sees a twin's deployer only in the cluster the twin lands in (a scope), else the setting", () => {
        const object = (name: string, spec: Record<string, unknown>, scope: string): EvalResource => ({
            type: "kubernetes:pulumi.com/v1:Stack",
            name: `Stack/pulumi/${name}`,
            urn: `urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::${scope}/Stack/pulumi/${name}`,
            props: { apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name, namespace: "pulumi" }, spec },
            scope,
            scopeName: `in cluster ${JSON.stringify(scope)}`,
        });
        const judged = (twinCluster: string, config: Record<string, unknown> = {}) =>
            evaluatePack(
                [
                    object("app", goodSpec(), "https://prod"),
                    object("app-next", goodSpec({ preview: true }), twinCluster),
                ],
                reconcilePackConfig(packPolicies(), { [policy.name]: { properties: config } }, "test"),
            )
                .filter((r) => r.policy === policy.name)
                .map((r) => `${r.resource}: ${r.message}`);
        assert.deepStrictEqual(judged("https://prod"), []);
        const apart = judged("https://staging");
        assert.strictEqual(apart.length, 1);
        assert.match(
            apart[0],
            /^https:\/\/staging\/Stack\/pulumi\/app-next: .*no Stack judged with it in cluster "https:\/\/staging" deploys this stack \(a Stack in cluster "https:\/\/prod" deploys it, but it is not judged with this one\)\. If it/,
        );
        // A deployer of another Pulumi stack elsewhere is not named.
        const other = evaluatePack(
            [
                object("app", goodSpec({ stack: "acme/other/prod" }), "https://prod"),
                object("app-next", goodSpec({ preview: true }), "https://staging"),
            ],
            reconcilePackConfig(packPolicies(), {}, "test"),
        ).filter((r) => r.policy === policy.name);
        assert.strictEqual(other.length, 1);
        assert.match(
            other[0].message,
            /no Stack judged with it in cluster "https:\/\/staging" deploys this stack\. If it/,
        );
        assert.deepStrictEqual(judged("https://staging", { previewTwinNames: ["-next$"] }), []);
    });
    it("lets a setting declare twins whose deployer is elsewhere, by name", () => {
        const twin = goodSpec({ preview: true });
        assert.deepStrictEqual(check(twin, { previewTwinNames: ["^app$"] }), []);
        assert.strictEqual(check(twin, { previewTwinNames: ["-next$"] }).length, 1);
        assertFindings(run(twin, { previewTwinNames: ["("] }), one(/previewTwinNames entry .* not a valid RE2/));
    });
    it("uses configured patterns, fails closed on an unknown stack, reports bad patterns", () => {
        assert.strictEqual(
            check(goodSpec({ stack: "o/p/review-app" }), { previewOnlyStackPatterns: ["review-app$"] }).length,
            1,
        );
        assert.strictEqual(check(goodSpec({ stack: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(goodSpec({ stack: UNKNOWN_WIRE, preview: true })).length, 0);
        assertFindings(run(goodSpec(), { previewOnlyStackPatterns: ["("] }), one(/not a valid RE2 regular expression/));
    });
});
