/**
 * The command line run in-process (cli/program.ts main, writing to a Terminal of strings): what it says without a
 * command, its help and `explain` fitted to the width (80 columns off a terminal), colour only on a terminal and
 * never under NO_COLOR, usage errors on one line with their suggestion, and check's outputs: nothing silent (no
 * object, every unreadable file), a report alone on standard output, the full table within the terminal.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../../cli/program";
import { OutStream, Terminal } from "../../../cli/guide";
import { policies } from "../../../policies";
import { jsonReportErrors } from "../../support/validators";

/** A stream that keeps what is written; a terminal of `columns` when given (with colours). */
function stream(columns?: number): OutStream & { text: string } {
    const s = {
        text: "",
        write(t: string) {
            s.text += t;
            return true;
        },
        ...(columns ? { isTTY: true, columns, hasColors: () => true } : {}),
    };
    return s;
}

/** Runs the command; `columns` makes both outputs terminals of that width. */
async function run(argv: string[], o: { columns?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
    const term: Terminal & { out: { text: string }; err: { text: string } } = {
        out: stream(o.columns),
        err: stream(o.columns),
        env: o.env ?? {},
    };
    const before = process.cwd();
    if (o.cwd) process.chdir(o.cwd);
    try {
        const code = await main(argv, term);
        return { code, stdout: term.out.text, stderr: term.err.text };
    } finally {
        process.chdir(before);
    }
}

const COMMANDS = ["check", "gate", "audit", "test", "webhook", "rules", "explain", "init", "doctor"];
const ESC = "\u001b[";
const longest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));
/**
 * The longest line of `text` that is more than one word: a word longer than the width has a line of its own, and
 * so does a config key's head (`  name [default]:`, kept whole) longer than the width.
 */
const longestWrapped = (text: string) =>
    Math.max(
        0,
        ...text
            .split("\n")
            .filter((l) => /\S\s+\S/.test(l) && !/^ {2}\S+ \[.*\]:$/.test(l))
            .map((l) => l.length),
    );

describe("pko-guard's command line", () => {
    describe("guides", () => {
        it("prints the version for --version, -V, -v and `version`, and check's -v stays verbose", async () => {
            const version = JSON.parse(fs.readFileSync(path.join(__dirname, "../../../package.json"), "utf8")).version;
            for (const argv of [["--version"], ["-V"], ["-v"], ["version"]]) {
                const r = await run(argv);
                assert.deepStrictEqual([r.code, r.stdout, r.stderr], [0, `${version}\n`, ""], argv.join(" "));
            }
            const help = await run(["help"]);
            assert.match(help.stdout, /-V, --version +print the version \(also -v, version\)\n/);
            const check = await run(["help", "check"]);
            assert.match(check.stdout, /-v, --verbose/);
        });

        it("without a command: every command on one line, an example, exit 2 (help: the same on stdout, exit 0)", async () => {
            const none = await run([]);
            assert.strictEqual(none.code, 2);
            assert.strictEqual(none.stdout, "");
            const help = await run(["help"]);
            assert.deepStrictEqual([help.code, help.stderr, help.stdout], [0, "", none.stderr]);
            const lines = none.stderr.split("\n");
            const at = lines.indexOf("Commands:");
            for (const [i, name] of COMMANDS.entries()) {
                // the command and its summary on its line, the next line the next command's
                assert.match(lines[at + 1 + i], new RegExp(`^ {2}${name} .* {2}\\w`), lines[at + 1 + i]);
            }
            assert.match(lines[at + 1 + COMMANDS.length], /^ {2}help \[command\]/);
            assert.match(none.stderr, /\nExamples:\n {2}pko-guard check \S/);
            // the rule the examples explain is one of the pack's
            const explained = /pko-guard explain (\S+)/.exec(none.stderr)![1];
            assert.ok(
                policies.some((p) => p.name === explained),
                explained,
            );
            assert.ok(longest(none.stderr) <= 80, "80 columns");
        });

        it("suggests the command, option or rule meant, on the one line of the error", async () => {
            const cases: [string[], string][] = [
                [["chek"], "pko-guard: unknown command 'chek' (did you mean check?)\n"],
                [["help", "chek"], "pko-guard: unknown command 'chek' (did you mean check?)\n"],
                [["check", "--formt", "json", "x"], "pko-guard: unknown option '--formt' (did you mean --format?)\n"],
                [
                    ["explain", "pko-stack-resync-flor"],
                    'pko-guard: "pko-stack-resync-flor" is not a rule of this pack: did you mean pko-stack-resync-floor? (see pko-guard rules)\n',
                ],
                [
                    ["explain", "resync-floor"],
                    'pko-guard: "resync-floor" is not a rule of this pack: did you mean pko-stack-resync-floor? (see pko-guard rules)\n',
                ],
                [
                    ["explain", "no-such-rule"],
                    'pko-guard: "no-such-rule" is not a rule of this pack (see pko-guard rules)\n',
                ],
            ];
            for (const [argv, stderr] of cases)
                assert.deepStrictEqual(await run(argv), { code: 2, stdout: "", stderr });
            // what was typed is escaped: it cannot start a line of its own
            const hostile = await run(["chek\n::error::x"]);
            assert.strictEqual(hostile.stderr.split("\n").length, 2, hostile.stderr);
        });

        it("fits help to the terminal, and to 80 columns elsewhere, a long option's description below it", async () => {
            for (const command of COMMANDS) {
                const piped = await run([command, "--help"]);
                assert.strictEqual(piped.code, 0, command);
                assert.ok(longest(piped.stdout) <= 80, `${command} --help: ${longest(piped.stdout)} columns`);
                const narrow = await run([command, "--help"], { columns: 60, env: { NO_COLOR: "1" } });
                assert.ok(longest(narrow.stdout) <= 60, `${command} --help at 60: ${longest(narrow.stdout)} columns`);
            }
            const wide = await run(["check", "--help"], { columns: 200, env: { NO_COLOR: "1" } });
            assert.ok(longest(wide.stdout) > 100, "a wide terminal gets long lines");
            // At 60 columns, check's longest option leaves its description too little room: it goes below.
            const narrow = await run(["check", "--help"], { columns: 60, env: { NO_COLOR: "1" } });
            assert.match(narrow.stdout, /\n {2}--api-versions <group\/version\[\/Kind\]>\n {6}an API/);
        });

        it("wraps explain's prose to the width, never the example or the links", async () => {
            for (const p of policies) {
                const piped = await run(["explain", p.name]);
                assert.strictEqual(piped.code, 0, piped.stderr);
                // A note that is code (every line indented: an example) stays as written, whatever its width.
                const code = new Set(
                    (p.about.notes ?? [])
                        .filter((n) => n.split("\n").every((l) => l === "" || /^\s/.test(l)))
                        .flatMap((n) => n.split("\n")),
                );
                const text = (t: string) =>
                    t
                        .split("\n")
                        .filter((l) => !code.has(l))
                        .join("\n");
                const [prose, rest] = text(piped.stdout).split("\nAn example that passes");
                assert.ok(longestWrapped(prose) <= 80, `${p.name}: ${longestWrapped(prose)} columns`);
                assert.match(rest, /\nDocumentation: \S+\n/);
                const narrow = await run(["explain", p.name], { columns: 50 });
                assert.ok(longestWrapped(text(narrow.stdout).split("\nAn example")[0]) <= 50, p.name);
                // a config key's name and default stay together on their line
                for (const [k, d] of Object.entries(
                    (p.configSchema?.properties ?? {}) as Record<string, { default?: unknown }>,
                ))
                    assert.ok(
                        narrow.stdout.includes(`\n  ${k} [${JSON.stringify(d.default ?? null)}]:`),
                        `${p.name}: ${k}`,
                    );
                // the same words, only the lines differ
                const words = (t: string) => t.split(/\s+/).join(" ");
                assert.strictEqual(words(narrow.stdout), words(piped.stdout), p.name);
            }
        });

        it("says check's paths are required, as they are but with --print-config", async () => {
            const help = await run(["check", "--help"]);
            assert.match(help.stdout, /^Usage: pko-guard check \[options\] <paths\.\.\.>\n/);
            assert.match((await run(["help"])).stdout, /\n {2}check \[options\] <paths\.\.\.> /);
            assert.deepStrictEqual(await run(["check"]), {
                code: 2,
                stdout: "",
                stderr: "pko-guard: missing required argument 'paths'\n",
            });
            const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-print-config-")));
            try {
                const printed = await run(["check", "--print-config"], { cwd: tmp });
                assert.strictEqual(printed.code, 0, printed.stderr);
                assert.match(
                    printed.stdout,
                    new RegExp(`^repository root +${tmp.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n`),
                );
            } finally {
                fs.rmSync(tmp, { recursive: true, force: true });
            }
        });

        it("colours help on a terminal, not elsewhere nor under NO_COLOR", async () => {
            assert.ok((await run(["--help"], { columns: 100 })).stdout.includes(`${ESC}1mUsage:`));
            assert.ok(!(await run(["--help"])).stdout.includes(ESC));
            assert.ok(!(await run(["--help"], { columns: 100, env: { NO_COLOR: "1" } })).stdout.includes(ESC));
        });
    });

    describe("check: nothing silent, nothing lost", () => {
        let tmp: string;
        const write = (rel: string, text: string | Buffer) => {
            fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
            fs.writeFileSync(path.join(tmp, rel), text);
        };
        const STACK = (name: string) =>
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${name}-with-a-rather-long-name-for-the-table\n  namespace: pulumi\nspec:\n  stack: org/app/production\n  projectRepo: https://github.com/org/app\n  branch: main\n`;
        beforeEach(() => {
            tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-program-")));
        });
        afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

        it("a run that finds no Kubernetes object is exit 2, one line naming the paths and the repository root", async () => {
            write("m/ci.yml", "name: ci\non: push\n");
            fs.mkdirSync(path.join(tmp, "empty"));
            const r = await run(["check", "m", "empty", "--repo-root", "."], { cwd: tmp });
            assert.deepStrictEqual(r, {
                code: 2,
                stdout: "",
                stderr:
                    "pko-guard: skipped m/ci.yml:1: not a Kubernetes object (no apiVersion and kind)\n" +
                    `pko-guard: no Kubernetes object found in m empty (1 file(s) read, 1 skipped; repository root ${tmp})\n`,
            });
        });

        it("every file that cannot be read is said, each on its line, then the run fails", async () => {
            write("m/a.yaml", Buffer.from([0x61, 0x00]));
            write("m/b.yaml", "x: [\n");
            write("m/c.yaml", STACK("c"));
            fs.symlinkSync(path.join(tmp, "gone.yaml"), path.join(tmp, "m", "d.yaml"));
            const r = await run(["check", "m", "nowhere.yaml", "--report", "json=r.json"], { cwd: tmp });
            assert.strictEqual(r.code, 2);
            assert.strictEqual(
                r.stderr,
                [
                    `pko-guard: ${path.join(tmp, "m", "d.yaml")}: broken symbolic link`,
                    "pko-guard: m/a.yaml: binary file, not a manifest",
                    'pko-guard: m/b.yaml:1:4: invalid YAML: a flow sequence ("[") that is never closed',
                    "pko-guard: nowhere.yaml: no such file or folder",
                    "pko-guard: 4 files cannot be read as manifests",
                    "",
                ].join("\n"),
            );
            // The report says all of them too.
            const json = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8"));
            assert.match(json.projects[0].error, /^4 files cannot be read as manifests: .*m\/a\.yaml.*nowhere\.yaml/);
        });

        it("--format json (or --report json=-) writes that report alone to standard output, the summary to stderr", async () => {
            write("m/c.yaml", STACK("c"));
            for (const argv of [
                ["--format", "json"],
                ["--report", "json=-"],
            ]) {
                const r = await run(["check", "m", "--repo-root", ".", ...argv], { cwd: tmp });
                assert.strictEqual(r.code, 1, r.stderr);
                const json = JSON.parse(r.stdout);
                assert.deepStrictEqual(jsonReportErrors(json), []);
                const pinned = json.projects[0].findings.find(
                    (f: { rule: string }) => f.rule === "pko-stack-prod-pinned-commit",
                );
                assert.deepStrictEqual(
                    [pinned.severity, pinned.status, pinned.object, pinned.location],
                    [
                        "high",
                        "blocking",
                        {
                            apiVersion: "pulumi.com/v1",
                            kind: "Stack",
                            namespace: "pulumi",
                            name: "c-with-a-rather-long-name-for-the-table",
                        },
                        "m/c.yaml:9",
                    ],
                );
                assert.match(pinned.fix, /spec\.commit/);
                assert.match(r.stderr, /^1 object\(s\) in 1 file\(s\) .*: FAIL\n$/);
                assert.ok(!fs.existsSync(path.join(tmp, "-")), "no file named -");
            }
            for (const format of ["sarif", "junit", "policyreport"]) {
                const r = await run(["check", "m", "--format", format], { cwd: tmp });
                assert.strictEqual(r.code, 1, r.stderr);
                assert.match(r.stdout, format === "junit" ? /^<\?xml/ : format === "sarif" ? /^\{/ : /^apiVersion:/);
                assert.ok(!r.stdout.includes("BLOCKING"), "no table on standard output");
            }
        });

        it("refuses two reports on standard output, or a report beside --format github", async () => {
            write("m/c.yaml", STACK("c"));
            const two = await run(
                ["check", "m", "--format", "sarif", "--report", "json=-", "--report", "junit=j.xml"],
                {
                    cwd: tmp,
                },
            );
            assert.deepStrictEqual(two, {
                code: 2,
                stdout: "",
                stderr: "pko-guard: only one report can go to standard output (--format sarif, --report json=-)\n",
            });
            // the report to a file is still written, saying why there is no verdict
            assert.match(fs.readFileSync(path.join(tmp, "j.xml"), "utf8"), /only one report can go to standard output/);
            const github = await run(["check", "m", "--format", "github", "--report", "json=-"], { cwd: tmp });
            assert.strictEqual(github.code, 2);
            assert.match(github.stderr, /^pko-guard: --format github writes to standard output; --report json=- /);
        });

        it("fits check -v to the terminal: 80 columns never draw a wider table, and nothing is cut off", async () => {
            write("m/c.yaml", STACK("c"));
            write("m/d.yaml", STACK("d"));
            const r = await run(["check", "m", "-v"], { cwd: tmp, columns: 80, env: { NO_COLOR: "1" } });
            assert.strictEqual(r.code, 1, r.stderr);
            const findings = r.stdout.slice(0, r.stdout.lastIndexOf("\n", r.stdout.length - 2)); // the summary line aside
            assert.ok(longest(findings) <= 80, r.stdout);
            assert.ok(!r.stdout.includes("…"), "nothing cut off");
            assert.match(r.stdout, /^resource: +Stack\/pulumi\/c-with-a-rather-long-name-for-the-table$/m);
            const wide = await run(["check", "m", "-v"], { cwd: tmp, columns: 240, env: { NO_COLOR: "1" } });
            assert.match(wide.stdout, /^┌/, "a table where it fits");
            assert.ok(longest(wide.stdout) <= 240);
        });

        it("colours statuses and the verdict on a terminal, nothing elsewhere or under NO_COLOR", async () => {
            write("m/c.yaml", STACK("c"));
            const tty = await run(["check", "m"], { cwd: tmp, columns: 100 });
            assert.ok(tty.stdout.includes(`${ESC}31mBLOCKING${ESC}39m`), tty.stdout);
            assert.ok(tty.stdout.includes(`${ESC}31mFAIL`), tty.stdout);
            assert.ok(!(await run(["check", "m"], { cwd: tmp })).stdout.includes(ESC));
            assert.ok(
                !(await run(["check", "m"], { cwd: tmp, columns: 100, env: { NO_COLOR: "1" } })).stdout.includes(ESC),
            );
        });
    });
});
