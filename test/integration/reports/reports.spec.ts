/**
 * Reports for users' CI: SARIF paths relative to the repository root whatever the working directory (root,
 * subfolder, /), regions at the declaration line, stable fingerprints, severities and help anchors,
 * suppressions for waived findings, error runs; GitHub workflow commands and step summary; the fitted table.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { judgeRows } from "../../../evaluation/judge";
import { locateRows } from "../../../engine/source-locations";
import { row } from "../../../evaluation/rows";
import { REPO_ROOT } from "../../../support/paths";
import { escapeData, escapeProperty, renderStepSummary, renderWorkflowCommands } from "../../../reports/github";
import { renderJson } from "../../../reports/json";
import { renderJunit } from "../../../reports/junit";
import { artifactLocation, fingerprint, renderSarif } from "../../../reports/sarif";
import { ProjectSubject, ruleCatalogue } from "../../../reports/subject";
import { renderFindings, renderFullTable } from "../../../reports/table";
import { writeReports } from "../../../reports/write";
import { ToolError } from "../../../support/errors";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";

const URN = "urn:pulumi:dev::shop::kubernetes:pulumi.com/v1:Stack::";
const LONG = "payments-platform-production-eu-west-1-stack";

/** A user's repository in a temp folder: .git at the top, the Pulumi program in infra/pulumi. */
function userRepo(): { root: string; program: string } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-user-repo-"));
    fs.mkdirSync(path.join(root, ".git"));
    const program = path.join(root, "infra", "pulumi");
    fs.mkdirSync(program, { recursive: true });
    fs.writeFileSync(path.join(program, "Pulumi.yaml"), "name: shop\nruntime: nodejs\n");
    fs.writeFileSync(
        path.join(program, "index.ts"),
        [
            'import { pkoStack } from "./lib";',
            "",
            "// the stacks",
            `pkoStack("${LONG}", { spec: {} });`,
            'pkoStack("legacy-prod", { spec: {} });',
            "",
        ].join("\n"),
    );
    return { root, program };
}

function subject(program: string): ProjectSubject {
    const rows = [
        row(
            "pko-stack-prod-pinned-commit",
            `${URN}${LONG}`,
            "mandatory",
            `Stack "${LONG}" (stack "acme/app/prod") is production but tracks branch "main"; set spec.commit to the full 40-hex SHA.`,
        ),
        row(
            "pko-stack-prod-refresh",
            `${URN}${LONG}`,
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
    const findings = locateRows(judgeRows(rows, false), program, "index.ts");
    return {
        kind: "project",
        name: "shop",
        stack: "dev",
        description: "gate",
        programFile: path.join(program, "index.ts"),
        findings,
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
}

/** Renders SARIF in a separate process whose working directory is `cwd` (the compiled reports, as users run them). */
function sarifFrom(cwd: string, s: ProjectSubject): any {
    const script = `process.stdout.write(require(${JSON.stringify(path.join(REPO_ROOT, "bin", "reports", "sarif.js"))}).renderSarif([JSON.parse(process.argv[1])]))`;
    const r = spawnSync(process.execPath, ["-e", script, JSON.stringify(s)], { cwd, encoding: "utf8" });
    assert.strictEqual(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
}

describe("reports for users' CI", () => {
    it("a report that cannot be written is reported (one line naming it), and the others are still written", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-reports-"));
        try {
            const blocker = path.join(dir, "not-a-folder");
            fs.writeFileSync(blocker, "");
            const subject: ProjectSubject = {
                kind: "project",
                name: "p",
                stack: "s",
                description: "d",
                programFile: "index.ts",
                findings: [],
                outcome: "pass",
                durationMs: 1,
            };
            const good = path.join(dir, "ok.json");
            assert.throws(
                () =>
                    writeReports(
                        [
                            { format: "json", file: path.join(blocker, "r.sarif") },
                            { format: "json", file: good },
                        ],
                        [subject],
                    ),
                (e: unknown) =>
                    e instanceof ToolError &&
                    /^cannot write report .*not-a-folder\/r\.sarif \(E[A-Z]+\)$/.test(e.message),
            );
            assert.ok(fs.existsSync(good));
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    const { root, program } = userRepo();
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    it("locates each finding at its declaration line in the program", () => {
        const s = subject(program);
        const f = s.findings.find((x) => x.resource === LONG)!;
        assert.deepStrictEqual([f.file, f.line, f.column], [path.join(program, "index.ts"), 4, 10]);
        assert.strictEqual(s.findings.find((x) => x.resource === "legacy-prod")!.line, 5);
    });

    for (const [label, cwd] of [
        ["the repository root", () => root],
        ["a subfolder", () => program],
        ["/", () => "/"],
    ] as const) {
        it(`SARIF paths are relative to the repository root when run from ${label}`, () => {
            const sarif = sarifFrom(cwd(), subject(program));
            assert.deepStrictEqual(sarifErrors(sarif), []);
            const run = sarif.runs[0];
            assert.deepStrictEqual(run.originalUriBaseIds, { "%SRCROOT%": { uri: `file://${root}/` } });
            const locs = run.results.map((r: any) => r.locations[0].physicalLocation);
            for (const l of locs)
                assert.deepStrictEqual(l.artifactLocation, { uri: "infra/pulumi/index.ts", uriBaseId: "%SRCROOT%" });
            assert.deepStrictEqual(locs.map((l: any) => l.region.startLine).sort(), [4, 4, 5]);
        });
    }

    it("a manifest finding's relative file (pko-guard check) is already relative to the repository root", () => {
        assert.deepStrictEqual(artifactLocation("deploy/prod/stack.yaml", "/anywhere"), {
            uri: "deploy/prod/stack.yaml",
            uriBaseId: "%SRCROOT%",
        });
        // Outside the repository and standard input are named as such, never by an absolute path.
        assert.deepStrictEqual(artifactLocation("/elsewhere/x.yaml", "/repo"), {
            uri: "x.yaml",
            uriBaseId: "OUTSIDE",
            description: { text: "a file outside the repository" },
        });
        assert.deepStrictEqual(artifactLocation("<stdin>", "/repo"), {
            uri: "stdin",
            uriBaseId: "STDIN",
            description: { text: "standard input" },
        });
    });

    it("without git, SARIF paths are relative to the working directory", () => {
        const plain = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-nogit-"));
        try {
            fs.mkdirSync(path.join(plain, "app"));
            fs.writeFileSync(path.join(plain, "app", "index.ts"), `new Stack("${LONG}");\n`);
            const s = { ...subject(path.join(plain, "app")), programFile: path.join(plain, "app", "index.ts") };
            const sarif = sarifFrom(plain, s);
            assert.strictEqual(
                sarif.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri,
                "app/index.ts",
            );
            const fromRoot = sarifFrom("/", s);
            assert.strictEqual(
                fromRoot.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri,
                path.join(plain, "app", "index.ts").slice(1),
            );
        } finally {
            fs.rmSync(plain, { recursive: true, force: true });
        }
    });

    it("SARIF rules carry security-severity and their documentation: a helpUri under the package's repository, or the configured base", () => {
        const reference = fs.readFileSync(path.join(REPO_ROOT, "docs", "rules.md"), "utf8");
        const plain = JSON.parse(renderSarif([subject(program)])).runs[0].tool.driver;
        const saved = process.env.PKO_GUARD_DOCS_URL;
        let rules: any[];
        let driver: any;
        try {
            delete process.env.PKO_GUARD_DOCS_URL;
            driver = JSON.parse(renderSarif([subject(program)])).runs[0].tool.driver;
            // Without a configured base: the package's own repository (package.json `repository`), no other host.
            assert.ok(
                driver.rules.every(
                    (r: any) =>
                        r.helpUri === `https://github.com/pko-guard/pko-guard/blob/main/docs/rules.md#rule-${r.id}`,
                ) && driver.informationUri === "https://github.com/pko-guard/pko-guard/blob/main/README.md",
                "the package's repository's pages without a configured base",
            );
            for (const r of driver.rules) assert.ok(r.help.text.includes(`docs/rules.md#rule-${r.id}`), r.id);
            process.env.PKO_GUARD_DOCS_URL = "https://git.example.org/acme/pko-guard/blob/v1/";
            driver = JSON.parse(renderSarif([subject(program)])).runs[0].tool.driver;
            rules = driver.rules;
        } finally {
            if (saved === undefined) delete process.env.PKO_GUARD_DOCS_URL;
            else process.env.PKO_GUARD_DOCS_URL = saved;
        }
        assert.ok(plain.rules.length > 0);
        assert.strictEqual(driver.informationUri, "https://git.example.org/acme/pko-guard/blob/v1/README.md");
        assert.strictEqual(new Set(rules.map((r: any) => r.helpUri)).size, rules.length);
        for (const r of rules) {
            assert.ok(Number(r.properties["security-severity"]) > 0, r.id);
            assert.ok(
                r.helpUri.startsWith("https://git.example.org/acme/pko-guard/blob/v1/docs/rules.md#rule-"),
                r.helpUri,
            );
            const anchor = r.helpUri.split("#")[1];
            assert.ok(reference.includes(`<a id="${anchor}"></a>`), `docs/rules.md has no anchor ${anchor}`);
        }
        const critical = rules.find((r: any) => r.id === "pko-stack-credentials-from-secrets");
        assert.strictEqual(critical.properties["security-severity"], "9.5");
    });

    it("SARIF fingerprints are stable across runs and line moves, distinct across resources; waived results are suppressed", () => {
        const a = JSON.parse(renderSarif([subject(program)])).runs[0].results;
        const moved = subject(program);
        moved.findings = moved.findings.map((f) => ({ ...f, line: f.line! + 10 }));
        const b = JSON.parse(renderSarif([moved])).runs[0].results;
        assert.deepStrictEqual(
            a.map((r: any) => r.partialFingerprints),
            b.map((r: any) => r.partialFingerprints),
        );
        assert.strictEqual(new Set(a.map((r: any) => r.partialFingerprints["pkoGuard/v1"])).size, 3);
        assert.strictEqual(fingerprint("r", "u", "is 15 seconds"), fingerprint("r", "u", "is 30 seconds"));
        const waived = a.filter((r: any) => r.suppressions);
        assert.strictEqual(waived.length, 1);
        assert.deepStrictEqual(waived[0].suppressions, [
            { kind: "external", status: "accepted", justification: "moving in Q1 (until 2099-12-31)" },
        ]);
    });

    it("fixture rows (no status, no location) are located in the program and the pack's waiver mark suppresses them", () => {
        const rows = [
            row(
                "pko-stack-prod-pinned-commit",
                `${URN}legacy-prod`,
                "mandatory",
                "[waived: r; until 2099-12-31] tracks a branch",
            ),
            row("pko-stack-prod-pinned-commit", `${URN}${LONG}`, "mandatory", "tracks a branch"),
        ];
        const fixture = {
            kind: "fixture" as const,
            name: "f",
            description: "d",
            programFile: path.join(program, "index.ts"),
            verdict: {
                fixture: "f",
                description: "d",
                outcome: "match" as const,
                legs: [{ leg: "mock", durationMs: 1, status: "ran" as const, rows }],
                checks: [],
            },
        };
        const results = JSON.parse(renderSarif([fixture])).runs[0].results;
        assert.deepStrictEqual(
            results.map((r: any) => [
                r.locations[0].physicalLocation.region.startLine,
                r.suppressions?.[0]?.justification,
            ]),
            [
                [5, "r (until 2099-12-31)"],
                [4, undefined],
            ],
        );
    });

    it("a gate that could not run still gives valid SARIF, JUnit and JSON saying so", async () => {
        const failed: ProjectSubject = {
            kind: "project",
            name: "shop",
            stack: "dev",
            description: "gate",
            programFile: path.join(program, "index.ts"),
            findings: [],
            outcome: "error",
            error: "pulumi preview failed: no stack named 'dev'",
            durationMs: 1,
        };
        const sarif = JSON.parse(renderSarif([failed]));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        assert.strictEqual(sarif.runs[0].invocations[0].executionSuccessful, false);
        const notes = sarif.runs[0].invocations[0].toolExecutionNotifications;
        assert.strictEqual(notes.length, 1, JSON.stringify(notes));
        assert.match(notes[0].message.text, /no stack named/);
        const xml = renderJunit([failed]);
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<error[^>]*no stack named/);
        const json = JSON.parse(renderJson([failed]));
        assert.deepStrictEqual(jsonReportErrors(json), []);
        assert.strictEqual(json.projects[0].outcome, "error");
        assert.match(json.projects[0].error, /no stack named/);
        assert.match(renderWorkflowCommands([failed]), /^::error title=pko-guard%3A shop::pulumi preview failed/);
    });

    it("JSON and JUnit reports show waived findings and notices, valid", async () => {
        const json = JSON.parse(renderJson([subject(program)]));
        assert.deepStrictEqual(jsonReportErrors(json), []);
        assert.strictEqual(json.summary.waived, 1);
        assert.strictEqual(json.projects[0].notices.length, 1);
        assert.deepStrictEqual(await junitErrors(renderJunit([subject(program)])), []);
        // Each line: [status] file:line:col: resource: message (the location first, as pko-guard check writes it).
        assert.match(renderJunit([subject(program)]), /\[waived\] \S+index\.ts:\d+:\d+: legacy-prod: /);
    });

    it("GitHub workflow commands: blocking first, file and line, escaped per the runner's rules", () => {
        // Line breaks from input are shown escaped (support/escape.ts), never as a new line of the annotation.
        assert.strictEqual(escapeData("50% done\r\nnext"), "50%25 done\\r\\nnext");
        assert.strictEqual(escapeProperty("a:b,c%"), "a%3Ab%2Cc%25");
        const lines = renderWorkflowCommands([subject(program)])
            .trimEnd()
            .split("\n");
        // One rule with SARIF: relative to the repository root, wherever the command runs.
        const file = escapeProperty(path.relative(root, path.join(program, "index.ts")));
        assert.strictEqual(
            lines[0],
            `::error file=${file},line=4,col=10,title=pko-stack-prod-pinned-commit (${LONG})::${LONG}: Stack "${LONG}" (stack "acme/app/prod") is production but tracks branch "main"; set spec.commit to the full 40-hex SHA.`,
        );
        assert.match(
            lines[1],
            /^::warning file=.*,line=4,col=10,title=pko-stack-prod-refresh .*spec.refresh: true; set it\.$/,
        );
        assert.match(lines[2], /^::notice file=.*line=5.*::\[waived: moving in Q1, until 2099-12-31\] legacy-prod: /);
        assert.match(lines[3], /^::warning title=pko-guard%3A pko-stack-prod-refresh::unused waiver for ghost/);
        assert.strictEqual(lines.length, 4);
    });

    it("the step summary is a Markdown verdict table, blocking first, with the fix", () => {
        const md = renderStepSummary([subject(program)]);
        assert.match(md, /### shop \(stack dev\): \*\*FAIL\*\*/);
        const rows = md.split("\n").filter((l) => /^\| (blocking|advisory|waived)/.test(l));
        assert.deepStrictEqual(
            rows.map((r) => r.split(" | ")[0]),
            ["| blocking", "| advisory", "| waived (moving in Q1)"],
        );
        const fix = ruleCatalogue().find((r) => r.id === "pko-stack-prod-pinned-commit")!.remediation!;
        assert.ok(rows[0].includes(fix));
    });

    for (const width of [80, 120]) {
        it(`the terminal output fits ${width} columns: blocking first with the fix, names whole, messages wrapped`, () => {
            const out = renderFindings(subject(program), width);
            const lines = out.trimEnd().split("\n");
            // Only the lines that carry names (the policy heading, the resource and its file) may be longer.
            for (const l of lines)
                if (!/^(BLOCKING|advisory|waived) |^ {2}resource: /.test(l))
                    assert.ok(l.length <= width, `${l.length}: ${l}`);
            assert.ok(
                lines.some((l) => l.includes(`resource: ${LONG}`)),
                "the long name is printed whole",
            );
            const order = [
                "BLOCKING  pko-stack-prod-pinned-commit",
                "advisory  pko-stack-prod-refresh",
                "waived  pko-stack-prod-pinned-commit",
            ].map((h) => lines.findIndex((l) => l.startsWith(h)));
            assert.ok(
                order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
                String(order),
            );
            assert.ok(lines.some((l) => l.trim().startsWith("fix: ")));
            assert.match(
                lines[lines.length - 1],
                /^shop \(stack dev\): 3 violation\(s\), 1 advisory, 1 waived, 1 blocking: FAIL$/,
            );
            const full = renderFullTable(subject(program), width);
            assert.ok(full.includes(LONG), "the full table keeps the name whole");
            const wide = renderFullTable(subject(program), 200);
            for (const l of wide.split("\n").filter((x) => /^[│┌├└]/.test(x)))
                assert.ok(l.length <= 200, `${l.length}`);
        });
    }
});
