import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-resync-floor";
import { productionChannel } from "../../../policies/model/production";
import {
    UNKNOWN_WIRE,
    analyzerProps,
    goodSpec,
    runResourcePolicy,
    stackResource,
    ExpectedFinding,
    assertFindings,
} from "../../support/helpers";

const run = (spec: unknown, config: Record<string, unknown> = {}) =>
    runResourcePolicy(policy, stackResource("app", spec), config);
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-resync-floor", () => {
    it("passes unset and values at or above the floor", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ resyncFrequencySeconds: 60 })), []);
        assert.deepStrictEqual(
            check(goodSpec({ resyncFrequencySeconds: "120" }), { minResyncFrequencySeconds: 120 }),
            [],
        );
    });
    it("flags values below the floor, non-numbers and unknowns", () => {
        assertFindings(run(goodSpec({ resyncFrequencySeconds: 30 })), one(/is 30, below the floor of 60/));
        assert.strictEqual(
            check(goodSpec({ resyncFrequencySeconds: 100 }), { minResyncFrequencySeconds: 300 }).length,
            1,
        );
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: "often" })).length, 1);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: UNKNOWN_WIRE })).length, 1);
    });
    it("never lets the floor drop below PKO's minimum", () => {
        assert.strictEqual(
            check(goodSpec({ resyncFrequencySeconds: 30 }), { minResyncFrequencySeconds: 10 }).length,
            1,
        );
    });
    it("remediates a numeric value below the floor to the floor, and nothing else (patches, unknowns, non-numbers)", () => {
        const remediate = (spec: unknown, config: Record<string, unknown> = {}, type?: string) => {
            const r = stackResource("app", spec, {}, type);
            // Remediation runs before any Analyze of the resource: nothing is published in the pack's channel.
            return policy.build(productionChannel()).remediateResource!({
                type: r.type,
                name: "app",
                urn: `urn:pulumi:dev::p::${r.type}::app`,
                props: analyzerProps(r.props),
                getConfig: () => config,
            } as any) as any;
        };
        assert.strictEqual(remediate(goodSpec({ resyncFrequencySeconds: 10 })).spec.resyncFrequencySeconds, 60);
        assert.strictEqual(
            remediate(goodSpec({ resyncFrequencySeconds: 10 }), { minResyncFrequencySeconds: 300 }).spec
                .resyncFrequencySeconds,
            300,
        );
        assert.strictEqual(
            remediate(goodSpec({ resyncFrequencySeconds: 10 })).spec.commit,
            goodSpec().commit,
            "the rest of the spec is kept",
        );
        assert.strictEqual(remediate(goodSpec({ resyncFrequencySeconds: 60 })), undefined);
        assert.strictEqual(remediate(goodSpec({ resyncFrequencySeconds: UNKNOWN_WIRE })), undefined);
        assert.strictEqual(remediate(goodSpec({ resyncFrequencySeconds: "often" })), undefined);
        assert.strictEqual(
            remediate(goodSpec({ resyncFrequencySeconds: 10 }), { bogus: 1 }),
            undefined,
            "an invalid config fixes nothing",
        );
        assert.strictEqual(
            remediate(goodSpec({ resyncFrequencySeconds: 10 }), {}, "kubernetes:pulumi.com/v1:StackPatch"),
            undefined,
        );
    });
    it("only rules with a safe mechanical fix remediate (never branches, credentials, RBAC)", () => {
        const { policies } = require("../../../policies");
        const remediating = policies
            .filter((p: any) => typeof p.remediateResource === "function")
            .map((p: any) => p.name);
        assert.deepStrictEqual(remediating, ["pko-stack-resync-floor"]);
    });
});
