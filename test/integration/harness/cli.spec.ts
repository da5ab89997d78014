/** The harness CLI: exit codes, one-line errors, per-fixture faults. */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { HARNESS_ENTRY, REPO_ROOT } from "../../../support/paths";

const CLI = HARNESS_ENTRY;
const BAD = path.join(REPO_ROOT, "test", "data", "bad-fixtures");

function harness(...args: string[]) {
    return harnessIn({}, ...args);
}

/** Runs the harness; `env` adds to the environment (e.g. the run's own PKO_GUARD_TMPDIR). */
function harnessIn(env: NodeJS.ProcessEnv, ...args: string[]) {
    const r = spawnSync(process.execPath, [CLI, ...args], {
        encoding: "utf8",
        cwd: REPO_ROOT,
        timeout: 180000,
        env: { ...process.env, ...env },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function assertOneLineError(stderr: string, pattern: RegExp) {
    const lines = stderr.trim().split("\n");
    assert.strictEqual(lines.length, 1, `expected one line, got:\n${stderr}`);
    assert.match(lines[0], pattern);
    assert.ok(!/\n\s+at /.test(stderr), "stack trace printed");
}

describe("harness CLI", function () {
    this.timeout(300000);

    it("ends, as pko-guard's commands do, once its output has gone into a pipe (support/exit.ts), with its exit code", () => {
        // Both entry points end through exitWhenWritten (test/integration/cli/check.spec.ts runs pko-guard check
        // through a pipe).
        for (const entry of ["harness/cli.ts", "cli/pko-guard.ts"]) {
            const source = fs.readFileSync(path.join(REPO_ROOT, entry), "utf8");
            assert.match(source, /main\(process\.argv\.slice\(2\)\)\.then\(\s*(\(code\) => )?exitWhenWritten/, entry);
            assert.doesNotMatch(source, /\(code\) => process\.exit\(code\)/, entry);
        }
        // The mechanism, through a shell's pipe (64 KiB of buffer): 1 MiB written, exit code 3.
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-exit-"));
        try {
            const script = `process.stdout.write("x".repeat(1 << 20)); require(${JSON.stringify(path.join(REPO_ROOT, "bin", "support", "exit.js"))}).exitWhenWritten(3);`;
            const r = spawnSync(
                "bash",
                ["-c", `"${process.execPath}" -e '${script}' | cat > out.txt; echo "exit \${PIPESTATUS[0]}"`],
                { cwd: tmp, encoding: "utf8", timeout: 60000 },
            );
            assert.deepStrictEqual([r.stdout, r.stderr], ["exit 3\n", ""]);
            assert.strictEqual(fs.statSync(path.join(tmp, "out.txt")).size, 1 << 20);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });

    it("exits 2 with one line on an unknown flag or leg", () => {
        let r = harness("--bogus");
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /unknown option/);
        r = harness("--leg", "sideways");
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /sideways/);
        r = harness("--timeout", "-1");
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /positive number of seconds/);
        r = harness("--timeout", "2147484");
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /at most 86400 seconds/);
    });

    it("exits 2 on a missing folder, an invalid expect.yaml, invalid policy config", () => {
        let r = harness("/no/such/fixture");
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /no such fixture folder/);
        r = harness(path.join(BAD, "bad-expect"));
        assert.strictEqual(r.code, 2);
        assertOneLineError(r.stderr, /expect\.yaml:\d+: \/violations\/0\/count must be >= 1/);
        r = harness(path.join(BAD, "bad-config"));
        assert.strictEqual(r.code, 2);
        assertOneLineError(
            r.stderr,
            /policy-config\.json: pko-stack-prod-pinned-commit: \/allowUnpinnableSources must be boolean/,
        );
    });

    it("reports a throwing, hanging, empty or uncompilable program as a per-fixture error and exits 1", () => {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-cli-"));
        // The run's own temporary root: what it leaves behind is counted there, not in the shared folder.
        const root = path.join(tmp, "root");
        const json = path.join(tmp, "report.json");
        const dirs = ["throws", "hangs", "registers-nothing", "syntax-error"].map((d) => path.join(BAD, d));
        const r = harnessIn({ PKO_GUARD_TMPDIR: root }, "--timeout", "8", "--json", json, ...dirs);
        assert.strictEqual(r.code, 1, r.stderr);
        const report = JSON.parse(fs.readFileSync(json, "utf8"));
        const outcomes = Object.fromEntries(report.fixtures.map((f: any) => [f.fixture, [f.outcome, f.legs[0].error]]));
        assert.deepStrictEqual(Object.keys(outcomes).sort(), ["hangs", "registers-nothing", "syntax-error", "throws"]);
        assert.match(outcomes.throws[1], /boom from the fixture program/);
        assert.match(outcomes.hangs[1], /timed out after 8 s/);
        assert.match(outcomes["registers-nothing"][1], /registered no resources/);
        assert.match(outcomes["syntax-error"][1], /Unable to compile TypeScript.*TS1005/);
        for (const o of Object.values(outcomes)) assert.strictEqual((o as string[])[0], "error");
        // The mock leg's workers need no temporary folder, so the root may never have been made.
        assert.deepStrictEqual(fs.existsSync(root) ? fs.readdirSync(root) : [], [], "temporary folders left behind");
        fs.rmSync(tmp, { recursive: true, force: true });
    });

    it("exits 1 when a fixture's expectations are wrong", () => {
        // A copy of a fixture in a temporary folder (never in the source tree), beside links to the
        // fixtures' _lib and the repository's node_modules so its imports resolve as in fixtures/.
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-cli-"));
        const tmp = path.join(root, "fixtures", "wrong-count");
        try {
            fs.mkdirSync(tmp, { recursive: true });
            fs.symlinkSync(path.join(REPO_ROOT, "fixtures", "_lib"), path.join(root, "fixtures", "_lib"));
            fs.symlinkSync(
                path.join(REPO_ROOT, "fixtures", "tsconfig.json"),
                path.join(root, "fixtures", "tsconfig.json"),
            );
            fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"));
            const src = path.join(REPO_ROOT, "fixtures", "creds-literal-token");
            for (const f of ["Pulumi.yaml", "index.ts"]) fs.copyFileSync(path.join(src, f), path.join(tmp, f));
            fs.writeFileSync(
                path.join(tmp, "expect.yaml"),
                "apiVersion: pko-guard/v1\nkind: Fixture\ndescription: wrong count on purpose\nviolations:\n  - policy: pko-stack-credentials-from-secrets\n    resource: app-dev\n    count: 2\n",
            );
            const r = harness(tmp);
            assert.strictEqual(r.code, 1);
            // One line per fixture, then each mismatch with names whole; no table unless --verbose.
            assert.match(r.stdout, /^MISMATCH wrong-count {2}mock {2}2 rows$/m);
            assert.match(
                r.stdout,
                /^MISMATCH wrong-count \[mock\] pko-stack-credentials-from-secrets on app-dev: expected 2, got 1$/m,
            );
            assert.doesNotMatch(r.stdout, /[┌│]/);
            assert.doesNotMatch(r.stdout, /\u001b\[/, "no colour when stdout is not a terminal");
            for (const line of r.stdout.split("\n"))
                assert.ok(line.length <= 120, `line longer than the default width: ${line}`);
            const verbose = harness("--verbose", tmp);
            assert.match(verbose.stdout, /│ wrong-count +│ mock +│ pko-stack-credentials-from-secrets +│/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});
