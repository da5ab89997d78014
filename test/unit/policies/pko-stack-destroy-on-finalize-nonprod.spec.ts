import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-destroy-on-finalize-nonprod";
import {
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    secret,
    stackResource,
    ExpectedFinding,
    assertFindings,
} from "../../support/helpers";

/** `settings`: the pack-wide production settings (pko-guard-production's config). */
function run(spec: unknown, metadata: Record<string, unknown> = {}, settings: Record<string, unknown> | null = {}) {
    return runResourcePolicy(policy, stackResource("app", spec, metadata), {}, settings);
}
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-destroy-on-finalize-nonprod", () => {
    it("passes production without destroyOnFinalize, and with it false", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ destroyOnFinalize: false })), []);
    });

    it("passes destroyOnFinalize on non-production stacks", () => {
        for (const stack of [
            "acme/app/dev",
            "acme/app/staging",
            "acme/app/preview",
            "acme/production-tools/dev",
            "acme/app/reprod",
        ]) {
            assert.deepStrictEqual(check(goodSpec({ stack, destroyOnFinalize: true })), [], stack);
        }
    });

    it("flags destroyOnFinalize on production by stack name", () => {
        for (const stack of ["acme/app/prod", "acme/app/production", "acme/app/prd", "acme/app/prod-eu", "prod"]) {
            const m = check(goodSpec({ stack, destroyOnFinalize: true }));
            assert.strictEqual(m.length, 1, stack);
            assert.match(m[0], /is production .*destroyOnFinalize: true/);
        }
    });

    it("accepts the string 'true' as Kubernetes YAML often carries it", () => {
        assert.strictEqual(check(goodSpec({ destroyOnFinalize: "true" })).length, 1);
    });

    it("flags production by label and by configured namespace", () => {
        const dev = goodSpec({ stack: "acme/app/live", destroyOnFinalize: true });
        assert.strictEqual(check(dev).length, 0);
        assert.strictEqual(check(dev, { labels: { env: "prod" } }).length, 1);
        assert.strictEqual(check(dev, { namespace: "payments" }, { productionNamespaces: ["payments"] }).length, 1);
        assert.strictEqual(check(dev, {}, { productionStackPatterns: ["/live$"] }).length, 1);
    });

    it("fails closed when destroyOnFinalize or the production signals are unknown", () => {
        assertFindings(run(goodSpec({ destroyOnFinalize: UNKNOWN_WIRE })), one(/unknown during preview/));
        assertFindings(run(goodSpec({ stack: UNKNOWN_WIRE, destroyOnFinalize: true })), one(/fails closed/));
        assertFindings(
            run(goodSpec({ stack: "a/b/dev", destroyOnFinalize: true }), { labels: UNKNOWN_WIRE }),
            one(/metadata\.labels/),
        );
        assert.strictEqual(check(UNKNOWN_WIRE).length, 1);
    });

    it("sees through secret-wrapped specs", () => {
        assert.strictEqual(check(secret(goodSpec({ destroyOnFinalize: true }))).length, 1);
    });

    it("reports an invalid production pattern instead of throwing", () => {
        const m = check(goodSpec({ destroyOnFinalize: true }), {}, { productionStackPatterns: ["(unclosed"] });
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /not a valid RE2 regular expression/);
    });

    it("says once how the Stack is production, in the pack's one wording", () => {
        const dev = goodSpec({ stack: "acme/app/live", destroyOnFinalize: true });
        assertFindings(
            run(dev, { namespace: "payments" }, { productionNamespaces: ["payments"] }),
            one(/is production by namespace "payments" and/),
        );
        assertFindings(run(dev, { labels: { env: "prod" } }), one(/is production by label env="prod" and/));
        assertFindings(
            run(goodSpec({ destroyOnFinalize: true })),
            one(/is production by spec\.stack "acme\/app\/prod" \(pattern/),
        );
    });

    it("fails closed on every Stack it judges when the settings policy did not run (disabled)", () => {
        const m = check(goodSpec({ stack: "acme/app/dev", destroyOnFinalize: true }), {}, null);
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /pko-guard-production is disabled/);
        assert.deepStrictEqual(check(goodSpec({ stack: "acme/app/dev" }), {}, null), []);
    });

    it("rejects production settings in its own config: they are set once, under pko-guard-production", () => {
        const m = runResourcePolicy(policy, stackResource("app", goodSpec({ destroyOnFinalize: true })), {
            productionNamespaces: ["payments"],
        }).map((r) => r.message);
        assert.strictEqual(m.length, 1);
        assert.match(
            m[0],
            /unknown property "productionNamespaces": productionNamespaces is set once for the whole pack, under pko-guard-production/,
        );
    });
});
