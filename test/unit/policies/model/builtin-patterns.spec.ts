import * as assert from "assert";
import { RE2JS } from "re2js";
import {
    BUILT_IN_PATTERNS,
    PREVIEW_STACK_PATTERN,
    PRODUCTION_STACK_PATTERN,
} from "../../../../policies/model/builtin-patterns";
import { DEFAULT_PRODUCTION, compilePattern } from "../../../../policies/model/production";
import { DEFAULT_PREVIEW_PATTERNS } from "../../../../policies/pko-stack-preview-only-nonprod";

/**
 * Every string of up to `length` of the pieces: the names the defaults know, their near misses, each separator,
 * digits, a line break (RE2's `$` is the end of the input, never a line's) and a character beyond ASCII.
 */
function inputs(length: number): string[] {
    const pieces = ["prod", "production", "prd", "preview", "pr-", "pr", "p", "/", "-", "_", ".", "7", "x", "\n", "é"];
    let level = [""];
    const all = [""];
    for (let i = 0; i < length; i++) {
        level = level.flatMap((s) => pieces.map((p) => s + p));
        all.push(...level);
    }
    return all;
}

describe("the default patterns, written out (policies/model/builtin-patterns.ts)", () => {
    const cases = inputs(4);

    it("are the pack's defaults", () => {
        assert.deepStrictEqual(DEFAULT_PRODUCTION.productionStackPatterns, [PRODUCTION_STACK_PATTERN]);
        assert.deepStrictEqual(DEFAULT_PREVIEW_PATTERNS, [PREVIEW_STACK_PATTERN]);
        assert.deepStrictEqual([...BUILT_IN_PATTERNS.keys()], [PRODUCTION_STACK_PATTERN, PREVIEW_STACK_PATTERN]);
    });

    for (const [text, built] of BUILT_IN_PATTERNS) {
        it(`${text} answers as RE2 does on ${cases.length} inputs`, () => {
            const re = RE2JS.compile(text);
            const differ = cases.filter((s) => built.test(s) !== re.test(s));
            assert.deepStrictEqual(differ, []);
            // Both answers occur, so the comparison can fail either way.
            assert.ok(cases.some((s) => re.test(s)) && cases.some((s) => !re.test(s)));
        });

        it(`${text} compiles to its written-out matcher`, () => {
            assert.strictEqual(compilePattern(text), built);
        });
    }

    it("compiles any other pattern with RE2", () => {
        const other = compilePattern("(^|/)(prod|production|prd)$");
        assert.ok(other !== undefined && !BUILT_IN_PATTERNS.has("(^|/)(prod|production|prd)$"));
        assert.strictEqual(other.test("acme/app/prod"), true);
        assert.strictEqual(other.test("acme/app/prod-eu"), false);
        assert.strictEqual(compilePattern("(?=x)"), undefined);
    });
});
