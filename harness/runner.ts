/**
 * The runner: loads fixtures, starts the pack's analyzer once, runs each fixture through the chosen
 * legs, and returns verdicts. Used by the CLI and by the tests.
 */
import * as fs from "fs";
import * as path from "path";
import { Analyzer } from "./analyzer";
import { BadInputError, Fixture, discoverFixtures, loadFixtureWithProfiles } from "./expect";
import { fixturePackConfig, runMockLeg } from "./legs/mock";
import { runRealLeg } from "./legs/real";
import { runDeployLeg } from "./legs/deploy";
import { ManifestValidator } from "./manifests";
import { Toolchain, findToolchain } from "./toolchain";
import { LegResult } from "./model";
import { FIXTURES_DIR, PACK_ENTRY, REPO_ROOT } from "./paths";
import { checkPackConfigFile } from "./policy-config";
import { Check, FixtureVerdict, judgeFixture } from "./verdict";

export type LegChoice = "mock" | "real" | "deploy" | "both" | "all";

export interface RunOptions {
    leg: LegChoice;
    timeoutMs: number;
    /** Called after each fixture, for progress output. */
    onFixture?: (v: FixtureVerdict) => void;
}

function isCollection(dir: string): boolean {
    return fs.existsSync(dir) && fs.statSync(dir).isDirectory() && !fs.existsSync(path.join(dir, "Pulumi.yaml"));
}

/** Loads fixture folders (all of fixtures/ when none given); throws BadInputError on any bad one. */
export function loadFixtures(dirs: string[]): Fixture[] {
    // A folder that is not itself a program (fixtures/, examples/) stands for the fixtures inside it.
    const list = dirs.length > 0 ? dirs.flatMap((d) => (isCollection(d) ? discoverFixtures(d) : [d])) : discoverFixtures(FIXTURES_DIR);
    if (list.length === 0) throw new BadInputError("no fixtures found");
    const fixtures = list.flatMap(loadFixtureWithProfiles);
    // Every leg: a config the pack would reject (unknown names, bad patterns) is bad input before anything runs.
    for (const f of fixtures) {
        if (f.policyConfig) checkPackConfigFile(f.policyConfig);
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
    const wantMock = ["mock", "both", "all"].includes(options.leg);
    const wantReal = ["real", "both", "all"].includes(options.leg);
    const wantDeploy = ["deploy", "all"].includes(options.leg);
    // A missing toolchain or schema is reported once, before anything runs.
    const toolchain: Toolchain | undefined = wantReal || wantDeploy ? findToolchain() : undefined;
    const validator = wantDeploy ? new ManifestValidator() : undefined;
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
            if (toolchain && wantReal) {
                const real = await runRealLeg(fixture, { toolchain, timeoutMs: options.timeoutMs, descriptions });
                legs.push(real);
                extra.push(...exitCodeChecks(fixture, real));
            }
            if (toolchain && validator) {
                legs.push(await runDeployLeg(fixture, { toolchain, validator, timeoutMs: options.timeoutMs, descriptions }));
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
