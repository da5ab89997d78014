import * as assert from "assert";
import { policy } from "../../policies/pko-stack-prod-refresh";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../helpers";

const check = (spec: unknown) => runResourcePolicy(policy, stackResource("app", spec)).map((r) => r.message);

describe("pko-stack-prod-refresh", () => {
    it("passes production with refresh and non-production without", () => {
        assert.deepStrictEqual(check(goodSpec({ refresh: true })), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "a/b/dev" })), []);
    });
    it("flags production without refresh, or with refresh false or unknown", () => {
        assert.match(check(goodSpec())[0], /does not set spec\.refresh: true/);
        assert.strictEqual(check(goodSpec({ refresh: false })).length, 1);
        assert.match(check(goodSpec({ refresh: UNKNOWN_WIRE }))[0], /unknown during preview/);
    });
});
