/**
 * The mock leg: run the fixture program under Pulumi runtime mocks (preview mode) in a child process,
 * capture every registration in the engine's wire form, and hand the resources to the pack's real
 * analyzer over gRPC with the engine's reconciled policy config. Policies thus run through the same
 * deserialization, secret unwrapping, unknown handling and enforcement-level code as in `pulumi preview`.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Analyzer, WireResource } from "../analyzer";
import { Fixture } from "../expect";
import { LegResult } from "../model";
import { maskAutonames } from "../autonames";
import { REPO_ROOT } from "../paths";
import { track, untrack } from "../cleanup";
import { PackConfig, loadPackConfig, reconcilePackConfig } from "../policy-config";

export interface MockOptions {
    analyzer: Analyzer;
    timeoutMs: number;
}

/** The compiled child-process runner (the harness always runs from compiled JavaScript in bin/). */
const PROGRAM_RUNNER = path.join(REPO_ROOT, "bin", "harness", "legs", "mock-program.js");

/** Runs the fixture program under mocks; resolves with the registrations or rejects with one line. */
export function runProgramUnderMocks(fixture: Fixture, timeoutMs: number): Promise<WireResource[]> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-mock-"));
    track(tmp);
    const out = path.join(tmp, "resources.json");
    const config: Record<string, string> = {};
    const secretKeys: string[] = [];
    for (const [key, v] of Object.entries(fixture.expect.config)) {
        const full = key.includes(":") ? key : `${fixture.project}:${key}`;
        config[full] = v.value;
        if (v.secret) secretKeys.push(full);
    }
    return new Promise<WireResource[]>((resolve, reject) => {
        const child = spawn(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", PROGRAM_RUNNER, fixture.dir, fixture.project, fixture.expect.stack, out],
            {
                cwd: fixture.dir,
                env: {
                    ...process.env,
                    PULUMI_CONFIG: JSON.stringify(config),
                    PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(secretKeys),
                    TS_NODE_TRANSPILE_ONLY: "true",
                },
                stdio: ["ignore", "ignore", "pipe"],
                detached: true,
            },
        );
        track(child);
        let stderr = "";
        child.stderr!.on("data", (d) => {
            stderr = (stderr + d.toString()).slice(-8000);
        });
        let timedOut = false;
        const timer = setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
        }, timeoutMs);
        const finish = () => {
            clearTimeout(timer);
            untrack(child);
            fs.rmSync(tmp, { recursive: true, force: true });
            untrack(tmp);
        };
        child.once("error", (e) => {
            finish();
            reject(new Error(`cannot start the mock program runner: ${e.message}`));
        });
        child.once("exit", (code) => {
            try {
                if (timedOut) {
                    reject(new Error(`program timed out after ${Math.round(timeoutMs / 1000)} s`));
                } else if (code !== 0) {
                    const line = stderr.trim().split("\n").filter(Boolean).pop() ?? `exit code ${code}`;
                    reject(new Error(line));
                } else {
                    resolve(JSON.parse(fs.readFileSync(out, "utf8")) as WireResource[]);
                }
            } catch (e) {
                reject(new Error(`unreadable program output: ${(e as Error).message}`));
            } finally {
                finish();
            }
        });
    });
}

/** The config the engine would send for this fixture. */
export function fixturePackConfig(analyzer: Analyzer, fixture: Fixture): PackConfig {
    const given = fixture.policyConfig ? loadPackConfig(fixture.policyConfig) : {};
    return reconcilePackConfig(analyzer.policies, given, fixture.policyConfig ?? "default config");
}

export async function runMockLeg(fixture: Fixture, options: MockOptions): Promise<LegResult> {
    const started = Date.now();
    try {
        const resources = await runProgramUnderMocks(fixture, options.timeoutMs);
        if (resources.length === 0) {
            return { leg: "mock", rows: [], error: "program registered no resources", durationMs: Date.now() - started };
        }
        await options.analyzer.configure(fixturePackConfig(options.analyzer, fixture), {
            project: fixture.project,
            stack: fixture.expect.stack,
        });
        // Names the provider would generate are random: masked the same way in both legs (autonames.ts).
        const generated = resources.map((r) => (r as WireResource & { autonamed?: string }).autonamed ?? "");
        const rows = maskAutonames(await options.analyzer.analyze(resources), generated);
        return { leg: "mock", rows, durationMs: Date.now() - started, details: { resources: resources.length } };
    } catch (e) {
        return { leg: "mock", rows: [], error: (e as Error).message, durationMs: Date.now() - started };
    }
}
