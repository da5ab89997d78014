/**
 * The mock leg: run the fixture program under Pulumi runtime mocks (preview mode) in a child process,
 * capture every registration in the engine's wire form, and hand the resources to the pack's real
 * analyzer over gRPC with the engine's reconciled policy config. Policies thus run through the same
 * deserialization, secret unwrapping, unknown handling and enforcement-level code as in `pulumi preview`.
 * The timeout bounds the whole leg: the program (its process group is killed) and the analyzer's work
 * (a pack that overruns is killed, and the leg is an error).
 */
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";
import { spawnTracked, withDeadline, withTempDir } from "../../support/process";
import { Analyzer, WireResource } from "../analyzer";
import { Fixture } from "../expect";
import { PackConfig } from "../../evaluation/pack-config";
import { Row } from "../../evaluation/rows";
import { LegResult, legResult, remediationChecks } from "./result";
import { maskAutonames } from "../autonames";

/** A pack of the run, as the mock leg drives it. */
export interface MockPack {
    /** The pack's analyzer (a new one when the last was stopped after a deadline). */
    analyzer: () => Promise<Analyzer>;
    /** The config the pack is configured with for a fixture (the engine's reconciled policy config). */
    config: (analyzer: Analyzer, fixture: Fixture) => PackConfig;
}

export interface MockOptions {
    /** Every pack of the run, in order: each judges the program's registrations as in one preview. */
    packs: MockPack[];
    timeoutMs: number;
}

/** The compiled child-process runner (the harness always runs from compiled JavaScript in bin/). */
const PROGRAM_RUNNER = path.join(REPO_ROOT, "bin", "harness", "legs", "mock-program.js");

class MockLegError extends Error {}

/** Runs the fixture program under mocks; resolves with the registrations or rejects with one line. */
export function runProgramUnderMocks(fixture: Fixture, timeoutMs: number): Promise<WireResource[]> {
    return withTempDir("mock", async (tmp) => {
        const out = path.join(tmp, "resources.json");
        const config: Record<string, string> = {};
        const secretKeys: string[] = [];
        for (const [key, v] of Object.entries(fixture.expect.config)) {
            const full = key.includes(":") ? key : `${fixture.project}:${key}`;
            config[full] = v.value;
            if (v.secret) secretKeys.push(full);
        }
        const p = spawnTracked(
            process.execPath,
            [PROGRAM_RUNNER, fixture.dir, fixture.project, fixture.expect.stack, out, fixture.runtime ?? "nodejs"],
            {
                cwd: fixture.dir,
                env: {
                    ...process.env,
                    PULUMI_CONFIG: JSON.stringify(config),
                    PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(secretKeys),
                },
                stdio: ["ignore", "ignore", "pipe"],
                timeoutMs,
            },
        );
        let stderr = "";
        p.child.stderr!.on("data", (d) => (stderr = (stderr + d.toString()).slice(-8000)));
        const { code, error } = await p.exited;
        if (error) throw new MockLegError(`cannot start the mock program runner: ${error.message}`);
        if (p.timedOut()) throw new MockLegError(`program timed out after ${Math.round(timeoutMs / 1000)} s`);
        if (code !== 0)
            throw new MockLegError(
                stderr.trim().split("\n").filter(Boolean).pop() ?? `program runner exited with code ${code}`,
            );
        try {
            return JSON.parse(fs.readFileSync(out, "utf8")) as WireResource[];
        } catch (e) {
            throw new MockLegError(`unreadable program output: ${(e as Error).message}`);
        }
    });
}

/**
 * The mock leg of a fixture: its program under mocks (or the registrations of a run already made, `registered`),
 * judged by every pack of the run.
 */
export async function runMockLeg(
    fixture: Fixture,
    options: MockOptions,
    registered?: { resources: WireResource[]; started: number },
): Promise<LegResult> {
    const started = registered?.started ?? Date.now();
    const result = legResult("mock", started);
    if (fixture.expect.realOnly) return result.skipped(`real-only: ${fixture.expect.realOnly}`);
    try {
        const resources = registered?.resources ?? (await runProgramUnderMocks(fixture, options.timeoutMs));
        if (resources.length === 0) return result.error("program registered no resources");
        const rows: Row[] = [];
        const remediations: Analyzer["lastRemediations"] = [];
        for (const pack of options.packs) {
            const analyzer = await pack.analyzer();
            const remaining = Math.max(options.timeoutMs - (Date.now() - started), 1);
            const analysis = (async () => {
                await analyzer.configure(pack.config(analyzer, fixture), {
                    project: fixture.project,
                    stack: fixture.expect.stack,
                });
                return analyzer.analyze(resources);
            })();
            rows.push(
                ...(await withDeadline(analysis, remaining, () => {
                    // A pack still busy past the deadline is killed; the next fixture gets a new one.
                    analyzer.stop();
                    return new MockLegError(
                        `the policy pack timed out after ${Math.round(options.timeoutMs / 1000)} s`,
                    );
                })),
            );
            remediations.push(...analyzer.lastRemediations);
        }
        // Names the provider would generate are random: masked the same way in both legs (autonames.ts).
        const generated = resources.map((r) => (r as WireResource & { autonamed?: string }).autonamed ?? "");
        return result.ran(maskAutonames(rows, generated), remediationChecks(fixture.expect.remediations, remediations));
    } catch (e) {
        return result.error(e instanceof Error ? e.message : String(e));
    }
}
