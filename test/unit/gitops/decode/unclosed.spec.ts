/**
 * An unclosed flow collection or quoted string is reported at its opening token: the scanner finds what is still
 * open where the parser gave up, and ignores braces and quotes that are text (plain scalars, comments, block
 * scalars, escaped or doubled quotes).
 */
import * as assert from "assert";
import { unclosedAt, unclosedReason } from "../../../../gitops/decode/unclosed";

/** The line and column (1-based) of what is open at the end of `text`. */
function openAt(text: string): [number, number, string] | undefined {
    const u = unclosedAt(text, text.length);
    if (!u) return undefined;
    const before = text.slice(0, u.offset);
    return [before.split("\n").length, u.offset - before.lastIndexOf("\n"), u.what];
}

describe("where an unclosed token opens", () => {
    it("finds a flow mapping, a flow sequence, a quoted string left open, the innermost first", () => {
        assert.deepStrictEqual(openAt("kind: X\ndata: {a: 1\nother: 2\n"), [2, 7, "{"]);
        assert.deepStrictEqual(openAt("items: [a, b\nnext: 1\n"), [1, 8, "["]);
        assert.deepStrictEqual(openAt("a: {b: [1, 2], c: {d: 1\n"), [1, 19, "{"]);
        assert.deepStrictEqual(openAt('name: "x\nkind: Y\n'), [1, 7, '"']);
        assert.deepStrictEqual(openAt("- 'it''s\n- b\n"), [1, 3, "'"]);
    });

    it("ignores what is text: plain scalars, comments, block scalars, escapes, closed pairs", () => {
        for (const text of [
            "a: x{y\nb: [1, 2]\n",
            "a: 1 # {not a flow\nb: '#{x}'\n",
            'script: |\n  if [ -n "$x" ]; then {\n  fi\nnext: {a: 1}\n',
            "a: \"quote \\\" inside\"\nb: 'it''s'\n",
            'image: "{{ .Values.image }}"\nlist: [{a: 1}, {b: [2]}]\n',
        ])
            assert.strictEqual(unclosedAt(text, text.length), undefined, text);
    });

    it("says what is open in a fixed reason, quoting nothing of the document", () => {
        assert.deepStrictEqual((["{", "[", '"', "'"] as const).map(unclosedReason), [
            'a flow mapping ("{") that is never closed',
            'a flow sequence ("[") that is never closed',
            'a quoted string (") that is never closed',
            "a quoted string (') that is never closed",
        ]);
    });
});
