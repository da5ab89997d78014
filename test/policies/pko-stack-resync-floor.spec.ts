import * as assert from "assert";
import { policy } from "../../policies/pko-stack-resync-floor";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../helpers";

const check = (spec: unknown, config: Record<string, unknown> = {}) => runResourcePolicy(policy, stackResource("app", spec), config).map((r) => r.message);

describe("pko-stack-resync-floor", () => {
    it("passes unset and values at or above the floor", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ resyncFrequencySeconds: 60 })), []);
        assert.deepStrictEqual(check(goodSpec({ resyncFrequencySeconds: "120" }), { minResyncFrequencySeconds: 120 }), []);
    });
    it("flags values below the floor, non-numbers and unknowns", () => {
        assert.match(check(goodSpec({ resyncFrequencySeconds: 30 }))[0], /is 30, below the floor of 60/);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: 100 }), { minResyncFrequencySeconds: 300 }).length, 1);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: "often" })).length, 1);
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: UNKNOWN_WIRE })).length, 1);
    });
    it("never lets the floor drop below PKO's minimum", () => {
        assert.strictEqual(check(goodSpec({ resyncFrequencySeconds: 30 }), { minResyncFrequencySeconds: 10 }).length, 1);
    });
});
