/**
 * `pko-guard check` on public repositories as their users run it: each snapshot under test/data/corpus/<name>/repo
 * is copied into a temporary clone (a git repository whose `origin` is the upstream URL), checked with the
 * arguments its corpus.json gives, and must give exactly the exit code, findings and error lines written there
 * (harness/corpus.ts runs it).
 *
 * After a change that moves a verdict on purpose, `pko-guard test --update test/data/corpus` rewrites the
 * expectations; review the diff of corpus.json like code: every finding in it is one a person agreed with.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { corpusEntries, readCorpusEntry, runCorpusEntry } from "../../../harness/corpus";

const CORPUS = path.join(REPO_ROOT, "test", "data", "corpus");

describe("check on public repositories (test/data/corpus)", function () {
    this.timeout(300000);
    const entries = corpusEntries(CORPUS);

    it("holds at least one repository, each with its licence", () => {
        assert.ok(entries.length > 0);
        for (const dir of entries) assert.ok(fs.existsSync(path.join(dir, "repo", "LICENSE")), dir);
    });

    for (const dir of entries) {
        const name = path.basename(dir);
        it(`${name}: the exit code, findings, error lines and fetched sources its corpus.json expects`, async () => {
            const entry = readCorpusEntry(dir);
            assert.notStrictEqual(
                entry.exit ?? null,
                null,
                `${name}: no expectation yet (pko-guard test --update ${path.relative(REPO_ROOT, dir)}, then review)`,
            );
            assert.deepStrictEqual(await runCorpusEntry(dir, entry), {
                exit: entry.exit,
                stderr: entry.stderr ?? [],
                findings: entry.findings,
                ...((entry.served ?? []).length > 0 ? { sources: entry.sources ?? [] } : {}),
            });
        });
    }
});
