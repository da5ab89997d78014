/**
 * A corpus entry that serves a chart repository (`served`, harness/corpus-charts.ts): `pko-guard test --update`'s
 * path (updateCorpusEntry) packages the entry's stand-in chart with the real helm, serves it on loopback, points
 * the clone's mention of the upstream URL at it, and writes what check gave: the fetched chart's Stack judged, and
 * the source recorded under its upstream URL. The same entry without `served` is judged offline, as before.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CorpusEntry, readCorpusEntry, runCorpusEntry, updateCorpusEntry } from "../../../harness/corpus";
import { writeChart } from "../../support/source-servers";

const UPSTREAM = "https://charts.example.com/stable";

describe("corpus entries with stand-in chart repositories", function () {
    this.timeout(180_000);
    let root: string;
    let entry: string;

    beforeEach(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-corpus-served-"));
        entry = path.join(root, "platform");
        const repo = path.join(entry, "repo");
        fs.mkdirSync(path.join(repo, "deploy"), { recursive: true });
        fs.writeFileSync(path.join(repo, "LICENSE"), "test\n");
        fs.writeFileSync(
            path.join(repo, "deploy", "Chart.yaml"),
            `apiVersion: v2\nname: deploy\nversion: 0.1.0\ndependencies:\n  - name: ledger\n    version: 1.2.0\n    repository: ${UPSTREAM}\n`,
        );
        const chart = writeChart(root, "ledger", "1.2.0");
        fs.cpSync(chart, path.join(entry, "charts", "ledger"), { recursive: true });
        const written: CorpusEntry = {
            repository: "https://git.example.com/team/platform",
            commit: "0000000000000000000000000000000000000000",
            served: [{ url: UPSTREAM, charts: "charts" }],
            args: ["."],
        };
        fs.writeFileSync(path.join(entry, "corpus.json"), JSON.stringify(written, null, 4) + "\n");
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("writes the fetched chart's findings and its source under the upstream URL", async () => {
        assert.strictEqual(await updateCorpusEntry(entry), true);
        const got = readCorpusEntry(entry);
        assert.strictEqual(got.exit, 1);
        assert.deepStrictEqual(got.stderr, []);
        // writeChart's production Stack follows a branch: the rules on it, at the fetched chart's own lines.
        const at = (line: number) => `${UPSTREAM}#ledger@1.2.0/templates/stack.yaml:${line}`;
        assert.deepStrictEqual(got.findings, [
            { status: "advisory", rule: "pko-stack-auth-delegator", object: "Stack/ledger", location: at(1) },
            { status: "blocking", rule: "pko-stack-prod-pinned-commit", object: "Stack/ledger", location: at(8) },
            { status: "advisory", rule: "pko-stack-prod-refresh", object: "Stack/ledger", location: at(5) },
        ]);
        assert.deepStrictEqual(got.sources, [
            { kind: "helm", url: `${UPSTREAM}#ledger`, ref: "1.2.0", resolved: "1.2.0", floating: false },
        ]);
        assert.strictEqual(await updateCorpusEntry(entry), false);
    });

    it("without served, runs offline: the dependency is not read (exit 2, one line), no sources", async () => {
        const e = readCorpusEntry(entry);
        delete e.served;
        const got = await runCorpusEntry(entry, e);
        assert.strictEqual(got.exit, 2);
        assert.strictEqual(got.stderr.length, 1);
        assert.match(got.stderr[0], /deploy/);
        assert.strictEqual(got.sources, undefined);
    });
});
