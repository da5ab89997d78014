/**
 * The runner: loads fixtures, starts the pack's analyzer, runs each fixture through the chosen legs,
 * and returns verdicts. Used by the harness command and by the tests.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError, ToolchainMissingError } from "../support/errors";
import { PACK_DIR, PACK_ENTRY, REPO_ROOT } from "../support/paths";
import { Toolchain, findToolchain } from "../support/toolchain";
import { Analyzer } from "./analyzer";
import { FIXTURES_DIR, Fixture, discoverFixtures, fixtureConfig, loadFixtureWithProfiles } from "./expect";
import { runDeployLeg } from "./legs/deploy";
import { ApiServer, installApplicationCrd, installPkoCrds, missingDeployBinaries, startApiServer } from "./apiserver";
import { ApplicationFinalizer, startApplicationFinalizer } from "./argocd-finalizers";
import { runMockLeg } from "./legs/mock";
import { runRealLeg } from "./legs/real";
import { manifestRowMapper, programFixture, runManifestLeg, runMockManifestLeg } from "./legs/manifest";
import { LegResult } from "./legs/result";
import { ManifestValidator } from "./schema-validation";
import { FixtureSubject } from "../reports/subject";
import { FixtureVerdict, judgeFixture } from "./verdict";

/**
 * Legs to run. A manifest fixture also runs the in-process manifest leg under every choice but real and
 * deploy (and alone under `manifest`); program fixtures have no manifest leg.
 */
export type LegChoice = "mock" | "real" | "deploy" | "both" | "all" | "manifest";

export interface RunOptions {
    leg: LegChoice;
    timeoutMs: number;
    /** Called after each fixture, for progress output. */
    onFixture?: (v: FixtureVerdict) => void;
    /** Called as each fixture starts (progress). */
    onStart?: (fixture: Fixture, index: number, total: number) => void;
}

function isCollection(dir: string): boolean {
    return (
        fs.existsSync(dir) &&
        fs.statSync(dir).isDirectory() &&
        !fs.existsSync(path.join(dir, "Pulumi.yaml")) &&
        !fs.existsSync(path.join(dir, "expect.yaml"))
    );
}

/** Loads fixture folders (all of fixtures/ when none given); throws BadInputError on any bad one. */
export function loadFixtures(dirs: string[]): Fixture[] {
    // A folder that is not itself a program (fixtures/, examples/) stands for the fixtures inside it.
    const list =
        dirs.length > 0
            ? dirs.flatMap((d) => (isCollection(d) ? discoverFixtures(d) : [d]))
            : discoverFixtures(FIXTURES_DIR);
    if (list.length === 0) throw new BadInputError("no fixtures found");
    const fixtures = list.flatMap(loadFixtureWithProfiles);
    // Every leg: a config the pack would reject (unknown names, bad patterns) is bad input before anything runs.
    for (const f of fixtures) fixtureConfig(f);
    return fixtures;
}

export async function startAnalyzer(): Promise<Analyzer> {
    if (!fs.existsSync(PACK_ENTRY)) {
        throw new BadInputError(`compiled policy pack not found at ${PACK_ENTRY}; run npm run build`);
    }
    return Analyzer.start(PACK_ENTRY, PACK_DIR);
}

export async function runFixtures(fixtures: Fixture[], options: RunOptions): Promise<FixtureVerdict[]> {
    const wantMock = ["mock", "both", "all"].includes(options.leg);
    const wantReal = ["real", "both", "all"].includes(options.leg);
    const wantDeploy = ["deploy", "all"].includes(options.leg);
    const wantManifest = ["manifest", "mock", "both", "all"].includes(options.leg);
    // A missing toolchain or schema is reported once, before anything runs.
    const toolchain: Toolchain | undefined = wantReal || wantDeploy ? findToolchain() : undefined;
    const validator = wantDeploy ? new ManifestValidator() : undefined;
    const missingCluster = wantDeploy ? missingDeployBinaries() : [];
    if (missingCluster.length > 0)
        throw new ToolchainMissingError(
            `the deploy leg's cluster toolchain is missing (${missingCluster.join(", ")}); run: npm run setup`,
        );
    // One API server for the whole run (start-up costs seconds), started once a program fixture needs it.
    let cluster: ApiServer | undefined;
    let argoCd: ApplicationFinalizer | undefined;
    const deployCluster = async () => {
        if (!cluster) {
            cluster = await startApiServer({ controllers: true });
            await installPkoCrds(cluster);
            // The clusters the fixtures target run Argo CD: its own Application CRD, and the one part of its
            // controller that deleting an Application needs (harness/argocd-finalizers.ts).
            await installApplicationCrd(cluster);
            argoCd = await startApplicationFinalizer(cluster.kubeconfig);
        }
        return cluster;
    };
    let analyzer = await startAnalyzer();
    // A pack stopped after a deadline is replaced for the next fixture.
    const currentAnalyzer = async () => (analyzer.alive ? analyzer : (analyzer = await startAnalyzer()));
    const verdicts: FixtureVerdict[] = [];
    try {
        const descriptions = new Map(analyzer.policies.map((p) => [p.name, p.description]));
        for (const [index, fixture] of fixtures.entries()) {
            options.onStart?.(fixture, index, fixtures.length);
            const legs: LegResult[] = [];
            // A manifest fixture: the manifest leg in-process; the program legs run a generated program that
            // declares the manifests, and their rows are mapped onto manifest identities.
            const program = programFixture(fixture);
            const mapRows = manifestRowMapper(fixture);
            const mapped = (l: LegResult): LegResult =>
                fixture.manifestsDir && l.status === "ran" ? { ...l, rows: mapRows(l.rows) } : l;
            if (fixture.manifestsDir && wantManifest) legs.push(await runManifestLeg(fixture));
            if (wantMock) {
                const mockOptions = { analyzer: currentAnalyzer, timeoutMs: options.timeoutMs };
                legs.push(
                    mapped(
                        fixture.manifestsDir
                            ? await runMockManifestLeg(program, mockOptions)
                            : await runMockLeg(program, mockOptions),
                    ),
                );
            }
            if (toolchain && wantReal)
                legs.push(mapped(await runRealLeg(program, { toolchain, timeoutMs: options.timeoutMs, descriptions })));
            if (toolchain && validator) {
                legs.push(
                    fixture.manifestsDir
                        ? {
                              leg: "deploy",
                              durationMs: 0,
                              status: "skipped",
                              reason: "manifest fixture: the deploy leg renders program fixtures only",
                          }
                        : await runDeployLeg(fixture, {
                              toolchain,
                              validator,
                              cluster: await deployCluster(),
                              timeoutMs: options.timeoutMs,
                              descriptions,
                          }),
                );
            }
            const v = judgeFixture(fixture, legs);
            verdicts.push(v);
            options.onFixture?.(v);
        }
    } finally {
        analyzer.stop();
        await argoCd?.stop();
        await cluster?.stop();
    }
    return verdicts;
}

/** Harness verdicts as report subjects, located at each fixture's program file. */
export function fixtureSubjects(verdicts: FixtureVerdict[], fixtures: Fixture[]): FixtureSubject[] {
    const dirs = new Map(fixtures.map((f) => [f.name, f.dir]));
    return verdicts.map((v) => ({
        kind: "fixture",
        name: v.fixture,
        description: v.description,
        programFile: path.join(dirs.get(v.fixture) ?? REPO_ROOT, "index.ts"),
        verdict: v,
    }));
}
