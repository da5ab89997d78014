import * as assert from "assert";
import { policy } from "../../policies/pko-stack-resync-floor";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource, ExpectedFinding, assertFindings } from "../helpers";

const run = (spec: unknown, config: Record<string, unknown> = {}) => runResourcePolicy(policy, stackResource("app", spec), config);
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [{ policy: policy.name, level: "advisory", resource: "app", message }];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-resync-floor", () => {
    it("passes unset and values at or above the floor", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ resyncFrequencySeconds: 60 })), []);
        assert.deepStrictEqual(check(goodSpec({ resyncFrequencySeconds: "120" }), { minResyncFrequencySeconds: 120 }), []);
    });
    it("flags values below the floor, non-numbers and unknowns", () => {
        assertFindings(run(goodSpec({ resyncFrequencySeconds: 30 })), one(/is 30, below the floor of 60/));
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: 100 }), { minResyncFrequencySeconds: 300 }).length, 1);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: "often" })).length, 1);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: UNKNOWN_WIRE })).length, 1);
    });
    it("never lets the floor drop below PKO's minimum", () => {
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: 30 }), { minResyncFrequencySeconds: 10 }).length, 1);
    });
});
