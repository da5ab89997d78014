/**
 * The gate on a user's own project: a real `pulumi preview --policy-pack` of an existing stack, with
 * documented exit codes (0 pass, 1 blocking violations, 2 bad usage or tool error), a verdict table and
 * JUnit/SARIF/JSON reports that validate and never contain a secret.
 */
import * as assert from "assert";
import { requireToolchain } from "../helpers";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../harness/expect";
import { PreparedStack, prepareFixtureStack } from "../../harness/legs/real";
import { REPO_ROOT } from "../../harness/paths";
import { Toolchain } from "../../harness/toolchain";
import { jsonReportErrors, junitErrors, sarifErrors } from "../validators";

const CLI = path.join(REPO_ROOT, "bin", "harness", "pko-guard.js");

function gate(args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
    const r = spawnSync(process.execPath, [CLI, "gate", ...args], { encoding: "utf8", env, cwd, timeout: 300000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("pko-guard gate", function () {
    this.timeout(600000);
    let toolchain: Toolchain | undefined;
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-gate-"));
    const stacks: Record<string, PreparedStack> = {};

    before(async function () {
        toolchain = requireToolchain(this);
        for (const name of ["creds-secret-wrapped-literal", "governed-oidc-esc", "rbac-unused-sa-admin"]) {
            const p = await prepareFixtureStack(loadFixture(path.join(REPO_ROOT, "fixtures", name)), toolchain, path.join(tmp, name), 120000);
            if ("error" in p) throw new Error(p.error);
            stacks[name] = p;
        }
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("exits 1 on a mandatory violation, with a table and valid reports that hide the secret", async () => {
        const s = stacks["creds-secret-wrapped-literal"];
        const out = (f: string) => path.join(tmp, f);
        const r = gate([s.program, "--stack", s.stack, "--report", `junit=${out("g.xml")}`, "--report", `sarif=${out("g.sarif")}`, "--report", `json=${out("g.json")}`], s.env);
        assert.strictEqual(r.code, 1, r.stderr);
        assert.match(r.stdout, /pko-stack-credentials-from-secrets/);
        assert.match(r.stdout, /blocking: FAIL/);
        const xml = fs.readFileSync(out("g.xml"), "utf8");
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<failure/);
        const sarif = JSON.parse(fs.readFileSync(out("g.sarif"), "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        assert.ok(sarif.runs[0].results.some((x: { ruleId: string; level: string }) => x.ruleId === "pko-stack-credentials-from-secrets" && x.level === "error"));
        assert.deepStrictEqual(jsonReportErrors(JSON.parse(fs.readFileSync(out("g.json"), "utf8"))), []);
        const secret = "pul-0123456789abcdef0123456789abcdef01234567";
        for (const text of [r.stdout, r.stderr, xml, JSON.stringify(sarif), fs.readFileSync(out("g.json"), "utf8")]) assert.ok(!text.includes(secret));
    });

    it("exits 0 on a clean project, and on advisories unless --fail-on-advisory", () => {
        const clean = stacks["governed-oidc-esc"];
        assert.strictEqual(gate([clean.program, "--stack", clean.stack], clean.env).code, 0);
        // Without the project's toolchain, the pulumi on the user's PATH is used as installed.
        const own = gate([clean.program, "--stack", clean.stack], { ...clean.env, PKO_GUARD_TOOLCHAIN_BIN: "/nonexistent" });
        assert.strictEqual(own.code, 0, own.stderr);
        const adv = stacks["rbac-unused-sa-admin"];
        const r = gate([adv.program, "--stack", adv.stack], adv.env);
        assert.strictEqual(r.code, 0, r.stderr);
        assert.match(r.stdout, /rbac-no-cluster-admin-serviceaccount/);
        assert.strictEqual(gate([adv.program, "--stack", adv.stack, "--fail-on-advisory"], adv.env).code, 1);
    });

    it("applies a policy config (strict profile makes advisories block)", () => {
        const adv = stacks["rbac-unused-sa-admin"];
        const r = gate([adv.program, "--stack", adv.stack, "--config", path.join(REPO_ROOT, "examples", "profiles", "strict.json")], adv.env);
        assert.strictEqual(r.code, 1, r.stderr);
    });

    it("exits 2 with one line on bad usage and tool errors", () => {
        const s = stacks["governed-oidc-esc"];
        const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
            [[s.program], s.env, /required option/],
            [["/no/such/project", "--stack", "dev"], s.env, /no such project folder/],
            [[s.program, "--stack", "nope"], s.env, /pulumi preview failed/],
            [[s.program, "--stack", s.stack, "--config", "/no/such.json"], s.env, /cannot read policy config/],
            [[s.program, "--stack", s.stack, "--report", "pdf=x"], s.env, /FORMAT=FILE/],
            [[s.program, "--stack", s.stack, "--timeout", "1e9"], s.env, /at most 86400 seconds/],
            [[s.program, "--stack", s.stack], { ...s.env, PATH: "/usr/bin:/bin", PKO_GUARD_TOOLCHAIN_BIN: "/nonexistent" }, /toolchain not found.*npm run setup/],
        ];
        for (const [args, env, pattern] of cases) {
            const r = gate(args, env);
            assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
            const lines = r.stderr.trim().split("\n");
            assert.strictEqual(lines.length, 1, r.stderr);
            assert.match(lines[0], pattern);
        }
    });
});
