/**
 * Fixtures and their expectations. A fixture is a folder with Pulumi.yaml, index.ts, expect.yaml and
 * optionally policy-config.json. expect.yaml is validated against a JSON schema (ajv); a fixture whose
 * expectations are invalid is bad input, reported before anything runs.
 */
import { PackConfig, packConfig, yamlErrorPosition } from "../evaluation/pack-config";
import Ajv from "ajv";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";

/** The fixtures folder of this repository (the harness's default). */
export const FIXTURES_DIR = path.join(REPO_ROOT, "fixtures");

export interface ExpectedViolation {
    policy: string;
    resource: string;
    count: number;
    message?: string;
    level?: "mandatory" | "advisory";
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
    expect: Expectation;
    /** Path of policy-config.json when the fixture has one. */
    policyConfig?: string;
}

const schema = {
    type: "object",
    additionalProperties: false,
    required: ["description", "violations"],
    not: { required: ["mockOnly", "realOnly"] },
    properties: {
        description: { type: "string", minLength: 1 },
        stack: { type: "string", pattern: "^[A-Za-z0-9_.-]+$" },
        mockOnly: { type: "string", minLength: 1 },
        realOnly: { type: "string", minLength: 1 },
        profiles: {
            type: "object",
            additionalProperties: {
                type: "object",
                additionalProperties: false,
                required: ["policyConfig", "violations"],
                properties: {
                    description: { type: "string", minLength: 1 },
                    policyConfig: { type: "string", minLength: 1 },
                    violations: { $ref: "#/properties/violations" },
                },
            },
        },
        config: {
            type: "object",
            additionalProperties: {
                type: "object",
                additionalProperties: false,
                required: ["value"],
                properties: { value: { type: "string" }, secret: { type: "boolean" } },
            },
        },
        remediations: {
            type: "array",
            items: {
                type: "object",
                additionalProperties: false,
                required: ["policy", "resource"],
                properties: {
                    policy: { type: "string", minLength: 1 },
                    resource: { type: "string", minLength: 1 },
                    set: { type: "object", minProperties: 1 },
                },
            },
        },
        violations: {
            type: "array",
            items: {
                type: "object",
                additionalProperties: false,
                required: ["policy", "resource", "count"],
                properties: {
                    policy: { type: "string", minLength: 1 },
                    resource: { type: "string", minLength: 1 },
                    count: { type: "integer", minimum: 1 },
                    message: { type: "string", minLength: 1 },
                    level: { enum: ["mandatory", "advisory"] },
                },
            },
        },
    },
} as const;

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile(schema);

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

function checkViolations(expectFile: string, violations: ExpectedViolation[]): void {
    const seen = new Set<string>();
    for (const v of violations) {
        const key = `${v.policy}\u0000${v.resource}`;
        if (seen.has(key)) {
            throw new BadInputError(`${expectFile}: ${v.policy} on ${v.resource} is listed twice (use count)`);
        }
        seen.add(key);
        if (v.message !== undefined) {
            try {
                new RegExp(v.message);
            } catch {
                throw new BadInputError(
                    `${expectFile}: message ${JSON.stringify(v.message)} is not a valid regular expression`,
                );
            }
        }
    }
}

/**
 * Loads one fixture folder, validating everything the legs will rely on. A fixture with `profiles`
 * yields one more fixture per profile (`name@profile`): the same program under another policy config.
 */
export function loadFixtureWithProfiles(dirArg: string): Fixture[] {
    const base = loadFixture(dirArg);
    const expectFile = path.join(base.dir, "expect.yaml");
    const doc = YAML.parse(fs.readFileSync(expectFile, "utf8")) as {
        profiles?: Record<string, { description?: string; policyConfig: string; violations: ExpectedViolation[] }>;
    };
    const variants = Object.entries(doc.profiles ?? {}).map(([profile, p]) => {
        const policyConfig = path.resolve(base.dir, p.policyConfig);
        if (!fs.existsSync(policyConfig)) {
            throw new BadInputError(`${expectFile}: profile ${profile}: no such policy config ${p.policyConfig}`);
        }
        checkViolations(expectFile, p.violations);
        return {
            ...base,
            name: `${base.name}@${profile}`,
            policyConfig,
            expect: {
                ...base.expect,
                description: p.description ?? `${base.expect.description} (profile ${profile})`,
                violations: p.violations,
            },
        };
    });
    return [base, ...variants];
}

/** Loads one fixture folder (its default profile), validating everything the legs will rely on. */
export function loadFixture(dirArg: string): Fixture {
    const dir = path.resolve(dirArg);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
        throw new BadInputError(`${dirArg}: no such fixture folder`);
    }
    const manifestsDir = isManifestFixture(dir) ? path.join(dir, "manifests") : undefined;
    const { name: project, runtime } = manifestsDir
        ? { name: manifestProjectName(dir), runtime: "manifests" }
        : projectFile(dir);
    // The mock leg runs Node programs only; a program in another language (Pulumi YAML) is real-only.
    if (runtime === "nodejs" && !fs.existsSync(path.join(dir, "index.ts"))) {
        throw new BadInputError(`${dirArg}: no index.ts`);
    }
    const expectFile = path.join(dir, "expect.yaml");
    if (!fs.existsSync(expectFile)) {
        throw new BadInputError(`${dirArg}: no expect.yaml`);
    }
    let doc: unknown;
    try {
        doc = YAML.parse(fs.readFileSync(expectFile, "utf8"));
    } catch (e) {
        throw new BadInputError(`${expectFile}: not valid YAML${yamlErrorPosition(e)}`);
    }
    if (!validate(doc)) {
        const err = validate.errors?.[0];
        throw new BadInputError(`${expectFile}: ${err?.instancePath || "/"} ${err?.message ?? "is invalid"}`);
    }
    const e = doc as unknown as Partial<Expectation> & { violations: ExpectedViolation[] };
    checkViolations(expectFile, e.violations);
    if (!manifestsDir && runtime !== "nodejs" && !e.realOnly) {
        throw new BadInputError(`${expectFile}: a ${runtime} program cannot run in the mock leg: set realOnly (why)`);
    }
    const policyConfig = path.join(dir, "policy-config.json");
    return {
        name: path.basename(dir),
        dir,
        project,
        expect: {
            description: e.description!,
            stack: e.stack ?? "dev",
            config: e.config ?? {},
            violations: e.violations,
            ...(e.remediations ? { remediations: e.remediations } : {}),
            mockOnly: e.mockOnly,
            realOnly: e.realOnly,
        },
        policyConfig: fs.existsSync(policyConfig) ? policyConfig : undefined,
        ...(manifestsDir ? { manifestsDir } : {}),
    };
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

/** Every fixture folder under a root (a folder with an expect.yaml), sorted by name. */
export function discoverFixtures(root: string): string[] {
    if (!fs.existsSync(root)) {
        throw new BadInputError(`${root}: no such folder`);
    }
    return fs
        .readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, d.name, "expect.yaml")))
        .map((d) => path.join(root, d.name))
        .sort();
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
