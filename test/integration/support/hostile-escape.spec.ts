/**
 * One escape for every user-controlled string in human-facing output (issue 19 item 2): the function itself
 * over a corpus, then `check` end to end with names, namespaces and file names that carry newlines followed by
 * workflow commands, ANSI escapes, bidirectional overrides, backticks, HTML and links: the table, the GitHub
 * workflow commands, the step summary, the "skipped" and duplicate-identity lines stay inert.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { escapeText } from "../../../support/escape";
import { CORPUS, assertInert, pkoGuard } from "../../support/inert";

describe("one escape for human-facing output (issue 19 item 2)", function () {
    this.timeout(120000);

    it("escapeText: no control character, no command marker, visible escapes", () => {
        assert.strictEqual(escapeText("a\nb"), "a\\nb");
        assert.strictEqual(escapeText("\u001b[31m"), "\\x1b[31m");
        assert.strictEqual(escapeText("x::error::y"), "x:\\x3aerror:\\x3ay");
        assert.strictEqual(escapeText("\u202e"), "\\u202e");
        assert.strictEqual(
            escapeText("plain Stack/pulumi/app-prod (a.yaml:3:5)"),
            "plain Stack/pulumi/app-prod (a.yaml:3:5)",
        );
        for (const s of CORPUS) {
            for (const context of ["text", "markdown"] as const) {
                const e = escapeText(s, context);
                assertInert(`${context} ${JSON.stringify(s)}`, e);
                assert.ok(!e.includes("::"), `${context}: ${e}`);
                assert.ok(!e.includes("\n") && !e.includes("\r"), `${context}: ${e}`);
            }
            const md = escapeText(s, "markdown");
            assert.ok(!/[<>]/.test(md), `markdown: no HTML: ${md}`);
            assert.ok(!/(^|[^\\])[`[\]|*_!]/.test(md), `markdown: no unescaped syntax: ${md}`);
            assert.ok(!/https?:\/\/|www\./.test(md), `markdown: no autolink: ${md}`);
        }
    });

    describe("check end to end", () => {
        let tmp: string;
        beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-escape-"))));
        afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

        const stack = (name: string, namespace: string) =>
            JSON.stringify({
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name, namespace, labels: { env: "production" } },
                spec: {
                    stack: "acme/app/prod",
                    projectRepo: "https://github.com/acme/app",
                    branch: `main${name}`,
                    serviceAccountName: name,
                },
            });

        it("names, namespaces and messages from input: table, workflow commands and step summary stay inert", () => {
            const docs = CORPUS.map((s, i) => stack(`prod-${i}${s}`, `ns${s}`));
            fs.writeFileSync(path.join(tmp, "stacks.yaml"), docs.join("\n---\n"));
            const summary = path.join(tmp, "summary.md");
            for (const args of [["--verbose"], [], ["--format", "github"]]) {
                const r = pkoGuard(["check", "stacks.yaml", ...args], {
                    cwd: tmp,
                    env: { ...process.env, GITHUB_ACTIONS: "", GITHUB_STEP_SUMMARY: summary },
                });
                assert.strictEqual(r.code, 1, r.stderr);
                assert.match(r.stdout, /BLOCKING|blocking/);
                assertInert(`stdout ${args.join(" ")}`, r.stdout);
                assertInert(`stderr ${args.join(" ")}`, r.stderr);
            }
            const md = fs.readFileSync(summary, "utf8");
            assertInert("step summary", md);
            assert.ok(!/<script|<img|\]\(https?:|!\[/.test(md), md);
        });

        it("file names from input: skipped lines, errors and duplicate identities stay inert", () => {
            const evil = "a\n::error::PWNED\u001b[31m.yaml";
            fs.mkdirSync(path.join(tmp, "repo"));
            fs.writeFileSync(path.join(tmp, "repo", evil), "just: a mapping\n");
            fs.writeFileSync(path.join(tmp, "repo", `b${evil}`), stack("dup", "x\n::error::PWNED"));
            fs.writeFileSync(path.join(tmp, "repo", `c${evil}`), stack("dup", "x\n::error::PWNED"));
            const r = pkoGuard(["check", "repo", "--format", "github"], { cwd: tmp });
            assert.strictEqual(r.code, 1, r.stderr);
            assert.match(r.stdout, /pko-guard-duplicate-object/);
            assertInert("stderr", r.stderr);
            assertInert("stdout", r.stdout);
            fs.rmSync(path.join(tmp, "repo", `c${evil}`));
            const ok = pkoGuard(["check", "repo", "--format", "github"], { cwd: tmp });
            assert.strictEqual(ok.code, 1, ok.stderr);
            assertInert("stderr", ok.stderr);
            assertInert("stdout", ok.stdout);
        });
    });
});
