/**
 * Signals and the gate's children (issue 19 item 10), with the real Pulumi CLI and language host: a preview
 * of a program that never finishes. SIGKILL of the gate (which it cannot catch) still ends the whole preview
 * tree (the CLI, the language host, the program, the policy pack) through the watchdog; SIGINT and SIGTERM
 * end it too and still write every requested report, marked interrupted. Conditions are awaited by walking
 * the process table from the gate's pid; nothing sleeps.
 */
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { StackRef } from "../../../engine/pulumi-cli";
import { initIsolatedStack } from "../../../harness/throwaway-stacks";
import { REPO_ROOT } from "../../../support/paths";
import { TOOLCHAIN_BIN } from "../../../support/toolchain";
import { alive, descendants, waitFor } from "../../support/processes";
import { CLI } from "../../support/inert";
import { jsonReportErrors, sarifErrors } from "../../support/validators";

describe("signals: the gate's children die with it (issue 19 item 10)", function () {
    this.timeout(900000);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-signals-"));
    const project = path.join(root, "hangs");
    let stack: StackRef;

    before(async function () {
        const pulumi = path.join(process.env.PKO_GUARD_TOOLCHAIN_BIN ?? TOOLCHAIN_BIN, "pulumi");
        if (!fs.existsSync(pulumi) || !fs.existsSync(path.join(path.dirname(pulumi), "pulumi-language-nodejs"))) {
            if (process.env.PKO_GUARD_SKIP_REAL === "1") this.skip();
            throw new Error(
                "the Pulumi CLI and nodejs language host are not built: run npm run setup (or set PKO_GUARD_SKIP_REAL=1)",
            );
        }
        fs.mkdirSync(project);
        fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: hangs\nruntime: nodejs\n");
        // A program that never finishes (no provider needed).
        fs.writeFileSync(
            path.join(project, "index.ts"),
            "export = new Promise(() => setInterval(() => undefined, 1 << 30));\n",
        );
        fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(project, "node_modules"));
        const s = await initIsolatedStack(
            { pulumi, binDir: path.dirname(pulumi) },
            project,
            path.join(root, ".state"),
            "dev",
            [],
            300000,
        );
        if ("error" in s) throw new Error(s.error);
        stack = s;
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    /** Starts the gate and resolves once its preview is running: the CLI, the language host and the program. */
    async function startGate(reports: string[]) {
        const child = spawn(process.execPath, [CLI, "gate", project, "-s", "dev", ...reports], {
            env: stack.env,
            stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (d) => (stderr += d));
        child.stdout.resume();
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
            child.once("exit", (code, signal) => r({ code, signal })),
        );
        const seen = new Set<number>();
        await waitFor(
            "the preview's processes (CLI, language host, program)",
            () => {
                for (const p of descendants(child.pid!)) seen.add(p);
                return seen.size >= 4;
            },
            300000,
        );
        return { child, exited, seen, stderr: () => stderr };
    }

    it("SIGKILL of the gate: every process of the preview ends", async () => {
        const g = await startGate([]);
        g.child.kill("SIGKILL");
        assert.deepStrictEqual(await g.exited, { code: null, signal: "SIGKILL" });
        await waitFor("every process of the preview to end", () => [...g.seen].every((p) => !alive(p)), 120000).catch(
            () => undefined,
        );
        assert.deepStrictEqual([...g.seen].filter(alive), [], "processes outlived the gate");
    });

    for (const [signal, expected] of [
        ["SIGTERM", 143],
        ["SIGINT", 130],
    ] as const) {
        it(`${signal}: exit ${expected}, every process ends, every report is written, marked interrupted`, async () => {
            const out = path.join(root, signal);
            const g = await startGate(["--report", `json=${out}/r.json`, "--report", `sarif=${out}/r.sarif`]);
            g.child.kill(signal);
            const r = await g.exited;
            assert.strictEqual(r.code, expected, g.stderr());
            await waitFor(
                "every process of the preview to end",
                () => [...g.seen].every((p) => !alive(p)),
                120000,
            ).catch(() => undefined);
            assert.deepStrictEqual([...g.seen].filter(alive), [], "processes outlived the gate");
            const json = JSON.parse(fs.readFileSync(path.join(out, "r.json"), "utf8"));
            assert.deepStrictEqual(jsonReportErrors(json), []);
            assert.strictEqual(json.projects[0].outcome, "error");
            assert.match(json.projects[0].error, new RegExp(`interrupted \\(${signal}\\)`));
            const sarif = JSON.parse(fs.readFileSync(path.join(out, "r.sarif"), "utf8"));
            assert.deepStrictEqual(sarifErrors(sarif), []);
            assert.strictEqual(sarif.runs[0].invocations[0].executionSuccessful, false);
        });
    }
});
