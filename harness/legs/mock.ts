/**
 * The mock leg: run the fixture program under Pulumi runtime mocks (preview mode) in a child process,
 * capture every registration in the engine's wire form, and hand the resources to the pack's real
 * analyzer over gRPC with the engine's reconciled policy config, so policies run through the same
 * deserialization, secret, unknown and enforcement-level code as in `pulumi preview`.
 */
import { withDeadline } from "../../support/process";
import { runInWorker } from "./mock-workers";
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

class MockLegError extends Error {}

/** Runs the fixture program under mocks (in a warm worker); resolves with the registrations or rejects with one line. */
export async function runProgramUnderMocks(fixture: Fixture, timeoutMs: number): Promise<WireResource[]> {
    const config: Record<string, string> = {};
    const secretKeys: string[] = [];
    for (const [key, v] of Object.entries(fixture.expect.config)) {
        const full = key.includes(":") ? key : `${fixture.project}:${key}`;
        config[full] = v.value;
        if (v.secret) secretKeys.push(full);
    }
    const job = {
        dir: fixture.dir,
        project: fixture.project,
        stack: fixture.expect.stack,
        runtime: fixture.runtime ?? "nodejs",
        config: JSON.stringify(config),
        secretKeys: JSON.stringify(secretKeys),
    };
    try {
        return (await runInWorker(job, timeoutMs)) as WireResource[];
    } catch (e) {
        throw new MockLegError((e as Error).message);
    }
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
