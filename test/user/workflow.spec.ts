/**
 * The GitHub Actions example lints clean with actionlint (built from the Go module proxy into
 * .cache/tools/bin, or PKO_GUARD_TOOLS_BIN). Skipped, saying why, only when the linter cannot be built;
 * and the example keeps what users need (pinned CLI, git install, fork handling, permissions, triggers).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../core/paths";

const ACTIONLINT = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.8";
const WORKFLOW = path.join(REPO_ROOT, "examples", "github-actions", "pko-guard.yml");

/** The actionlint binary, built when missing; a reason string when it cannot be built. */
function actionlint(): string | { reason: string } {
    const bin = process.env.PKO_GUARD_TOOLS_BIN ?? path.join(REPO_ROOT, ".cache", "tools", "bin");
    const exe = path.join(bin, "actionlint");
    if (fs.existsSync(exe)) return exe;
    const go = spawnSync("go", ["version"], { encoding: "utf8" });
    if (go.status !== 0) return { reason: "go is not installed, so actionlint cannot be built" };
    fs.mkdirSync(bin, { recursive: true });
    const r = spawnSync("go", ["install", ACTIONLINT], { encoding: "utf8", env: { ...process.env, GOBIN: bin, GOFLAGS: "-mod=mod" }, timeout: 900000 });
    if (r.status !== 0 || !fs.existsSync(exe)) return { reason: `go install ${ACTIONLINT} failed: ${(r.stderr || "timed out").trim().split("\n").pop()}` };
    return exe;
}

describe("the GitHub Actions example", function () {
    this.timeout(1000000);

    it("lints clean with actionlint", function () {
        const lint = actionlint();
        if (typeof lint !== "string") {
            process.stderr.write(`      skipped: ${lint.reason}\n`);
            this.skip();
        }
        const r = spawnSync(lint as string, ["-no-color", "-shellcheck=", "-pyflakes=", WORKFLOW], { encoding: "utf8" });
        assert.strictEqual(r.status, 0, `${r.stdout}${r.stderr}`);
        // The linter does find problems (so a clean result means something).
        const broken = fs.readFileSync(WORKFLOW, "utf8").replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    needs: nope");
        const b = spawnSync(lint as string, ["-no-color", "-shellcheck=", "-pyflakes=", "-"], { encoding: "utf8", input: broken });
        assert.notStrictEqual(b.status, 0);
    });

    it("pins the Pulumi CLI to the SDK's version, installs pko-guard from git, handles forks and fires on policy changes", () => {
        const wf = YAML.parse(fs.readFileSync(WORKFLOW, "utf8"));
        const sdk = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).dependencies["@pulumi/pulumi"];
        assert.strictEqual(String(wf.env.PULUMI_VERSION), sdk);
        assert.match(wf.env.PKO_GUARD_SOURCE, /^github:[^/]+\/pko-guard#.+/);
        assert.deepStrictEqual(wf.permissions, { contents: "read", actions: "read", "security-events": "write", checks: "write" });
        assert.ok(wf.on.pull_request.paths.includes("policy/**"));
        const steps: { uses?: string; if?: string; name?: string; with?: Record<string, unknown> }[] = wf.jobs.gate.steps;
        const upload = steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif"))!;
        assert.match(upload.if!, /IS_FORK != 'true'/);
        assert.strictEqual(steps.find((s) => s.uses?.startsWith("pulumi/actions"))!.with!["pulumi-version"], "${{ env.PULUMI_VERSION }}");
        assert.strictEqual(steps.find((s) => s.uses?.startsWith("actions/setup-node"))!.with!.cache, "npm");
    });
});
