/**
 * The pack-wide production settings through the real policy analyzer (@pulumi/policy's gRPC server,
 * driven as the engine drives it): the settings policy runs first in every request and the rules read
 * what it published; a Stack patch is judged by the same policy in AnalyzeStack; with the settings
 * policy disabled the rules fail closed; an unknown property that reaches the pack is reported.
 */
import * as assert from "assert";
import { PACK_ENTRY, REPO_ROOT } from "../../../../support/paths";
import { PackConfig, parsePackConfig, reconcilePackConfig } from "../../../../evaluation/pack-config";
import { Analyzer, WireResource } from "../../../../harness/analyzer";

const project = "settings";
const urn = (type: string, name: string) => `urn:pulumi:dev::${project}::${type}::${name}`;
const STACK = "kubernetes:pulumi.com/v1:Stack";
const PATCH = "kubernetes:pulumi.com/v1:StackPatch";
const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

function stack(name: string, namespace: string, spec: Record<string, unknown>, type = STACK): WireResource {
    return {
        type,
        name,
        urn: urn(type, name),
        properties: {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: name.replace(/-patch$/, ""), namespace },
            spec,
        },
    };
}

const program: WireResource[] = [
    stack("payments-live", "payments", {
        stack: "acme/payments/live",
        projectRepo: "https://github.com/acme/payments",
        commit: SHA,
        refresh: true,
        envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "t", key: "k" } } },
    }),
    stack("payments-live-patch", "payments", { destroyOnFinalize: true }, PATCH),
];

describe("production settings through the real analyzer", function () {
    this.timeout(120000);
    let analyzer: Analyzer;
    before(async () => {
        analyzer = await Analyzer.start(PACK_ENTRY, REPO_ROOT);
    });
    after(() => analyzer?.stop());

    async function rows(config: Record<string, unknown>, engineLike = false): Promise<string[]> {
        // engineLike: the config as the engine would send it (no pko-guard check before), else checked.
        const parsed = parsePackConfig(JSON.stringify(config), "cfg");
        const reconciled: PackConfig = engineLike ? parsed : reconcilePackConfig(analyzer.policies, parsed, "cfg");
        await analyzer.configure(reconciled, { project, stack: "dev" });
        const got = await analyzer.analyze(program);
        return got
            .filter((r) =>
                ["pko-stack-destroy-on-finalize-nonprod", "pko-stack-prod-refresh", "pko-guard-production"].includes(
                    r.policy,
                ),
            )
            .map((r) => `${r.policy} ${r.resource}: ${r.message}`)
            .sort();
    }

    it("the rules read the settings the settings policy published in the same request", async () => {
        assert.deepStrictEqual(await rows({}), [], "acme/payments/live is not production by default");
        const got = await rows({ "pko-guard-production": { productionNamespaces: ["payments"] } });
        assert.strictEqual(got.length, 1, got.join("\n"));
        assert.match(
            got[0],
            /^pko-stack-destroy-on-finalize-nonprod payments-live-patch: StackPatch "payments-live-patch" of Stack "payments-live" .*is production by namespace "payments" and sets spec\.destroyOnFinalize: true/,
        );
    });

    it("with the settings policy disabled, the rules fail closed on what they judge", async () => {
        // A fresh analyzer, as the engine starts one per preview: what an earlier Configure of the same
        // process published for the same URNs would otherwise still be there. (The harness reuses one
        // analyzer across fixtures; sound because it rejects such a config before running anything.)
        analyzer.stop();
        analyzer = await Analyzer.start(PACK_ENTRY, REPO_ROOT);
        const got = await rows({ "pko-guard-production": { enforcementLevel: "disabled" } }, true);
        assert.ok(got.length >= 1, "nothing reported");
        for (const r of got)
            assert.match(
                r,
                /cannot decide whether it is production: the settings policy pko-guard-production is disabled/,
            );
    });

    it("an unknown property the engine lets through is reported by the pack", async () => {
        const got = await rows({ "pko-guard-production": { productionNamespace: ["payments"] } }, true);
        assert.ok(
            got.some((r) =>
                /^pko-guard-production payments-live: .*unknown property "productionNamespace" \(did you mean productionNamespaces\?\)/.test(
                    r,
                ),
            ),
            got.join("\n"),
        );
    });
});
