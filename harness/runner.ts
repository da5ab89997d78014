/**
 * The runner: loads fixtures, starts the pack's analyzer once, runs each fixture through the chosen
 * legs, and returns verdicts. Used by the CLI and by the tests.
 */
import * as fs from "fs";
import { Analyzer } from "./analyzer";
import { BadInputError, Fixture, discoverFixtures, loadFixtureWithProfiles } from "./expect";
import { fixturePackConfig, runMockLeg } from "./legs/mock";
import { runRealLeg } from "./legs/real";
import { Toolchain, findToolchain } from "./toolchain";
import { LegResult } from "./model";
import { FIXTURES_DIR, PACK_ENTRY, REPO_ROOT } from "./paths";
import { loadPackConfig } from "./policy-config";
import { Check, FixtureVerdict, judgeFixture } from "./verdict";

export type LegChoice = "mock" | "real" | "both";

export interface RunOptions {
    leg: LegChoice;
    timeoutMs: number;
    /** Called after each fixture, for progress output. */
    onFixture?: (v: FixtureVerdict) => void;
}

/** Loads fixture folders (all of fixtures/ when none given); throws BadInputError on any bad one. */
export function loadFixtures(dirs: string[]): Fixture[] {
    const list = dirs.length > 0 ? dirs : discoverFixtures(FIXTURES_DIR);
    if (list.length === 0) throw new BadInputError("no fixtures found");
    const fixtures = list.flatMap(loadFixtureWithProfiles);
    for (const f of fixtures) {
        if (f.policyConfig) loadPackConfig(f.policyConfig);
    }
    return fixtures;
}

export async function startAnalyzer(): Promise<Analyzer> {
    if (!fs.existsSync(PACK_ENTRY)) {
        throw new BadInputError(`compiled policy pack not found at ${PACK_ENTRY}; run npm run build`);
    }
    return Analyzer.start(PACK_ENTRY, REPO_ROOT);
}

/**
 * The real leg's own checks: `pulumi preview` must exit non-zero exactly when there is a mandatory
 * violation (a zero exit with one would let a CI gate pass).
 */
export function exitCodeChecks(fixture: Fixture, real: LegResult): Check[] {
    if (real.error || real.skipped || real.details?.exitCode === undefined) return [];
    const mandatory = real.rows.filter((r) => r.level === "mandatory");
    if (mandatory.length > 0 && real.details.exitCode === 0) {
        return [{ fixture: fixture.name, leg: "real", policy: mandatory[0].policy, resource: mandatory[0].resource, expected: 1, got: 0, outcome: "mismatch", note: "pulumi preview exited 0 despite a mandatory violation" }];
    }
    return [];
}

export async function runFixtures(fixtures: Fixture[], options: RunOptions): Promise<FixtureVerdict[]> {
    const wantMock = options.leg === "mock" || options.leg === "both";
    const wantReal = options.leg === "real" || options.leg === "both";
    // A missing toolchain is reported once, before anything runs.
    const toolchain: Toolchain | undefined = wantReal ? findToolchain() : undefined;
    const analyzer = await startAnalyzer();
    const verdicts: FixtureVerdict[] = [];
    try {
        // Policy config is validated against the pack's schemas before anything runs: bad config is bad input.
        for (const f of fixtures) fixturePackConfig(analyzer, f);
        const descriptions = new Map(analyzer.policies.map((p) => [p.name, p.description]));
        for (const fixture of fixtures) {
            const legs: LegResult[] = [];
            const extra: Check[] = [];
            if (wantMock) {
                legs.push(await runMockLeg(fixture, { analyzer, timeoutMs: options.timeoutMs }));
            }
            if (toolchain) {
                const real = await runRealLeg(fixture, { toolchain, timeoutMs: options.timeoutMs, descriptions });
                legs.push(real);
                extra.push(...exitCodeChecks(fixture, real));
            }
            const v = judgeFixture(fixture, legs, extra);
            verdicts.push(v);
            options.onFixture?.(v);
        }
    } finally {
        analyzer.stop();
    }
    return verdicts;
}
