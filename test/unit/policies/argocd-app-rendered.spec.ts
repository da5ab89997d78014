import * as assert from "assert";
import { rule as policy } from "../../../policies/argocd-app-rendered";
import { NOT_RENDERED } from "../../../policies/model/origin";
import { ReportedFinding } from "../../../policies/model/policy";
import { assertFindings, runResourcePolicy as runPolicy } from "../../support/helpers";

const APP = "kubernetes:argoproj.io/v1alpha1:Application";
const SET = "kubernetes:argoproj.io/v1alpha1:ApplicationSet";
const argo = (type: string, annotations?: Record<string, unknown>) => ({
    type,
    name: "ledger",
    props: { metadata: { name: "ledger", namespace: "argocd", ...(annotations ? { annotations } : {}) }, spec: {} },
});

describe("argocd-app-rendered", () => {
    it("passes an Application or ApplicationSet that check rendered (no reasons), and other kinds", () => {
        assert.deepStrictEqual(runPolicy(policy, argo(APP)), []);
        assert.deepStrictEqual(runPolicy(policy, argo(SET, { [NOT_RENDERED]: "" })), []);
        assert.deepStrictEqual(runPolicy(policy, argo("kubernetes:core/v1:ConfigMap", { [NOT_RENDERED]: "x" })), []);
    });
    it("reports a Flux Kustomization's and a HelmRelease's reasons, fail-closed", () => {
        const reason = {
            [NOT_RENDERED]: 'spec.sourceRef names Bucket "flux-system/b", a bucket, which check does not read',
        };
        for (const [type, kind] of [
            ["kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization", "Flux Kustomization"],
            ["kubernetes:helm.toolkit.fluxcd.io/v2:HelmRelease", "Flux HelmRelease"],
        ]) {
            assertFindings(runPolicy(policy, argo(type, reason)), [
                {
                    policy: policy.name,
                    level: "mandatory",
                    resource: "ledger",
                    message: new RegExp(`^${kind} "argocd/ledger": spec\\.sourceRef names Bucket .*fails closed\\.$`),
                },
            ]);
            assert.deepStrictEqual(runPolicy(policy, argo(type)), []);
        }
    });
    it("reports each reason once, mandatory and fail-closed, on the object", () => {
        const reasons = {
            [NOT_RENDERED]:
                'spec.generators[0] ("clusters" generator) is not expanded by check\nspec.templatePatch is not applied',
        };
        const findings = runPolicy(policy, argo(SET, reasons));
        assertFindings(findings, [
            {
                policy: policy.name,
                level: "mandatory",
                resource: "ledger",
                message:
                    /^ApplicationSet "argocd\/ledger": spec\.generators\[0\] .*could not evaluate what it applies, so the rule fails closed\.$/,
            },
            {
                policy: policy.name,
                level: "mandatory",
                resource: "ledger",
                message: /^ApplicationSet "argocd\/ledger": spec\.templatePatch is not applied; .*fails closed\.$/,
            },
        ]);
        const data: ReportedFinding[] = [];
        runPolicy(policy, argo(SET, reasons), {}, {}, data);
        assert.deepStrictEqual(
            data.map((f) => f.failClosed),
            [true, true],
        );
    });
    it("drops the reasons about sources whose repoURL is listed in sourcesJudgedElsewhere, and only those", () => {
        const app = {
            type: APP,
            name: "platform",
            props: {
                metadata: {
                    name: "platform",
                    namespace: "argocd",
                    annotations: {
                        [NOT_RENDERED]: [
                            'spec.sources[0] is chart "cert-manager" from a Helm repository, which check does not read (it uses no network)',
                            'spec.sources[1].path "stacks" is not a folder of this repository (another repository\'s path is not read)',
                            'spec.sources[2].plugin: a config management plugin renders "x", which check does not run',
                        ].join("\n"),
                    },
                },
                spec: {
                    sources: [
                        { repoURL: "https://charts.jetstack.io", chart: "cert-manager" },
                        { repoURL: "https://github.com/acme/stacks.git", path: "stacks" },
                        { repoURL: "https://charts.jetstack.io.evil.example", path: "x", plugin: {} },
                    ],
                },
            },
        };
        assert.strictEqual(runPolicy(policy, app).length, 3);
        const findings = runPolicy(policy, app, { sourcesJudgedElsewhere: ["^https://charts\\.jetstack\\.io$"] });
        assertFindings(findings, [
            {
                policy: policy.name,
                level: "mandatory",
                resource: "platform",
                message: /: spec\.sources\[1\]\.path "stacks" is not a folder/,
            },
            {
                policy: policy.name,
                level: "mandatory",
                resource: "platform",
                message: /: spec\.sources\[2\]\.plugin: /,
            },
        ]);
        assert.deepStrictEqual(
            runPolicy(policy, app, {
                sourcesJudgedElsewhere: ["^https://charts\\.jetstack\\.io", "github\\.com/acme/"],
            }),
            [],
        );
        const single = {
            ...app,
            props: { ...app.props, spec: { source: { repoURL: "https://charts.jetstack.io", chart: "cert-manager" } } },
        };
        single.props.metadata.annotations[NOT_RENDERED] =
            'spec.source is chart "cert-manager" from a Helm repository, which check does not read (it uses no network)';
        assert.deepStrictEqual(runPolicy(policy, single, { sourcesJudgedElsewhere: ["jetstack"] }), []);
    });
    it("an invalid sourcesJudgedElsewhere pattern is one config finding, failing closed", () => {
        const reasons = { [NOT_RENDERED]: 'spec.source is chart "c" from a Helm repository' };
        const findings = runPolicy(policy, argo(APP, reasons), { sourcesJudgedElsewhere: ["(?=x)"] });
        assertFindings(findings, [
            {
                policy: policy.name,
                level: "mandatory",
                resource: "ledger",
                message:
                    /^Application "argocd\/ledger": sourcesJudgedElsewhere entry "\(\?=x\)" is not a valid RE2 regular expression.*fix the policy configuration\.$/,
            },
        ]);
    });
    it("bounds the findings of one object", () => {
        const many = Array.from(
            { length: 50 },
            (_, i) => `spec.sources[${i}] is chart "c" from a Helm repository`,
        ).join("\n");
        const findings = runPolicy(policy, argo(APP, { [NOT_RENDERED]: many }));
        assert.strictEqual(findings.length, 21);
        assert.match(findings[20].message, /30 more reasons/);
    });
});
