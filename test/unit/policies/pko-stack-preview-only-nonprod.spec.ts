import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-preview-only-nonprod";
import {
    UNKNOWN_WIRE,
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
        assertFindings(run(goodSpec({ preview: true })), one(/never deploy/));
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
