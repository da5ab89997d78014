/**
 * The GitHub Actions example lints clean with actionlint (built from the Go module proxy into
 * .cache/tools/bin, or PKO_GUARD_TOOLS_BIN). Skipped, saying why, only when the linter cannot be built;
 * and the example keeps what users need (pinned CLI, the pko-guard action at a pinned ref, fork handling,
 * permissions, triggers).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../../../support/paths";
import { actionlint } from "../../../support/actionlint";

const WORKFLOW = path.join(REPO_ROOT, "examples", "github-actions", "pko-guard.yml");

describe("the GitHub Actions example", function () {
    this.timeout(1000000);

    it("lints clean with actionlint", function () {
        const lint = actionlint();
        if (typeof lint !== "string") {
            process.stderr.write(`      skipped: ${lint.reason}\n`);
            this.skip();
        }
        const r = spawnSync(lint as string, ["-no-color", "-shellcheck=", "-pyflakes=", WORKFLOW], {
            encoding: "utf8",
        });
        assert.strictEqual(r.status, 0, `${r.stdout}${r.stderr}`);
        // The linter does find problems (so a clean result means something).
        const broken = fs
            .readFileSync(WORKFLOW, "utf8")
            .replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    needs: nope");
        const b = spawnSync(lint as string, ["-no-color", "-shellcheck=", "-pyflakes=", "-"], {
            encoding: "utf8",
            input: broken,
        });
        assert.notStrictEqual(b.status, 0);
    });

    it("pins the Pulumi CLI to the SDK's version, gates through the pko-guard action, handles forks and fires on policy changes", () => {
        const wf = YAML.parse(fs.readFileSync(WORKFLOW, "utf8"));
        const sdk = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).dependencies[
            "@pulumi/pulumi"
        ];
        assert.strictEqual(String(wf.env.PULUMI_VERSION), sdk);
        assert.deepStrictEqual(wf.permissions, {
            contents: "read",
            actions: "read",
            "security-events": "write",
            checks: "write",
        });
        assert.ok(wf.on.pull_request.paths.includes("policy/**"));
        const steps: { uses?: string; if?: string; name?: string; with?: Record<string, unknown> }[] =
            wf.jobs.gate.steps;
        const gate = steps.find((s) => /^[^/]+\/pko-guard@.+/.test(s.uses ?? ""))!;
        assert.ok(gate, "the gate runs through the pko-guard action");
        assert.match(gate.if!, /IS_FORK != 'true'/);
        assert.strictEqual(gate.with!.command, "gate");
        assert.strictEqual(gate.with!["upload-sarif"], true);
        assert.strictEqual(
            steps.find((s) => s.uses?.startsWith("pulumi/actions"))!.with!["pulumi-version"],
            "${{ env.PULUMI_VERSION }}",
        );
        assert.strictEqual(steps.find((s) => s.uses?.startsWith("actions/setup-node"))!.with!.cache, "npm");
    });
});
