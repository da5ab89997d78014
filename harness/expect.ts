/**
 * Fixtures and their expectations. A fixture is a folder with Pulumi.yaml, index.ts, expect.yaml and
 * optionally policy-config.json. expect.yaml is validated against a JSON schema (ajv); a fixture whose
 * expectations are invalid is bad input, reported before anything runs.
 */
import { PackConfig, packConfig, yamlErrorPosition } from "../evaluation/pack-config";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";
import { ExpectFile, readExpectFile } from "./expect-file";

/** The fixtures folder of this repository (the harness's default). */
export const FIXTURES_DIR = path.join(REPO_ROOT, "fixtures");

export interface ExpectedViolation {
    policy: string;
    resource: string;
    count: number;
    message?: string;
    level?: "mandatory" | "advisory";
    /** The line of expect.yaml the expectation is written on (where a mismatch points). */
    line?: number;
}

export interface ExpectedRemediation {
    policy: string;
    resource: string;
    set?: Record<string, unknown>;
}

export interface ConfigValue {
    value: string;
    secret?: boolean;
}

export interface Expectation {
    description: string;
    stack: string;
    /** Stack config the program reads (`name: {value, secret}`), set in both legs. */
    config: Record<string, ConfigValue>;
    violations: ExpectedViolation[];
    /**
     * Remediations the pack must make (policy, resource): the engine legs check them, none other may happen;
     * `set` (dotted path to value) is checked on the object the deploy leg renders.
     */
    remediations?: ExpectedRemediation[];
    /** When set, the real leg does not run this fixture and shows why. */
    mockOnly?: string;
    /** When set, the mock leg does not run this fixture and shows why (a program the mocks cannot run, e.g. YAML). */
    realOnly?: string;
    /**
     * When set (a manifest fixture only), the mock and real legs do not run it and show why: their one generated
     * program is one cluster, so objects that land in several clusters are judged by the manifest leg alone.
     */
    manifestOnly?: string;
}

export interface Fixture {
    /** Folder name, plus `@profile` for a profile variant. */
    name: string;
    /** The program folder (for a manifest fixture: the fixture folder, with no program in it). */
    dir: string;
    /**
     * Set for a manifest fixture (a folder with `manifests/` and expect.yaml, no Pulumi.yaml): the folder of
     * manifests, in any layout. The manifest leg checks it in-process; the mock and real legs run a program
     * generated to declare those objects (harness/legs/manifest-program.ts).
     */
    manifestsDir?: string;
    project: string;
    /** The program's language (Pulumi.yaml `runtime`): the mock leg runs `nodejs` and `go` programs. */
    runtime?: string;
    expect: Expectation;
    /** The policy config: the fixture's policy-config.json, else the run's `--config`, else none (defaults). */
    policyConfig?: string;
    /** The expectation file (expect.yaml); a fixture built in code has none. */
    expectFile?: string;
    /** The line of its `violations` (where an unexpected violation points). */
    violationsLine?: number;
}

/** What a run gives every fixture: the policy config for those without their own. */
export interface LoadOptions {
    policyConfig?: string;
}

function projectFile(dir: string): { name: string; runtime: string } {
    const file = path.join(dir, "Pulumi.yaml");
    if (!fs.existsSync(file)) {
        throw new BadInputError(`${dir}: no Pulumi.yaml (a fixture is a Pulumi program folder)`);
    }
    let doc: unknown;
    try {
        doc = YAML.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new BadInputError(`${file}: not valid YAML${yamlErrorPosition(e)}`);
    }
    const { name, runtime } = (doc ?? {}) as { name?: unknown; runtime?: unknown };
    if (typeof name !== "string" || name.length === 0) {
        throw new BadInputError(`${file}: missing project name`);
    }
    const runtimeName = typeof runtime === "string" ? runtime : (runtime as { name?: unknown } | undefined)?.name;
    return { name, runtime: typeof runtimeName === "string" ? runtimeName : "nodejs" };
}

/** The expected violations at `at` of the file, each with its line; duplicates and bad patterns are bad input. */
function checkViolations(parsed: ExpectFile, at: (string | number)[]): ExpectedViolation[] {
    const expectFile = parsed.file;
    const listed = (at.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], parsed.data) ??
        []) as ExpectedViolation[];
    const violations = listed.map((v, i) => ({ ...v, line: parsed.lineOf([...at, i]) }));
    const seen = new Set<string>();
    for (const v of violations) {
        const key = `${v.policy}\u0000${v.resource}`;
        if (seen.has(key)) {
            throw new BadInputError(
                `${expectFile}:${v.line}: ${v.policy} on ${v.resource} is listed twice (use count)`,
            );
        }
        seen.add(key);
        if (v.message !== undefined) {
            try {
                new RegExp(v.message);
            } catch {
                throw new BadInputError(
                    `${expectFile}:${v.line}: message ${JSON.stringify(v.message)} is not a valid regular expression`,
                );
            }
        }
    }
    return violations;
}

/**
 * Loads one fixture folder, validating everything the legs will rely on. A fixture with `profiles`
 * yields one more fixture per profile (`name@profile`): the same program under another policy config.
 */
export function loadFixtureWithProfiles(dirArg: string, options: LoadOptions = {}): Fixture[] {
    const { fixture: base, parsed } = readFixture(dirArg, options);
    const profiles = (parsed.data.profiles ?? {}) as Record<string, { description?: string; policyConfig: string }>;
    const variants = Object.entries(profiles).map(([profile, p]) => {
        const policyConfig = path.resolve(base.dir, p.policyConfig);
        if (!fs.existsSync(policyConfig)) {
            throw new BadInputError(
                `${parsed.file}:${parsed.lineOf(["profiles", profile, "policyConfig"])}: profile ${profile}: no such policy config ${p.policyConfig}`,
            );
        }
        return {
            ...base,
            name: `${base.name}@${profile}`,
            policyConfig,
            expect: {
                ...base.expect,
                description: p.description ?? `${base.expect.description} (profile ${profile})`,
                violations: checkViolations(parsed, ["profiles", profile, "violations"]),
            },
            violationsLine: parsed.lineOf(["profiles", profile, "violations"]),
        };
    });
    return [base, ...variants];
}

/** Loads one fixture folder (its default profile), validating everything the legs will rely on. */
export function loadFixture(dirArg: string, options: LoadOptions = {}): Fixture {
    return readFixture(dirArg, options).fixture;
}

/** The languages whose programs the mock leg runs (harness/legs/mock-program.ts). */
export const MOCK_RUNTIMES = ["nodejs", "go"];

/** A fixture folder's program (or manifests), checked as loading checks it, before expectations are read. */
function fixtureProgram(dirArg: string): { dir: string; manifestsDir?: string; project: string; runtime: string } {
    const dir = path.resolve(dirArg);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
        throw new BadInputError(`${dirArg}: no such fixture folder`);
    }
    const manifestsDir = isManifestFixture(dir) ? path.join(dir, "manifests") : undefined;
    const { name: project, runtime } = manifestsDir
        ? { name: manifestProjectName(dir), runtime: "manifests" }
        : projectFile(dir);
    // The mock leg runs Node and Go programs; a program in another language (Pulumi YAML) is real-only.
    if (runtime === "nodejs" && !["index.ts", "index.js"].some((f) => fs.existsSync(path.join(dir, f)))) {
        throw new BadInputError(`${dirArg}: no index.ts or index.js`);
    }
    return { dir, manifestsDir, project, runtime };
}

/**
 * A program folder (or manifest folder) as a fixture that expects nothing yet, for `pko-guard test --init`: the
 * folder's policy-config.json, else `options.policyConfig`; stack `dev`.
 */
export function bareFixture(dirArg: string, options: LoadOptions = {}): Fixture & { runtime: string } {
    const { dir, manifestsDir, project, runtime } = fixtureProgram(dirArg);
    const policyConfig = path.join(dir, "policy-config.json");
    return {
        name: path.basename(dir),
        dir,
        project,
        runtime,
        expect: { description: `${path.basename(dir)} (scaffolded)`, stack: "dev", config: {}, violations: [] },
        policyConfig: fs.existsSync(policyConfig) ? policyConfig : options.policyConfig,
        ...(manifestsDir ? { manifestsDir } : {}),
    };
}

function readFixture(dirArg: string, options: LoadOptions): { fixture: Fixture; parsed: ExpectFile } {
    const { dir, manifestsDir, project, runtime } = fixtureProgram(dirArg);
    const expectFile = path.join(dir, "expect.yaml");
    if (!fs.existsSync(expectFile)) {
        throw new BadInputError(`${dirArg}: no expect.yaml`);
    }
    const parsed = readExpectFile(expectFile);
    const e = parsed.data as unknown as Partial<Expectation>;
    const violations = checkViolations(parsed, ["violations"]);
    if (!manifestsDir && !MOCK_RUNTIMES.includes(runtime) && !e.realOnly) {
        throw new BadInputError(`${expectFile}: a ${runtime} program cannot run in the mock leg: set realOnly (why)`);
    }
    if (!manifestsDir && e.manifestOnly)
        throw new BadInputError(`${expectFile}: manifestOnly is for manifest fixtures (a manifests/ folder) only`);
    const policyConfig = path.join(dir, "policy-config.json");
    const fixture: Fixture = {
        name: path.basename(dir),
        dir,
        project,
        runtime,
        expect: {
            description: e.description!,
            stack: e.stack ?? "dev",
            config: e.config ?? {},
            violations,
            ...(e.remediations ? { remediations: e.remediations } : {}),
            mockOnly: e.mockOnly,
            realOnly: e.realOnly,
            ...(e.manifestOnly ? { manifestOnly: e.manifestOnly } : {}),
        },
        policyConfig: fs.existsSync(policyConfig) ? policyConfig : options.policyConfig,
        expectFile,
        violationsLine: parsed.lineOf(["violations"]),
        ...(manifestsDir ? { manifestsDir } : {}),
    };
    return { fixture, parsed };
}

/** A manifest fixture: a `manifests/` folder and expect.yaml, and no Pulumi program. */
export function isManifestFixture(dir: string): boolean {
    return (
        !fs.existsSync(path.join(dir, "Pulumi.yaml")) &&
        fs.existsSync(path.join(dir, "manifests")) &&
        fs.statSync(path.join(dir, "manifests")).isDirectory()
    );
}

/** The Pulumi project name of a manifest fixture's generated program (a valid project name). */
function manifestProjectName(dir: string): string {
    return `manifests-${path.basename(dir).replace(/[^A-Za-z0-9_.-]/g, "-")}`;
}

/** How deep under a root fixtures are looked for, and how many folders at most (a bound on a hostile tree). */
const DISCOVERY_DEPTH = 8;
const DISCOVERY_FOLDERS = 20000;

/**
 * Every fixture folder under a root (a folder with an expect.yaml), at any depth up to DISCOVERY_DEPTH, sorted by
 * path. A fixture's own subfolders are not searched; nor are node_modules, hidden folders and `_`-folders (shared
 * helpers such as fixtures/_lib). Symbolic links to folders are not followed.
 */
export function discoverFixtures(root: string): string[] {
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
        throw new BadInputError(`${root}: no such folder`);
    }
    const found: string[] = [];
    let seen = 0;
    const walk = (dir: string, depth: number) => {
        if (++seen > DISCOVERY_FOLDERS) throw new BadInputError(`${root}: more than ${DISCOVERY_FOLDERS} folders`);
        for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
            if (!d.isDirectory() || /^[._]/.test(d.name) || d.name === "node_modules") continue;
            const sub = path.join(dir, d.name);
            if (fs.existsSync(path.join(sub, "expect.yaml"))) found.push(sub);
            else if (depth < DISCOVERY_DEPTH) walk(sub, depth + 1);
        }
    };
    walk(root, 1);
    return found.sort();
}

const configs = new WeakMap<Fixture, PackConfig>();

/**
 * The fixture's pack config (its policy-config.json, or the defaults), loaded and reconciled once per fixture
 * by the one function every command uses (evaluation/pack-config.ts); every leg reads it from here.
 */
export function fixtureConfig(fixture: Fixture): PackConfig {
    let config = configs.get(fixture);
    if (!config) configs.set(fixture, (config = packConfig(fixture.policyConfig)));
    return config;
}
