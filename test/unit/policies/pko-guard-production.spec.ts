/**
 * The settings policy: one production classification for the whole pack, read by every
 * production-aware rule; invalid settings reported, never replaced by defaults; user patterns run in
 * linear time (RE2).
 */
import * as assert from "assert";
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { rule as policy } from "../../../policies/pko-guard-production";
import { buildPolicies, policies } from "../../../policies";
import { SETTINGS_POLICY, compileUserPattern } from "../../../policies/model/production";
import {
    ExpectedFinding,
    Reported,
    assertFindings,
    goodSpec,
    runResourcePolicy,
    runStackPolicy,
    stackResource,
} from "../../support/helpers";

/** The production-aware resource rules, with the level each reports at. */
const LEVELS: Record<string, ExpectedFinding["level"]> = {
    "pko-stack-destroy-on-finalize-nonprod": "mandatory",
    "pko-stack-prod-pinned-commit": "mandatory",
    "pko-stack-prod-refresh": "advisory",
    "pko-stack-preview-only-nonprod": "mandatory",
};
const PRODUCTION_AWARE = Object.keys(LEVELS);

/** A Stack every production-aware resource rule reports when (and only when) it is production. */
const risky = stackResource(
    "payments-live",
    {
        stack: "acme/payments/live",
        projectRepo: "https://github.com/acme/app",
        branch: "main",
        destroyOnFinalize: true,
        preview: true,
    },
    { namespace: "payments" },
);

function byRule(settings: Record<string, unknown>): Record<string, Reported[]> {
    const out: Record<string, Reported[]> = {};
    for (const name of PRODUCTION_AWARE) {
        const p = policies.find((x) => x.name === name)!;
        // Resource rules judge the Stack alone; stack-level rules (which see the other Stacks) the program of it.
        out[name] =
            "validateResource" in p
                ? runResourcePolicy(p as ResourceValidationPolicy, risky, {}, settings)
                : runStackPolicy(p as StackValidationPolicy, [risky], {}, settings);
    }
    return out;
}
/** Exactly one finding of rule `name`, on the risky Stack, saying `message`. */
const oneOn = (name: string, message: RegExp): ExpectedFinding[] => [
    { policy: name, level: LEVELS[name], resource: "payments-live", message },
];

describe(SETTINGS_POLICY, () => {
    it("is placed first by the pack, so the analyzer publishes the settings before any rule of a request reads them", () => {
        assert.strictEqual(policies[0].name, SETTINGS_POLICY);
        assert.strictEqual(buildPolicies()[0].name, SETTINGS_POLICY);
        assert.ok("validateResource" in policies[0] && "validateStack" in policies[0]);
    });

    it("reports nothing for valid settings", () => {
        assert.deepStrictEqual(runResourcePolicy(policy, risky, { productionNamespaces: ["payments"] }, null), []);
        assert.deepStrictEqual(runStackPolicy(policy, [risky], {}, null), []);
    });

    it("gives every production-aware rule the same classification, worded once the same way", () => {
        const none = byRule({});
        for (const name of PRODUCTION_AWARE) assert.deepStrictEqual(none[name], [], name);
        const payments = byRule({ productionNamespaces: ["payments"] });
        for (const name of PRODUCTION_AWARE)
            assertFindings(payments[name], oneOn(name, /is production by namespace "payments"/));
        const byLabel = byRule({ productionLabels: { tier: ["critical"] } });
        for (const name of PRODUCTION_AWARE) assert.deepStrictEqual(byLabel[name], [], name);
    });

    it("reads label values in any case, and without a review context judges a Stack by its own fields alone", () => {
        const labelled = stackResource(
            "payments-live",
            { stack: "acme/payments/live" },
            {
                namespace: "payments",
                labels: { environment: "PRODUCTION" },
            },
        );
        const destroy = policies.find((x) => x.name === "pko-stack-destroy-on-finalize-nonprod")!;
        const withDestroy = stackResource(
            "payments-live",
            { stack: "acme/payments/live", destroyOnFinalize: true },
            {
                namespace: "payments",
                labels: { environment: "PRODUCTION" },
            },
        );
        assertFindings(runResourcePolicy(destroy as ResourceValidationPolicy, withDestroy, {}, {}), [
            {
                policy: "pko-stack-destroy-on-finalize-nonprod",
                level: "mandatory",
                resource: "payments-live",
                message: /is production by label environment="PRODUCTION"/,
            },
        ]);
        // The reclassification finding needs an earlier version or another Stack: a preview has neither.
        assert.deepStrictEqual(runResourcePolicy(policy, labelled, {}, null), []);
    });

    it("reports invalid settings on each Stack, and the rules fail closed instead of using defaults", () => {
        for (const [settings, why] of [
            [
                { productionStackPatterns: ["(?=prod)"] },
                /productionStackPatterns entry "\(\?=prod\)" is not a valid RE2 regular expression/,
            ],
            [{ productionStackPatterns: ["(unclosed"] }, /not a valid RE2 regular expression/],
            [
                { productionNamespace: ["payments"] },
                /unknown property "productionNamespace" \(did you mean productionNamespaces\?\)/,
            ],
            [{ productionNamespaces: "payments" }, /productionNamespaces must be a list of strings/],
            [{ reclassificationUsers: "alice" }, /reclassificationUsers must be a list of strings/],
            [{ reclassificationGroups: [1] }, /reclassificationGroups must be a list of strings/],
        ] as const) {
            assertFindings(runResourcePolicy(policy, risky, settings, null), [
                { policy: SETTINGS_POLICY, level: "mandatory", resource: "payments-live", message: why },
            ]);
            for (const [name, reported] of Object.entries(byRule(settings)))
                assertFindings(reported, oneOn(name, /cannot decide whether it is production/));
        }
        // Only Stacks (and their patches) carry the report: other resources are not about production.
        assert.deepStrictEqual(
            runResourcePolicy(
                policy,
                { type: "kubernetes:core/v1:ConfigMap", name: "c", props: {} },
                { productionStackPatterns: ["("] },
                null,
            ),
            [],
        );
    });

    describe("user patterns run in linear time (RE2)", () => {
        const long = "a".repeat(100000) + "!";
        for (const pattern of ["^(a+)+$", "(a|aa)+$", "(.*a){20}$", "^(a|a?)+$"]) {
            it(`${pattern} against 100,000 characters gives the RE2 answer`, () => {
                const compiled = compileUserPattern(pattern);
                assert.ok(typeof compiled !== "string", String(compiled));
                assert.strictEqual(compiled.test(long), false);
                assert.strictEqual(compiled.test("a".repeat(100000)), true);
            });
        }

        it("classifies with a catastrophic pattern on a long spec.stack", () => {
            const stack = `acme/app/${"a".repeat(50000)}!`;
            const long = stackResource("app", goodSpec({ stack, destroyOnFinalize: true }));
            const destroy = policies.find(
                (x) => x.name === "pko-stack-destroy-on-finalize-nonprod",
            ) as ResourceValidationPolicy;
            assert.deepStrictEqual(
                runResourcePolicy(destroy, long, {}, { productionStackPatterns: ["^acme/app/(a+)+$"] }),
                [],
            );
            const hit = stackResource(
                "app",
                goodSpec({ stack: `acme/app/${"a".repeat(50000)}`, destroyOnFinalize: true }),
            );
            assertFindings(runResourcePolicy(destroy, hit, {}, { productionStackPatterns: ["^acme/app/(a+)+$"] }), [
                { policy: destroy.name, level: "mandatory", resource: "app", message: /is production by spec\.stack/ },
            ]);
        });

        it("rejects what RE2 cannot run (lookaround, backreferences) with the reason", () => {
            for (const p of ["(?!dev)prod", "(a)\\1", "(?<=x)y"]) {
                const c = compileUserPattern(p);
                assert.strictEqual(typeof c, "string", p);
                assert.match(
                    c as string,
                    /is not a valid RE2 regular expression .*lookarounds and backreferences are not supported/,
                );
            }
        });
    });
});
