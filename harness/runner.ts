/**
 * The runner: loads fixtures, starts the pack's analyzer once, runs each fixture through the chosen
 * legs, and returns verdicts. Used by the CLI and by the tests.
 */
import * as fs from "fs";
import { Analyzer } from "./analyzer";
import { BadInputError, Fixture, discoverFixtures, loadFixture } from "./expect";
import { runMockLeg } from "./legs/mock";
import { LegResult } from "./model";
import { FIXTURES_DIR, PACK_ENTRY, REPO_ROOT } from "./paths";
import { loadPackConfig } from "./policy-config";
import { FixtureVerdict, judgeFixture } from "./verdict";

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
    const fixtures = list.map(loadFixture);
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

export async function runFixtures(fixtures: Fixture[], options: RunOptions): Promise<FixtureVerdict[]> {
    const analyzer = await startAnalyzer();
    const verdicts: FixtureVerdict[] = [];
    try {
        // Policy config is validated against the pack's schemas before anything runs: bad config is bad input.
        const { fixturePackConfig } = await import("./legs/mock");
        for (const f of fixtures) fixturePackConfig(analyzer, f);
        for (const fixture of fixtures) {
            const legs: LegResult[] = [];
            if (options.leg === "mock" || options.leg === "both") {
                legs.push(await runMockLeg(fixture, { analyzer, timeoutMs: options.timeoutMs }));
            }
            if (options.leg === "real" || options.leg === "both") {
                legs.push({ leg: "real", rows: [], error: "real leg not available", durationMs: 0 });
            }
            const v = judgeFixture(fixture, legs);
            verdicts.push(v);
            options.onFixture?.(v);
        }
    } finally {
        analyzer.stop();
    }
    return verdicts;
}
