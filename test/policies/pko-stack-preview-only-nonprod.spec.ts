import * as assert from "assert";
import { policy } from "../../policies/pko-stack-preview-only-nonprod";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../helpers";

const check = (spec: unknown, config: Record<string, unknown> = {}) => runResourcePolicy(policy, stackResource("app", spec), config).map((r) => r.message);

describe("pko-stack-preview-only-nonprod", () => {
    it("passes preview stacks with preview: true and production without it", () => {
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/preview", preview: true })), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/pr-17", preview: true })), []);
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ stack: "o/p/dev", preview: true })), []);
    });
    it("flags a preview-only stack that would deploy", () => {
        assert.match(check(goodSpec({ stack: "o/p/preview" }))[0], /expected to be preview-only/);
        assert.match(check(goodSpec({ stack: "o/p/pr-3", preview: false }))[0], /would deploy/);
        assert.match(check(goodSpec({ stack: "o/p/pr-3", preview: UNKNOWN_WIRE }))[0], /unknown during preview/);
    });
    it("flags production stuck in preview", () => {
        assert.match(check(goodSpec({ preview: true }))[0], /never deploy/);
    });
    it("uses configured patterns, fails closed on an unknown stack, reports bad patterns", () => {
        assert.strictEqual(check(goodSpec({ stack: "o/p/review-app" }), { previewOnlyStackPatterns: ["review-app$"] }).length, 1);
        assert.strictEqual(check(goodSpec({ stack: UNKNOWN_WIRE })).length, 1);
        assert.strictEqual(check(goodSpec({ stack: UNKNOWN_WIRE, preview: true })).length, 0);
        assert.match(check(goodSpec(), { previewOnlyStackPatterns: ["("] })[0], /not a valid RE2 regular expression/);
    });
});
