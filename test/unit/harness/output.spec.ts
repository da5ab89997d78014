/** What the harness prints: colour only on a terminal without NO_COLOR, progress only when stderr is a terminal, lines that fit. */
import * as assert from "assert";
import { progress, renderRun, styleFor } from "../../../harness/verdict-table";
import { FixtureVerdict } from "../../../harness/verdict";

const tty = (columns: number) => ({ isTTY: true, columns }) as unknown as NodeJS.WriteStream;
const pipe = { isTTY: false } as unknown as NodeJS.WriteStream;

const verdicts: FixtureVerdict[] = [
    {
        fixture: "ok-fixture",
        description: "",
        outcome: "match",
        checks: [],
        legs: [{ leg: "mock", durationMs: 1, status: "ran", rows: [], checks: [] }],
    },
    {
        fixture: "argocd-cluster-admin-for-simplicity",
        description: "",
        outcome: "mismatch",
        legs: [
            { leg: "mock", durationMs: 1, status: "ran", rows: [], checks: [] },
            { leg: "real", durationMs: 1, status: "skipped", reason: "mock-only: x" },
        ],
        checks: [
            {
                fixture: "argocd-cluster-admin-for-simplicity",
                leg: "mock",
                policy: "rbac-no-cluster-admin-serviceaccount",
                resource: "a-very-long-resource-name-for-a-binding",
                expected: 1,
                got: 0,
                outcome: "mismatch",
                note: "missing: " + "word ".repeat(60),
            },
            {
                fixture: "argocd-cluster-admin-for-simplicity",
                leg: "mock",
                policy: "pko-stack-prod-refresh",
                resource: "x",
                expected: 1,
                got: 1,
                outcome: "match",
            },
        ],
    } as FixtureVerdict,
];

describe("harness output", () => {
    it("colours on a terminal only, and never under NO_COLOR", () => {
        assert.strictEqual(styleFor(tty(100), {}).color, true);
        assert.strictEqual(styleFor(tty(100), { NO_COLOR: "1" }).color, false);
        assert.strictEqual(styleFor(pipe, {}).color, false);
        assert.match(renderRun(verdicts, { verbose: false, style: styleFor(tty(100), {}) }), /\u001b\[31mMISMATCH/);
        assert.doesNotMatch(
            renderRun(verdicts, { verbose: false, style: styleFor(tty(100), { NO_COLOR: "1" }) }),
            /\u001b\[/,
        );
    });

    it("one line per fixture, then only the problems, wrapped to the terminal with names whole", () => {
        const out = renderRun(verdicts, { verbose: false, style: styleFor(tty(80), { NO_COLOR: "1" }) });
        const lines = out.split("\n");
        assert.match(lines[0], /^match +ok-fixture +mock +0 rows$/);
        assert.match(lines[1], /^MISMATCH argocd-cluster-admin-for-simplicity +mock real:skipped +0 rows$/);
        for (const name of [
            "argocd-cluster-admin-for-simplicity",
            "rbac-no-cluster-admin-serviceaccount",
            "a-very-long-resource-name-for-a-binding",
        ])
            assert.ok(out.includes(name), name);
        assert.doesNotMatch(out, /pko-stack-prod-refresh/, "matches are not detailed by default");
        for (const l of lines) assert.ok(l.length <= 80, `${l.length}: ${l}`);
        assert.match(
            renderRun(verdicts, { verbose: true, style: styleFor(pipe, {}) }),
            /pko-stack-prod-refresh/,
            "--verbose shows every check",
        );
    });

    it("progress goes to stderr only when it is a terminal", () => {
        const written: string[] = [];
        const term = {
            isTTY: true,
            columns: 40,
            write: (s: string) => written.push(s),
        } as unknown as NodeJS.WriteStream;
        const p = progress(term);
        p.start("some-fixture", 2, 59);
        p.done();
        assert.match(written[0], /\[harness\] 3\/59 some-fixture/);
        const none: string[] = [];
        const q = progress({ isTTY: false, write: (s: string) => none.push(s) } as unknown as NodeJS.WriteStream);
        q.start("x", 0, 1);
        q.done();
        assert.deepStrictEqual(none, []);
    });
});

describe("check's progress", () => {
    it("says what it is doing on a terminal, clears the line, and writes nothing to a pipe", async () => {
        const { runCheck } = require("../../../cli/check") as typeof import("../../../cli/check");

        const path = require("path") as typeof import("path");
        const { REPO_ROOT } = require("../../../support/paths") as typeof import("../../../support/paths");
        const dir = path.join(REPO_ROOT, "fixtures", "gitops-guide-governed", "manifests");
        const written: string[] = [];
        const term = {
            isTTY: true,
            columns: 200,
            write: (s: string) => written.push(s),
        } as unknown as NodeJS.WriteStream;
        await runCheck({ paths: [dir], failOnAdvisory: false, repoRoot: dir, progress: term });
        assert.ok(
            written.some((w) => /pko-guard check: evaluating \d+ object\(s\) from \d+ file\(s\)/.test(w)),
            JSON.stringify(written),
        );
        assert.strictEqual(written[written.length - 1], "\r\u001b[K");
        const piped: string[] = [];
        await runCheck({
            paths: [dir],
            failOnAdvisory: false,
            repoRoot: dir,
            progress: { isTTY: false, write: (s: string) => piped.push(s) } as unknown as NodeJS.WriteStream,
        });
        assert.deepStrictEqual(piped, []);
    });
});
