/**
 * The user-facing examples stay true: the Argo CD + PKO governed project passes the gate with the real
 * CLI (advisories only), the strict profile turns those advisories into blocking ones, and the GitHub
 * Actions workflow is valid YAML that gates with SARIF upload. The example's README works as written: its shell
 * lines, run from a fresh shell (an empty HOME, a PATH without the toolchain) at the root of a clone's layout.
 */
import * as assert from "assert";
import { requireToolchain } from "../../support/helpers";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { Fixture } from "../../../harness/expect";
import { prepareFixtureStack } from "../../../harness/legs/real";
import { StackRef } from "../../../engine/pulumi-cli";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { toolchainBin } from "../../../support/toolchain";

const EXAMPLE = path.join(REPO_ROOT, "examples", "argocd-pko");

describe("examples", function () {
    this.timeout(600000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-example-"));
    let stack: StackRef | undefined;

    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("the GitHub Actions workflow runs the gate and uploads SARIF", () => {
        const wf = YAML.parse(
            fs.readFileSync(path.join(REPO_ROOT, "examples", "github-actions", "pko-guard.yml"), "utf8"),
        );
        const steps: { run?: string; uses?: string; with?: Record<string, unknown> }[] = wf.jobs.gate.steps;
        assert.ok(
            steps.some(
                (s) =>
                    /^[^/]+\/pko-guard@/.test(s.uses ?? "") &&
                    s.with?.command === "gate" &&
                    s.with?.["upload-sarif"] === true,
            ),
        );
        assert.ok(wf.on.pull_request);
    });

    it("the example's README, run as written from a fresh shell with a local backend, passes the gate", function () {
        requireToolchain(this);
        // A clone's layout: the example, the built command and packages, the toolchain in .cache/toolchain/bin.
        const clone = path.join(tmp, "clone");
        fs.mkdirSync(path.join(clone, ".cache", "toolchain"), { recursive: true });
        fs.cpSync(EXAMPLE, path.join(clone, "examples", "argocd-pko"), { recursive: true });
        for (const d of ["package.json", "node_modules", "bin", "pack"])
            fs.symlinkSync(path.join(REPO_ROOT, d), path.join(clone, d));
        fs.symlinkSync(toolchainBin(), path.join(clone, ".cache", "toolchain", "bin"));
        const readme = fs.readFileSync(path.join(EXAMPLE, "README.md"), "utf8");
        const script = /```sh\n([\s\S]*?)```/.exec(readme)![1];
        const home = path.join(tmp, "home");
        fs.mkdirSync(home);
        const r = spawnSync("bash", ["--noprofile", "--norc", "-e", "-c", script], {
            cwd: clone,
            encoding: "utf8",
            // A fresh shell; PULUMI_HOME keeps the CLI's workspace files in the test's folder (the CLI finds the
            // user's home from the password database, not HOME).
            env: {
                HOME: home,
                PATH: [path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter),
                PULUMI_HOME: path.join(tmp, "pulumi-home"),
            },
            timeout: 300000,
        });
        assert.strictEqual(r.status, 0, `${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /^pko-guard: previewing argocd-pko-governed \(stack dev\)/m);
        assert.match(r.stdout, /^plan: 15 to create, 0 to update, 0 to delete, 0 unchanged$/m);
        assert.match(r.stdout, /^argocd-pko-governed \(stack dev\): 2 violation\(s\), 2 advisory, 0 waived, 0 blocking: PASS$/m);
        assert.ok(fs.existsSync(path.join(home, ".pulumi-local", ".pulumi", "stacks")), "the state is in the local backend");
    });

    it("the Argo CD + PKO governed project passes the gate (advisories only), and fails it under the strict profile", async function () {
        const toolchain = requireToolchain(this);
        const fixture: Fixture = {
            name: "argocd-pko",
            dir: EXAMPLE,
            project: "argocd-pko-governed",
            expect: {
                description: "example",
                stack: "dev",
                config: { pulumiAccessToken: { value: "pul-00000000000000000000000000000000000000ex", secret: true } },
                violations: [],
            },
        };
        const prepared = await prepareFixtureStack(fixture, toolchain, tmp, 120000);
        if ("error" in prepared) throw new Error(prepared.error);
        stack = prepared;
        const gate = (...extra: string[]) =>
            spawnSync(process.execPath, [CLI_ENTRY, "gate", stack!.cwd, "--stack", stack!.stack, ...extra], {
                encoding: "utf8",
                env: stack!.env,
            });
        const r = gate("--report", `json=${path.join(tmp, "r.json")}`);
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
        const rows = JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings;
        assert.ok(
            rows.length > 0 &&
                rows.every(
                    (x: { level: string; policy: string }) =>
                        x.level === "advisory" && x.policy === "pko-stack-esc-or-oidc-preferred",
                ),
            JSON.stringify(rows),
        );
        assert.strictEqual(gate("--config", path.join(REPO_ROOT, "examples", "profiles", "strict.json")).status, 1);
    });
});
