/**
 * The gate on a user's own project: a real `pulumi preview --policy-pack` of an existing stack, with
 * documented exit codes (0 pass, 1 blocking violations, 2 bad usage or tool error), a verdict table and
 * JUnit/SARIF/JSON reports that validate and never contain a secret.
 */
import * as assert from "assert";
import { requireToolchain } from "../../support/helpers";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../../harness/expect";
import { prepareFixtureStack } from "../../../harness/legs/real";
import { StackRef } from "../../../engine/pulumi-cli";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { Toolchain } from "../../../support/toolchain";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";
import { alive, descendants, waitFor } from "../../support/processes";
import { spawn } from "child_process";

const CLI = CLI_ENTRY;

function gate(args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
    const r = spawnSync(process.execPath, [CLI, "gate", ...args], { encoding: "utf8", env, cwd, timeout: 300000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Standard error without the preview's progress lines (cli/gate.ts): what is left must be the one error line. */
function errorLines(stderr: string): string[] {
    return stderr
        .trim()
        .split("\n")
        .filter((l) => !/^pko-guard: preview(ing |: )/.test(l));
}

describe("pko-guard gate", function () {
    this.timeout(600000);
    let toolchain: Toolchain | undefined;
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-gate-"));
    const stacks: Record<string, StackRef> = {};

    before(async function () {
        toolchain = requireToolchain(this);
        for (const name of ["creds-secret-wrapped-literal", "governed-oidc-esc", "rbac-unused-sa-admin"]) {
            const p = await prepareFixtureStack(
                loadFixture(path.join(REPO_ROOT, "fixtures", name)),
                toolchain,
                path.join(tmp, name),
                120000,
            );
            if ("error" in p) throw new Error(p.error);
            stacks[name] = p;
        }
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("exits 1 on a mandatory violation, with a table and valid reports that hide the secret", async () => {
        const s = stacks["creds-secret-wrapped-literal"];
        const out = (f: string) => path.join(tmp, f);
        const r = gate(
            [
                s.cwd,
                "--stack",
                s.stack,
                "--report",
                `junit=${out("g.xml")}`,
                "--report",
                `sarif=${out("g.sarif")}`,
                "--report",
                `json=${out("g.json")}`,
            ],
            s.env,
        );
        assert.strictEqual(r.code, 1, r.stderr);
        assert.match(r.stdout, /pko-stack-credentials-from-secrets/);
        assert.match(r.stdout, /1 blocking: FAIL/);
        const xml = fs.readFileSync(out("g.xml"), "utf8");
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<failure/);
        const sarif = JSON.parse(fs.readFileSync(out("g.sarif"), "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        assert.ok(
            sarif.runs[0].results.some(
                (x: { ruleId: string; level: string }) =>
                    x.ruleId === "pko-stack-credentials-from-secrets" && x.level === "error",
            ),
        );
        assert.deepStrictEqual(jsonReportErrors(JSON.parse(fs.readFileSync(out("g.json"), "utf8"))), []);
        const secret = "pul-0123456789abcdef0123456789abcdef01234567";
        for (const text of [r.stdout, r.stderr, xml, JSON.stringify(sarif), fs.readFileSync(out("g.json"), "utf8")])
            assert.ok(!text.includes(secret));
    });

    it("exits 0 on a clean project, and on advisories unless --fail-on-advisory", () => {
        const clean = stacks["governed-oidc-esc"];
        assert.strictEqual(gate([clean.cwd, "--stack", clean.stack], clean.env).code, 0);
        // Without the project's toolchain, the pulumi on the user's PATH is used as installed.
        const own = gate([clean.cwd, "--stack", clean.stack], {
            ...clean.env,
            PKO_GUARD_TOOLCHAIN_BIN: "/nonexistent",
        });
        assert.strictEqual(own.code, 0, own.stderr);
        const adv = stacks["rbac-unused-sa-admin"];
        const r = gate([adv.cwd, "--stack", adv.stack], adv.env);
        assert.strictEqual(r.code, 0, r.stderr);
        assert.match(r.stdout, /rbac-no-cluster-admin-serviceaccount/);
        assert.strictEqual(gate([adv.cwd, "--stack", adv.stack, "--fail-on-advisory"], adv.env).code, 1);
    });

    it("applies a policy config (strict profile makes advisories block)", () => {
        const adv = stacks["rbac-unused-sa-admin"];
        const r = gate(
            [adv.cwd, "--stack", adv.stack, "--config", path.join(REPO_ROOT, "examples", "profiles", "strict.json")],
            adv.env,
        );
        assert.strictEqual(r.code, 1, r.stderr);
    });

    for (const [how, expected] of [
        ["--timeout", 2],
        ["SIGINT", 130],
        ["SIGTERM", 143],
    ] as const) {
        it(`leaves no process behind when ${how} ends a hanging preview (exit ${expected})`, async () => {
            const hangs = await prepareFixtureStack(
                loadFixture(path.join(REPO_ROOT, "test", "data", "bad-fixtures", "hangs")),
                toolchain!,
                path.join(tmp, `hangs-${how}`),
                120000,
            );
            if ("error" in hangs) throw new Error(hangs.error);
            const child = spawn(
                process.execPath,
                [CLI, "gate", hangs.cwd, "--stack", hangs.stack, ...(how === "--timeout" ? ["--timeout", "20"] : [])],
                { env: hangs.env, stdio: ["ignore", "pipe", "pipe"] },
            );
            let stderr = "";
            child.stderr.on("data", (d) => (stderr += d));
            const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
            // The CLI, its language host and the program are running (the program never finishes).
            const seen = new Set<number>();
            await waitFor(
                "the preview's processes",
                () => {
                    for (const p of descendants(child.pid!)) seen.add(p);
                    return seen.size >= 3;
                },
                120000,
            );
            if (how !== "--timeout") child.kill(how);
            const code = await exited;
            assert.strictEqual(code, expected, stderr);
            if (how === "--timeout")
                assert.deepStrictEqual(errorLines(stderr), ["pko-guard: pulumi preview timed out"]);
            await waitFor("every process of the preview to end", () => [...seen].every((p) => !alive(p)), 10000).catch(
                () => undefined,
            );
            assert.deepStrictEqual([...seen].filter(alive), [], "processes survived the gate");
        });
    }

    it("exits 2 with one line on bad usage and tool errors", () => {
        const s = stacks["governed-oidc-esc"];
        const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
            [[s.cwd], s.env, /required option/],
            [["/no/such/project", "--stack", "dev"], s.env, /no such project folder/],
            [[s.cwd, "--stack", "nope"], s.env, /pulumi preview failed/],
            [[s.cwd, "--stack", s.stack, "--config", "/no/such.json"], s.env, /cannot read policy config/],
            [[s.cwd, "--stack", s.stack, "--report", "pdf=x"], s.env, /FORMAT=FILE/],
            [[s.cwd, "--stack", s.stack, "--timeout", "1e9"], s.env, /at most 86400 seconds/],
            [
                [s.cwd, "--stack", s.stack],
                { ...s.env, PATH: "/usr/bin:/bin", PKO_GUARD_TOOLCHAIN_BIN: "/nonexistent" },
                /toolchain not found.*install the Pulumi CLI, or run: bash (\S+\/)?toolchain\/install\.sh gate$/,
            ],
        ];
        for (const [args, env, pattern] of cases) {
            const r = gate(args, env);
            assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
            const lines = errorLines(r.stderr);
            assert.strictEqual(lines.length, 1, r.stderr);
            assert.match(lines[0], pattern);
        }
    });
});
