/**
 * The differential test of gitops/argocd/path-match.ts, pko-guard's one `path.Match`: every case of
 * test/data/path-match/cases.json is Go's own answer (generate.sh runs Go's path.Match; PROVENANCE.md), and the
 * TypeScript implementation must give the same match and the same error for each, malformed patterns included.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { BAD_PATTERN, compilePathPattern, pathMatch } from "../../../../gitops/argocd/path-match";
import { REPO_ROOT } from "../../../../support/paths";

interface Table {
    generator: string;
    go: string;
    cases: Array<[string, string, boolean, string | null]>;
}

const table = JSON.parse(
    fs.readFileSync(path.join(REPO_ROOT, "test", "data", "path-match", "cases.json"), "utf8"),
) as Table;

describe("path.Match matches Go's (differential)", () => {
    it("has a table from Go with matches, mismatches and malformed patterns", () => {
        assert.match(table.go, /^go1\./);
        const count = (f: (c: Table["cases"][number]) => boolean) => table.cases.filter(f).length;
        assert.ok(count((c) => c[2]) >= 500, "matches");
        assert.ok(count((c) => !c[2] && c[3] === null) >= 500, "mismatches");
        assert.ok(count((c) => c[3] !== null) >= 500, "malformed");
        assert.ok(
            table.cases.every((c) => c[3] === null || c[3] === BAD_PATTERN),
            "Go's only error is ErrBadPattern",
        );
    });

    it("gives Go's answer on every case", () => {
        const wrong = table.cases.filter(([pattern, name, match, error]) => {
            const got = pathMatch(pattern, name);
            return got.matched !== match || (got.error ?? null) !== error;
        });
        assert.deepStrictEqual(wrong.slice(0, 20), [], `${wrong.length} of ${table.cases.length} cases differ from Go`);
    });

    it("knows a malformed pattern whatever the name", () => {
        for (const [pattern, , , error] of table.cases)
            assert.strictEqual(compilePathPattern(pattern) === undefined, error !== null, pattern);
    });

    it("covers Go's quirks the table holds", () => {
        const has = (p: string, n: string, m: boolean) =>
            table.cases.some((c) => c[0] === p && c[1] === n && c[2] === m && c[3] === null);
        // A star skips bytes, so two `?` can take the two trailing bytes of one three-byte character.
        assert.ok(has("*??", "€", true));
        // A class matches `/`; `*` and `?` never do.
        assert.ok(has("a[/]b", "a/b", true));
        assert.ok(has("?", "/", false));
        assert.ok(has("*", "a/b", false));
    });
});
