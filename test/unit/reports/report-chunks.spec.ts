/**
 * Reports are written in pieces, never as one string (a large repository's report is more than V8's 2^29-24
 * characters): JSON and SARIF come from reports/json-chunks.ts, and the file written is byte for byte what
 * JSON.stringify makes of the same report (same indentation, key order, escaping). Checked on the subjects the
 * report specs use (a gate's findings in a user's repository, a harness verdict, a run that could not judge), on
 * generated values of every kind JSON.stringify takes, and on a subject of several megabytes whose strings are
 * hostile (quotes, backslashes, U+2028/U+2029, lone surrogates, control characters, strings longer than a piece).
 * The terminal table, the full table (cli-table3, a part of the rows at a time), the GitHub workflow commands and
 * step summary are pieces too; no piece of any output grows with the number of findings.
 */
import * as assert from "assert";
import fc from "fast-check";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { judgeRows } from "../../../evaluation/judge";
import { locateRows } from "../../../engine/source-locations";
import { row } from "../../../evaluation/rows";
import { jsonChunks } from "../../../reports/json-chunks";
import { jsonReportChunks, renderJson } from "../../../reports/json";
import { renderSarif, sarifChunks } from "../../../reports/sarif";
import { FixtureSubject, ProjectSubject, ReportSubject, errorProjectSubject } from "../../../reports/subject";
import { STEP_SUMMARY_BYTES, stepSummaryChunks, workflowCommandChunks } from "../../../reports/github";
import { findingsChunks, fullTableChunks } from "../../../reports/table";
import { reportChunks, writeChunks, writeReports } from "../../../reports/write";

const URN = "urn:pulumi:dev::shop::kubernetes:pulumi.com/v1:Stack::";

/** Every piece of a report, in order. */
function pieces(chunks: Iterable<string>): string[] {
    return [...chunks];
}

/** Strings no report escapes by accident: JSON's own characters, line separators, lone surrogates, controls. */
const HOSTILE = [
    '"',
    "\\",
    "\u2028",
    "\u2029",
    "\ud800",
    "\udfff",
    "\udbff\udfff",
    "\u0000",
    "\u001f",
    "\u007f",
    "\b\f\n\r\t",
    "</script>",
    "😀",
    "é",
    "%0A::error::",
];

function hostile(i: number): string {
    return `${HOSTILE[i % HOSTILE.length]}x${i}${HOSTILE[(i * 7) % HOSTILE.length]}${'\\"'.repeat(i % 5)}${HOSTILE[(i * 3) % HOSTILE.length]}`;
}

describe("reports written in pieces", () => {
    let dir: string;
    before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-report-chunks-"));
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** The subjects of the report specs: a gate's findings in a user's repository, a harness verdict, an error run. */
    function specSubjects(): ReportSubject[] {
        const program = path.join(dir, "repo", "infra", "pulumi");
        fs.mkdirSync(path.join(dir, "repo", ".git"), { recursive: true });
        fs.mkdirSync(program, { recursive: true });
        fs.writeFileSync(
            path.join(program, "index.ts"),
            ['pkoStack("payments", { spec: {} });', 'pkoStack("legacy-prod", { spec: {} });', ""].join("\n"),
        );
        const rows = [
            row(
                "pko-stack-prod-pinned-commit",
                `${URN}payments`,
                "mandatory",
                'Stack "payments" is production but tracks branch "main"; set spec.commit to the full 40-hex SHA.',
            ),
            row(
                "pko-stack-prod-refresh",
                `${URN}payments`,
                "advisory",
                "Stack is production and does not set spec.refresh: true; set it.",
            ),
            row(
                "pko-stack-prod-pinned-commit",
                `${URN}legacy-prod`,
                "mandatory",
                "[waived: moving in Q1; until 2099-12-31] Stack legacy-prod tracks a branch.",
            ),
        ];
        const gate: ProjectSubject = {
            kind: "project",
            name: "shop",
            stack: "dev",
            description: "gate",
            programFile: path.join(program, "index.ts"),
            findings: locateRows(judgeRows(rows, false), program, "index.ts"),
            notices: [
                {
                    level: "advisory",
                    policy: "pko-stack-prod-refresh",
                    message: "unused waiver for ghost (x): it matched no finding",
                },
            ],
            outcome: "fail",
            durationMs: 5,
        };
        const fixture: FixtureSubject = {
            kind: "fixture",
            name: "creds-git-auth",
            description: "expects <on purpose> & escapes",
            programFile: path.join(program, "index.ts"),
            verdict: {
                fixture: "creds-git-auth",
                description: "expects <on purpose> & escapes",
                outcome: "mismatch",
                legs: [
                    { leg: "mock", durationMs: 3, status: "ran", rows },
                    { leg: "real", durationMs: 0, status: "skipped", reason: "no toolchain" },
                    { leg: "deploy", durationMs: 1, status: "error", message: 'apply failed: "quoted"\nsecond line' },
                ],
                checks: [
                    {
                        fixture: "creds-git-auth",
                        leg: "mock",
                        policy: "pko-stack-prod-pinned-commit",
                        resource: "payments",
                        expected: 7,
                        got: 2,
                        outcome: "mismatch",
                    },
                    {
                        fixture: "creds-git-auth",
                        leg: "deploy",
                        check: "applied",
                        resource: "",
                        expected: 1,
                        got: 0,
                        outcome: "error",
                        note: "the apply failed",
                    },
                ],
            },
        };
        const failed = errorProjectSubject(
            { name: "shop", stack: "prod", description: "check", programFile: path.join(program, "index.ts") },
            "cannot read manifests: EACCES",
            9,
        );
        return [gate, fixture, failed];
    }

    /** A check of a large repository: `n` findings with hostile strings, a few longer than a piece when `long`. */
    function bigSubject(n: number, long = true): ProjectSubject {
        const programFile = path.join(dir, "big", "kustomization.yaml");
        return {
            kind: "project",
            name: `big ${hostile(1)}`,
            stack: "",
            description: hostile(2),
            programFile,
            root: path.join(dir, "big"),
            findings: Array.from({ length: n }, (_, i) => ({
                policy: i % 3 ? "pko-stack-prod-refresh" : "pko-stack-prod-pinned-commit",
                resource: `Stack/team-${i % 37}/${hostile(i)}`,
                urn: "",
                type: "pulumi.com/v1/Stack",
                level: i % 3 ? ("advisory" as const) : ("mandatory" as const),
                message:
                    long && i % 4000 === 17
                        ? `long ${'\ud83d\ude00\\"\u2028'.repeat(40000)}\ud800 end`
                        : `finding ${i}: ${hostile(i * 5)} ${"y".repeat(i % 300)}`,
                status: i % 5 === 0 ? ("waived" as const) : i % 3 ? ("advisory" as const) : ("blocking" as const),
                ...(i % 5 === 0
                    ? { waiver: { reason: hostile(i + 1), ...(i % 2 ? { expires: "2099-12-31" } : {}) } }
                    : {}),
                // a path the file system gave: UTF-8, so no lone surrogate (the rest of its hostile characters stay)
                file: path.join(dir, "big", `apps/${hostile(i % 11).replace(/[\ud800-\udfff]/g, "?")}/stack.yaml`),
                line: 1 + (i % 90),
                column: 3,
                ...(i % 2 ? { syncedBy: `Application argocd/${hostile(i)}` } : {}),
            })),
            notices: [{ level: "advisory", message: hostile(3) }],
            outcome: "fail",
            durationMs: 1,
        };
    }

    it("jsonChunks gives JSON.stringify's text of any value it takes (toJSON, wrappers, undefined, functions, symbols, sparse arrays)", () => {
        const value = fc.anything({
            maxDepth: 4,
            withBoxedValues: true,
            withDate: true,
            withNullPrototype: true,
            withObjectString: true,
            withSparseArray: true,
            withTypedArray: true,
            withMap: true,
            withSet: true,
        });
        fc.assert(
            fc.property(
                fc.oneof(value, fc.dictionary(fc.string(), value)),
                fc.constantFrom(0, 2, 4, 11),
                (v, indent) => {
                    const expected = JSON.stringify(v, null, indent);
                    if (expected === undefined) assert.throws(() => [...jsonChunks(v, indent)], TypeError);
                    else assert.strictEqual(pieces(jsonChunks(v, indent)).join(""), expected);
                },
            ),
            { numRuns: 500 },
        );
    });

    it("jsonChunks calls toJSON with the key or index JSON.stringify passes, leaves out what it leaves out, and throws where it throws", () => {
        const keyed = { toJSON: (key: string) => `key=${key}` };
        const value = {
            a: [
                keyed,
                undefined,
                () => 1,
                Symbol("s"),
                keyed,
                new Date(0),
                Object(5),
                Object("s"),
                Object(false),
                NaN,
                -0,
                Infinity,
            ],
            b: keyed,
            skipped: undefined,
            fn: () => 1,
            sym: Symbol("s"),
            nested: { toJSON: () => ({ inner: keyed, list: [keyed] }) },
            long: [{ toJSON: () => "x".repeat(200000) }],
            // an array's own toJSON is called with its index in the whole array, not in a run of its neighbours
            keyedArrays: Array.from({ length: 40 }, (_, i) =>
                i % 7 === 3 ? Object.assign([i], { toJSON: (key: string) => `array at ${key}` }) : ["y".repeat(20000)],
            ),
            [Symbol("hidden")]: 1,
            2: "integer keys first",
        };
        for (const indent of [0, 2])
            assert.strictEqual(pieces(jsonChunks(value, indent)).join(""), JSON.stringify(value, null, indent));
        let deep: unknown = { leaf: "deep" };
        for (let i = 0; i < 300; i++) deep = i % 2 ? [deep, i] : { i, deep };
        assert.strictEqual(pieces(jsonChunks(deep, 2)).join(""), JSON.stringify(deep, null, 2));
        const cyclic: Record<string, unknown> = { a: [1, 2] };
        (cyclic.a as unknown[]).push(cyclic);
        assert.throws(() => [...jsonChunks(cyclic, 2)], TypeError);
        const selfish: unknown[] = [];
        selfish.push(selfish);
        assert.throws(() => [...jsonChunks({ selfish }, 2)], TypeError);
        const bigCycle: Record<string, unknown>[] = Array.from({ length: 5000 }, (_, i) => ({
            i,
            text: "z".repeat(50),
        }));
        bigCycle[4000].back = bigCycle;
        assert.throws(() => [...jsonChunks({ bigCycle }, 2)], TypeError);
        assert.throws(() => [...jsonChunks({ n: 1n }, 2)], TypeError);
        assert.throws(() => [...jsonChunks(undefined, 2)], TypeError);
    });

    it("a string longer than a piece is written in slices that never split a surrogate pair", () => {
        for (const unit of ["\ud83d\ude00", "a\ud83d\ude00", "\ud800", "\udfff\ud800", '"\\\u2028\u0001']) {
            for (const extra of [0, 1, 2, 3]) {
                const s = unit.repeat(((1 << 16) + extra) / unit.length + 3) + "\ud83d".repeat(extra);
                const got = pieces(jsonChunks({ s, list: [s] }, 2));
                assert.ok(got.length > 2, `${got.length} pieces`);
                assert.strictEqual(got.join(""), JSON.stringify({ s, list: [s] }, null, 2));
            }
        }
    });

    it("JSON and SARIF of the report specs' subjects: the pieces are the report rendered whole", () => {
        const now = new Date();
        for (const s of specSubjects()) {
            assert.strictEqual(pieces(jsonReportChunks([s], now)).join(""), renderJson([s], now));
            assert.strictEqual(pieces(sarifChunks([s])).join(""), renderSarif([s]));
        }
        const all = specSubjects();
        assert.strictEqual(pieces(jsonReportChunks(all, now)).join(""), renderJson(all, now));
        assert.strictEqual(pieces(sarifChunks(all)).join(""), renderSarif(all));
    });

    it("JSON and SARIF files of several megabytes with hostile strings are the bytes of the report rendered whole", () => {
        const subject = bigSubject(12000);
        const json = path.join(dir, "out", "report.json");
        const sarif = path.join(dir, "out", "report.sarif");
        writeReports(
            [
                { format: "json", file: json },
                { format: "sarif", file: sarif },
            ],
            [subject],
        );
        const writtenSarif = fs.readFileSync(sarif);
        assert.ok(writtenSarif.length > 8 << 20, `${writtenSarif.length} bytes of SARIF: many pieces`);
        assert.ok(
            writtenSarif.equals(Buffer.from(renderSarif([subject]), "utf8")),
            "the SARIF written is the SARIF rendered whole",
        );
        const writtenJson = fs.readFileSync(json);
        assert.ok(writtenJson.length > 4 << 20, `${writtenJson.length} bytes of JSON: many pieces`);
        // The time the report says it was generated (the only part that differs between two renderings).
        const generatedAt = /"generatedAt": "([^"]+)"/.exec(writtenJson.subarray(0, 200).toString("utf8"))![1];
        assert.ok(
            writtenJson.equals(Buffer.from(renderJson([subject], new Date(generatedAt)), "utf8")),
            "the JSON written is the JSON rendered whole",
        );
        const parsed = JSON.parse(writtenJson.toString("utf8"));
        assert.strictEqual(parsed.projects[0].findings.length, 12000);
        // The finding as judged, and what the report adds to it: the rule, its severity and fix, where it is.
        const { rule, severity, location, fix, ...row } = parsed.projects[0].findings[5];
        const f = subject.findings[5];
        assert.deepStrictEqual(row, f);
        assert.deepStrictEqual([rule, location], [f.policy, `${f.file}:${f.line}`]);
        assert.ok(severity && fix, "the rule's severity and fix");
    });

    it("the full table rendered a part of the rows at a time is the one table cli-table3 renders of every row", () => {
        const subjects = [
            ...specSubjects().filter((x): x is ProjectSubject => x.kind === "project"),
            bigSubject(120, false),
        ];
        for (const s of subjects) {
            for (const width of [40, 120]) {
                const whole = pieces(fullTableChunks(s, width, "summary", Infinity));
                assert.ok(whole.length <= 2 + (s.notices ?? []).length, "one table");
                for (const rows of [1, 2, 7, 119, 120])
                    assert.strictEqual(
                        pieces(fullTableChunks(s, width, "summary", rows)).join(""),
                        whole.join(""),
                        `width ${width}, ${rows} rows a part`,
                    );
            }
        }
    });

    it("no piece of any report or output grows with the number of findings", function () {
        // Renders every format at several sizes: seconds on a quiet machine, far more when it is shared.
        this.timeout(120000);
        const small = bigSubject(300, false);
        const large = bigSubject(3000, false);
        const longest = (chunks: Iterable<string>) => Math.max(0, ...[...chunks].map((c) => c.length));
        const outputs: [string, (s: ProjectSubject) => Iterable<string>][] = [
            ["json", (s) => reportChunks("json", [s])],
            ["sarif", (s) => reportChunks("sarif", [s])],
            ["policyreport", (s) => reportChunks("policyreport", [s])],
            ["table", (s) => findingsChunks(s, 100)],
            ["full table", (s) => fullTableChunks(s, 100, "summary", 100)],
            ["workflow commands", (s) => workflowCommandChunks([s])],
            ["step summary", (s) => stepSummaryChunks([s])],
        ];
        for (const [name, chunks] of outputs) {
            const [a, b] = [longest(chunks(small)), longest(chunks(large))];
            const total = pieces(chunks(large)).reduce((n, c) => n + c.length, 0);
            assert.ok(b <= Math.max(a, 1 << 17), `${name}: longest piece ${b} at 3000 findings, ${a} at 300`);
            assert.ok(b * 4 < total, `${name}: longest piece ${b} of ${total}`);
        }
    });

    it("the step summary is appended in pieces after what the file held", () => {
        const file = path.join(dir, "summary.md");
        fs.writeFileSync(file, "earlier step\n");
        const s = bigSubject(3000, false);
        writeChunks(file, stepSummaryChunks([s]), "a");
        assert.ok(
            fs
                .readFileSync(file)
                .equals(Buffer.from("earlier step\n" + pieces(stepSummaryChunks([s])).join(""), "utf8")),
        );
    });

    it("the step summary keeps within GitHub's 1 MiB (a larger one is not shown at all) and says how many rows it left out", () => {
        const s = bigSubject(4000, false);
        const whole = pieces(stepSummaryChunks([s])).join("");
        assert.ok(Buffer.byteLength(whole) > STEP_SUMMARY_BYTES, "every row is more than GitHub shows");
        assert.doesNotMatch(whole, /not shown here/);
        for (const budget of [STEP_SUMMARY_BYTES, 300 * 1024]) {
            const text = pieces(stepSummaryChunks([s], budget)).join("");
            assert.ok(Buffer.byteLength(text) <= budget, `${Buffer.byteLength(text)} bytes within ${budget}`);
            const rows = text.split("\n").filter((l) => /^\| (blocking|advisory|waived)/.test(l)).length;
            assert.ok(rows > 100, `${rows} rows shown`);
            assert.match(
                text,
                new RegExp(
                    `^${4000 - rows} finding\\(s\\) and 1 notice\\(s\\) not shown here: .* in the reports\\.$`,
                    "m",
                ),
            );
            // the rows shown are the first ones, whole, in order; the counts and verdict are all there
            assert.ok(whole.startsWith(text.slice(0, text.lastIndexOf("|\n") + 2)));
            assert.match(text, /^\d+ blocking, \d+ advisory, \d+ waived\.$/m);
        }
    });
});
