/**
 * The gate as a CI log shows it: a line when the preview starts and one a resource step as the engine reports it
 * (standard error), then the plan's summary (create/update/delete counts) before the verdict. On a program with a
 * `pulumi.dynamic` provider (fixtures/dynamic-provider-internal-api), which the engine runs through the toolchain's
 * `pulumi-resource-pulumi-nodejs` plugin: the provider's own `check` runs in the preview, and refuses a bad input.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../../harness/expect";
import { prepareFixtureStack } from "../../../harness/legs/real";
import { StackRef } from "../../../engine/pulumi-cli";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { requireToolchain } from "../../support/helpers";

function gate(args: string[], env: NodeJS.ProcessEnv) {
    const r = spawnSync(process.execPath, [CLI_ENTRY, "gate", ...args], { encoding: "utf8", env, timeout: 300000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("pko-guard gate progress and plan, on a program with a dynamic provider", function () {
    this.timeout(600000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-gate-progress-"));
    let stack: StackRef;

    before(async function () {
        const toolchain = requireToolchain(this);
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "dynamic-provider-internal-api"));
        const p = await prepareFixtureStack(fixture, toolchain, tmp, 120000);
        if ("error" in p) throw new Error(p.error);
        stack = p;
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("streams a line a resource, prints the plan, and judges the program like any other", () => {
        const r = gate([stack.cwd, "--stack", stack.stack], stack.env);
        assert.strictEqual(r.code, 1, r.stderr);
        const lines = r.stderr.trim().split("\n");
        assert.strictEqual(
            lines[0],
            `pko-guard: previewing dynamic-provider-internal-api (stack ${stack.stack}) with the pko-guard policy pack`,
        );
        const steps = lines.filter((l) => l.startsWith("pko-guard: preview: ")).sort();
        assert.deepStrictEqual(steps, [
            "pko-guard: preview: create kubernetes:pulumi.com/v1:Stack api-prod",
            "pko-guard: preview: create pulumi-nodejs:dynamic:Resource api-tenant",
            `pko-guard: preview: create pulumi:pulumi:Stack dynamic-provider-internal-api-${stack.stack}`,
        ]);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit/);
        assert.match(r.stdout, /^plan: 3 to create, 0 to update, 0 to delete, 0 unchanged\n.*1 blocking: FAIL\n$/m);
    });

    it("the provider's check runs in the preview through the plugin: an input it refuses fails the gate", () => {
        const set = spawnSync(stack.cli.pulumi, ["config", "set", "team", "Payments!", "-s", stack.stack], {
            cwd: stack.cwd,
            env: stack.env,
            encoding: "utf8",
        });
        assert.strictEqual(set.status, 0, set.stderr);
        const r = gate([stack.cwd, "--stack", stack.stack], stack.env);
        assert.strictEqual(r.code, 2, r.stdout);
        assert.match(r.stderr, /invalid team name \\?"Payments!\\?"/);
    });
});
