/**
 * The runner: loads fixtures, starts the pack's analyzer, runs each fixture through the chosen legs,
 * and returns verdicts. Used by the harness command and by the tests.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError, BadInputsError, ToolchainMissingError } from "../support/errors";
import { didYouMean } from "../support/suggest";
import { DUPLICATE_OBJECT } from "../gitops/manifests/scopes";
import { REPO_ROOT } from "../support/paths";
import { Toolchain, findToolchain, installCommand } from "../support/toolchain";
import { Analyzer } from "./analyzer";
import { FIXTURES_DIR, Fixture, LoadOptions, discoverFixtures, fixtureConfig, loadFixtureWithProfiles } from "./expect";
import { DEFAULT_PACK, PackSpec, packConfigFor, startPack } from "./packs";
import { runDeployLeg } from "./legs/deploy";
import {
    ApiServer,
    installApplicationCrd,
    installFluxCrds,
    installPkoCrds,
    missingDeployBinaries,
    startApiServer,
} from "./apiserver";
import { ApplicationFinalizer, startApplicationFinalizer } from "./argocd-finalizers";
import { MockPack, runMockLeg } from "./legs/mock";
import { runRealLeg } from "./legs/real";
import { manifestRowMapper, programFixture, runManifestLeg, runMockManifestLeg } from "./legs/manifest";
import { LegResult, legResult } from "./legs/result";
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
    /** The packs to run (default: pko-guard's alone). */
    packs?: PackSpec[];
    /** Fixtures run at once (default 1); the deploy leg runs one at a time whatever is asked. */
    jobs?: number;
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

/**
 * Every expected violation and remediation names a policy of the packs run: a misspelt name would only ever read
 * "expected 1, got 0". All of them at once, each at its line of expect.yaml with the nearest name (BadInputsError).
 */
export function rejectUnknownPolicies(fixtures: Fixture[], known: string[]): void {
    const problems = new Set<string>();
    for (const f of fixtures) {
        for (const e of [...f.expect.violations, ...(f.expect.remediations ?? [])]) {
            if (known.includes(e.policy)) continue;
            const where = `${f.expectFile ?? f.name}${"line" in e && e.line !== undefined ? `:${e.line}` : ""}`;
            problems.add(
                `${where}: ${JSON.stringify(e.policy)} is not a policy of the packs run${didYouMean(e.policy, known)}`,
            );
        }
    }
    const list = [...problems];
    if (list.length === 1) throw new BadInputError(list[0]);
    if (list.length > 1)
        throw new BadInputsError(list, `${list.length} expected policies are not policies of the packs run`);
}

/**
 * Loads fixture folders (all of fixtures/ when none given); throws BadInputError on any bad one. `policyConfig` is
 * the config of fixtures without their own; `checkConfig` (default true) checks every fixture's config against
 * pko-guard's policies (not when the run leaves pko-guard's pack out).
 */
export function loadFixtures(dirs: string[], o: LoadOptions & { checkConfig?: boolean } = {}): Fixture[] {
    // A folder that is not itself a program (fixtures/, examples/) stands for the fixtures inside it.
    const list =
        dirs.length > 0
            ? dirs.flatMap((d) => (isCollection(d) ? discoverFixtures(d) : [path.resolve(d)]))
            : discoverFixtures(FIXTURES_DIR);
    const unique = [...new Set(list)];
    if (unique.length === 0) throw new BadInputError("no fixtures found");
    const fixtures = unique.flatMap((d) => loadFixtureWithProfiles(d, o));
    const names = new Map<string, string>();
    for (const f of fixtures) {
        const other = names.get(f.name);
        // Verdicts and reports name fixtures by folder: two of one name would be indistinguishable.
        if (other !== undefined && other !== f.dir)
            throw new BadInputError(`two fixtures are named ${f.name}: rename one of their folders`);
        names.set(f.name, f.dir);
    }
    // Every leg: a config the pack would reject (unknown names, bad patterns) is bad input before anything runs.
    if (o.checkConfig !== false) for (const f of fixtures) fixtureConfig(f);
    return fixtures;
}

export async function startAnalyzer(): Promise<Analyzer> {
    return startPack(DEFAULT_PACK);
}

/** One worker's analyzers, one per pack, each replaced when it was stopped after a deadline. */
function workerPacks(packs: PackSpec[]): { mock: MockPack[]; stop: () => void; started: () => Promise<Analyzer[]> } {
    const running: (Analyzer | undefined)[] = packs.map(() => undefined);
    const current = async (i: number) => {
        const a = running[i];
        return a?.alive ? a : (running[i] = await startPack(packs[i]));
    };
    return {
        mock: packs.map((pack, i) => ({
            analyzer: () => current(i),
            config: (analyzer, fixture) => packConfigFor(pack, analyzer, fixture),
        })),
        started: () => Promise.all(packs.map((_, i) => current(i))),
        stop: () => running.forEach((a) => a?.stop()),
    };
}

export async function runFixtures(fixtures: Fixture[], options: RunOptions): Promise<FixtureVerdict[]> {
    const wantDeploy = ["deploy", "all"].includes(options.leg);
    const packs = options.packs ?? [DEFAULT_PACK];
    // A missing toolchain or schema is reported once, before anything runs.
    const toolchain: Toolchain | undefined = ["real", "both", "all", "deploy"].includes(options.leg)
        ? findToolchain()
        : undefined;
    const validator = wantDeploy ? new ManifestValidator() : undefined;
    const missingCluster = wantDeploy ? missingDeployBinaries() : [];
    if (missingCluster.length > 0)
        throw new ToolchainMissingError(
            `the deploy leg's cluster toolchain is missing (${missingCluster.join(", ")}); run: ${installCommand("cluster")}`,
        );
    const deploy = wantDeploy ? deployClusterOnce() : undefined;
    const jobs = wantDeploy ? 1 : Math.max(1, Math.min(options.jobs ?? 1, fixtures.length));
    const workers = Array.from({ length: jobs }, () => workerPacks(packs));
    const verdicts = new Array<FixtureVerdict>(fixtures.length);
    try {
        // The first worker's packs start before anything runs: a pack that cannot start is reported once.
        const first = await workers[0].started();
        const descriptions = new Map(first.flatMap((a) => a.policies.map((p) => [p.name, p.description] as const)));
        // The packs' policies, and the finding check itself makes (a manifest fixture may expect it).
        rejectUnknownPolicies(fixtures, [...descriptions.keys(), DUPLICATE_OBJECT]);
        const context: FixtureContext = { options, packs, toolchain, validator, deploy, descriptions };
        let next = 0;
        await Promise.all(
            workers.map(async (worker) => {
                for (let index = next++; index < fixtures.length; index = next++) {
                    options.onStart?.(fixtures[index], index, fixtures.length);
                    verdicts[index] = await runFixture(fixtures[index], worker.mock, context);
                    options.onFixture?.(verdicts[index]);
                }
            }),
        );
    } finally {
        workers.forEach((w) => w.stop());
        await deploy?.stop();
    }
    return verdicts;
}

interface FixtureContext {
    options: RunOptions;
    packs: PackSpec[];
    toolchain?: Toolchain;
    validator?: ManifestValidator;
    deploy?: ReturnType<typeof deployClusterOnce>;
    descriptions: Map<string, string>;
}

/** The deploy leg's cluster: one API server for the whole run (start-up costs seconds), started on first use. */
function deployClusterOnce() {
    let cluster: ApiServer | undefined;
    let argoCd: ApplicationFinalizer | undefined;
    return {
        get: async () => {
            if (!cluster) {
                cluster = await startApiServer({ controllers: true });
                await installPkoCrds(cluster);
                // The clusters the fixtures target run Argo CD: its own Application CRD, and the one part of its
                // controller that deleting an Application needs (harness/argocd-finalizers.ts).
                await installApplicationCrd(cluster);
                // And Flux: its CRDs, so a program's GitRepository or Kustomization is created as it would be there.
                await installFluxCrds(cluster);
                argoCd = await startApplicationFinalizer(cluster.kubeconfig);
            }
            return cluster;
        },
        stop: async () => {
            await argoCd?.stop();
            await cluster?.stop();
        },
    };
}

/** One fixture through the legs asked for. */
async function runFixture(fixture: Fixture, mockPacks: MockPack[], c: FixtureContext): Promise<FixtureVerdict> {
    const leg = c.options.leg;
    const legs: LegResult[] = [];
    // A manifest fixture: the manifest leg in-process; the program legs run a generated program that
    // declares the manifests, and their rows are mapped onto manifest identities.
    const program = programFixture(fixture);
    const mapRows = manifestRowMapper(fixture);
    const mapped = (l: LegResult): LegResult =>
        fixture.manifestsDir && l.status === "ran" ? { ...l, rows: mapRows(l.rows) } : l;
    if (fixture.manifestsDir && ["manifest", "mock", "both", "all"].includes(leg)) {
        const onlyDefault = c.packs.length === 1 && c.packs[0].builtin;
        legs.push(
            onlyDefault
                ? await runManifestLeg(fixture)
                : legResult("manifest", Date.now()).skipped(
                      "the manifest leg runs pko-guard's own rules alone; this run has other packs",
                  ),
        );
    }
    if (["mock", "both", "all"].includes(leg)) {
        const mockOptions = { packs: mockPacks, timeoutMs: c.options.timeoutMs };
        legs.push(
            mapped(
                fixture.manifestsDir
                    ? await runMockManifestLeg(program, mockOptions)
                    : await runMockLeg(program, mockOptions),
            ),
        );
    }
    const real = { toolchain: c.toolchain!, timeoutMs: c.options.timeoutMs, descriptions: c.descriptions };
    if (c.toolchain && ["real", "both", "all"].includes(leg))
        legs.push(mapped(await runRealLeg(program, { ...real, packs: c.packs })));
    if (c.toolchain && c.validator && c.deploy) {
        legs.push(
            fixture.manifestsDir
                ? legResult("deploy", Date.now()).skipped(
                      "manifest fixture: the deploy leg renders program fixtures only",
                  )
                : await runDeployLeg(fixture, { ...real, validator: c.validator, cluster: await c.deploy.get() }),
        );
    }
    return judgeFixture(fixture, legs);
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
