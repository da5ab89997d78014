/**
 * Assertions over human-facing output from hostile input (issue 19): no raw control character, no workflow
 * command other than pko-guard's own (and those with no command marker inside their data), no secret.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import { CLI_ENTRY } from "../../support/paths";

export const CLI = CLI_ENTRY;

/** Control characters that must never reach a terminal or log from input (newline is the output's own). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const OWN_COMMAND = /^::(error|warning|notice)( [^:]*)?::(.*)$/;

/** Throws when `text` (stdout, stderr, a step summary) carries something from input that acts on its reader. */
export function assertInert(what: string, text: string, secrets: string[] = []): void {
    const bad = RAW_CONTROL.exec(text);
    assert.ok(
        !bad,
        `${what}: raw control character U+${bad?.[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${bad?.index}: ${JSON.stringify(text.slice(Math.max(0, (bad?.index ?? 0) - 40), (bad?.index ?? 0) + 40))}`,
    );
    for (const line of text.split("\n")) {
        const t = line.trimStart();
        if (t.startsWith("::")) {
            const m = OWN_COMMAND.exec(t);
            assert.ok(
                m && !m[3].includes("::"),
                `${what}: a workflow command that pko-guard did not mean: ${JSON.stringify(line)}`,
            );
        }
        assert.ok(!line.includes("##["), `${what}: a legacy workflow command marker: ${JSON.stringify(line)}`);
    }
    for (const s of secrets) assert.ok(!text.includes(s), `${what}: the secret ${s} is printed`);
}

/**
 * Bad input's answer: exit `code` (2, or 0 for a counted skip) and one line on stderr, matching `re` (so no
 * stack trace and no quoted document).
 */
export function assertOneLine(r: { code: number | null; stderr: string }, re: RegExp, code = 2): void {
    assert.strictEqual(r.code, code, r.stderr);
    const lines = r.stderr.trimEnd().split("\n");
    assert.strictEqual(lines.length, 1, r.stderr);
    assert.match(lines[0], re);
}

export interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
}

export function pkoGuard(
    args: string[],
    o: { cwd: string; input?: string | Buffer; env?: NodeJS.ProcessEnv; timeout?: number },
): Run {
    const r = spawnSync(process.execPath, [CLI, ...args], {
        encoding: "utf8",
        cwd: o.cwd,
        input: o.input,
        env: o.env ?? { ...process.env, GITHUB_ACTIONS: "" },
        timeout: o.timeout ?? 120000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Hostile strings: each must come out inert, in text and in Markdown. */
export const CORPUS = [
    "x\n::error::PWNED",
    "x\r\n::set-output name=token::PWNED",
    "x\n::stop-commands::PWNED\n::error::after",
    "  ::add-mask::PWNED",
    "::warning file=a,line=1::PWNED",
    "x\n##[error]PWNED",
    "\u001b[31mRED\u001b[0m\u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007",
    "\u001b[2J\u001b[H clear screen",
    "bell\u0007 backspace\b nul\u0000 del\u007f c1\u009b[31m",
    "line\u2028separator\u2029paragraph",
    "rtl \u202eevil.yaml\u202c and \u2066isolate\u2069",
    "`code` **bold** _em_ [link](https://evil.example) ![img](https://evil.example/x.png)",
    "<script>alert(1)</script> <img src=x onerror=alert(1)> &amp; <!-- c -->",
    "https://evil.example www.evil.example mail@evil.example",
    "| a | b |\n|---|---|",
    "\t# heading\n> quote\n- item",
    "%0A::error::PWNED %25",
];

/** A production Stack that tracks a branch (one blocking finding of pko-stack-prod-pinned-commit), as a manifest. */
export function prodStackYaml(branch = "release"): string {
    return [
        "apiVersion: pulumi.com/v1",
        "kind: Stack",
        "metadata:",
        "  name: app",
        "  namespace: pulumi",
        "  labels: {env: production}",
        "spec:",
        "  stack: acme/app/prod",
        "  projectRepo: https://github.com/acme/app",
        `  branch: ${branch}`,
        "",
    ].join("\n");
}
