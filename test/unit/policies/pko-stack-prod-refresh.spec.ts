import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-prod-refresh";
import {
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    stackResource,
    ExpectedFinding,
    assertFindings,
} from "../../support/helpers";

const run = (spec: unknown) => runResourcePolicy(policy, stackResource("app", spec));
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-prod-refresh", () => {
    it("passes production with refresh and non-production without", () => {
        assert.deepStrictEqual(check(goodSpec({ refresh: true })), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "a/b/dev" })), []);
    });
    it("flags production without refresh, or with refresh false or unknown", () => {
        assertFindings(run(goodSpec()), one(/does not set spec\.refresh: true/));
        assert.strictEqual(check(goodSpec({ refresh: false })).length, 1);
        assertFindings(run(goodSpec({ refresh: UNKNOWN_WIRE })), one(/unknown during preview/));
    });
});
