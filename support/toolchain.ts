/**
 * Where the toolchain is: the prebuilt tools of this platform's package (support/prebuilt.ts), the binaries
 * toolchain/install.sh builds (or links from PATH) into the toolchain folder's bin/, or ones on PATH, in that order.
 * One function answers, or says clearly that it is missing and how to install it. The tools, their install
 * profiles and which versions on PATH fit are toolchain/tools.txt, read here as install.sh reads it.
 */
import * as fs from "fs";
import * as path from "path";
import { userCacheDir } from "./cache-dir";
import { ToolchainMissingError } from "./errors";
import { REPO_ROOT } from "./paths";
import { prebuiltTool } from "./prebuilt";

/** True when this package runs installed (a folder named node_modules above it), not from a repository checkout. */
export const INSTALLED = REPO_ROOT.split(path.sep).includes("node_modules");
/**
 * The toolchain folder (bin/, logs/, src/; install.sh decides the same way): a checkout keeps its own in
 * .cache/toolchain, where CI and the tests build it; an installed package uses the user's cache folder, so a
 * reinstall, an upgrade or another project reuses what was built.
 */
export const TOOLCHAIN_DIR = INSTALLED
    ? path.join(userCacheDir(), "toolchain")
    : path.join(REPO_ROOT, ".cache", "toolchain");
export const TOOLCHAIN_BIN = path.join(TOOLCHAIN_DIR, "bin");
/** The install script, shipped in the package (package.json `files`), so its command works from a packed install. */
export const INSTALL_SCRIPT = path.join(REPO_ROOT, "toolchain", "install.sh");
/** The tool table install.sh and `pko-guard doctor` share. */
export const TOOLS_FILE = path.join(REPO_ROOT, "toolchain", "tools.txt");

export const PROFILES = ["check", "gate", "cluster", "all"] as const;
export type Profile = (typeof PROFILES)[number];

/** A row of toolchain/tools.txt. */
export interface ToolSpec {
    name: string;
    /** The profiles that include it (every tool is in `all`). */
    profiles: Profile[];
    /** probe: one on PATH fits when its version is in [min, below); pulumi: shipped beside a fitting pulumi. */
    reuse: "probe" | "pulumi" | "never";
    min?: string;
    below?: string;
    /** The arguments that make it print its version. */
    probe: string[];
}

/** Parses the tool table (comments and blank lines skipped). */
export function parseTools(text: string): ToolSpec[] {
    return text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "" && !l.startsWith("#"))
        .map((l) => {
            const [name, profiles, reuse, min, below, ...probe] = l.split(/\s+/);
            return {
                name,
                profiles: [...(profiles === "-" ? [] : (profiles.split(",") as Profile[])), "all"],
                reuse: reuse as ToolSpec["reuse"],
                ...(min && min !== "-" ? { min } : {}),
                ...(below && below !== "-" ? { below } : {}),
                probe,
            };
        });
}

export function toolSpecs(file: string = TOOLS_FILE): ToolSpec[] {
    return parseTools(fs.readFileSync(file, "utf8"));
}

/** The tools a profile installs, in the table's order. */
export function profileTools(profile: Profile, specs: ToolSpec[] = toolSpecs()): ToolSpec[] {
    return specs.filter((s) => s.profiles.includes(profile));
}

/** The first x.y.z in a tool's version output (what install.sh's version_of takes). */
export function firstVersion(output: string): string | undefined {
    return /(\d+)\.(\d+)\.(\d+)/.exec(output)?.[0];
}

function compareVersions(a: string, b: string): number {
    const pa = a.split(".").map(Number);
    const pb = b.split(".").map(Number);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
        const d = (pa[i] ?? 0) - (pb[i] ?? 0);
        if (d !== 0) return d;
    }
    return 0;
}

/** min <= version < below, as install.sh's fits (sort -V). */
export function versionFits(version: string, min: string, below: string): boolean {
    return compareVersions(version, min) >= 0 && compareVersions(version, below) < 0;
}

/**
 * The command that installs `what` (tools or profiles, space-separated) into the toolchain, as one shell line: the
 * one every message that asks for a tool names. It runs this package's own toolchain/install.sh, which ships in
 * the package, so it works from an installed package as from a checkout; relative to `cwd` when the script is
 * inside it (`bash node_modules/pko-guard/toolchain/install.sh check`).
 */
export function installCommand(what: string, cwd: string = process.cwd()): string {
    const rel = path.relative(cwd, INSTALL_SCRIPT);
    const file = rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : INSTALL_SCRIPT;
    const script = /^[\w@%+=:,./-]+$/.test(file) ? file : `'${file.replace(/'/g, "'\\''")}'`;
    return `bash ${script} ${what}`;
}

/** The toolchain folder in force: PKO_GUARD_TOOLCHAIN_BIN, else the project's own build. */
export function toolchainBin(): string {
    return process.env.PKO_GUARD_TOOLCHAIN_BIN ?? TOOLCHAIN_BIN;
}

/** Where a located tool comes from: this platform's prebuilt package, the toolchain folder, or PATH. */
export type ToolSource = "prebuilt" | "toolchain" | "PATH";

export interface LocatedTool {
    path: string;
    source: ToolSource;
    /** The pinned version of a prebuilt tool (others report theirs when asked). */
    version?: string;
}

/**
 * A tool as every command finds it: the prebuilt one of this platform's package (checked against its checksum;
 * not when PKO_GUARD_TOOLCHAIN_BIN names a toolchain), else the toolchain folder's, else the first on PATH.
 */
export function locateTool(name: string): LocatedTool | undefined {
    if (process.env.PKO_GUARD_TOOLCHAIN_BIN === undefined) {
        const prebuilt = prebuiltTool(name);
        if (prebuilt) return { path: prebuilt.path, source: "prebuilt", version: prebuilt.version };
    }
    const own = path.join(toolchainBin(), name);
    if (isExecutable(own)) return { path: own, source: "toolchain" };
    const fromPath = onPath(name);
    return fromPath ? { path: fromPath, source: "PATH" } : undefined;
}

/**
 * Binaries the real leg and the gate need: the CLI, the nodejs and YAML language hosts, the Kubernetes provider
 * and the plugin that runs a nodejs program's `pulumi.dynamic` providers.
 */
export const REQUIRED = [
    "pulumi",
    "pulumi-language-nodejs",
    "pulumi-language-yaml",
    "pulumi-resource-kubernetes",
    "pulumi-resource-pulumi-nodejs",
] as const;

export interface Toolchain {
    /** Folder to put first on PATH (the engine finds plugins there). */
    binDir: string;
    pulumi: string;
}

export function isExecutable(file: string): boolean {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

/** The first executable `name` in a folder of PATH (`pathEnv`, default the process's), skipping `except`. */
export function onPath(name: string, pathEnv: string = process.env.PATH ?? "", except?: string): string | undefined {
    const skip = except ? realDir(except) : undefined;
    for (const dir of pathEnv.split(path.delimiter)) {
        if (!dir || (skip !== undefined && realDir(dir) === skip)) continue;
        if (isExecutable(path.join(dir, name))) return path.join(dir, name);
    }
    return undefined;
}

function realDir(dir: string): string {
    try {
        return fs.realpathSync(dir);
    } catch {
        return path.resolve(dir);
    }
}

/** The required binaries that `binDir` lacks. */
function missingIn(binDir: string): string[] {
    return REQUIRED.filter((b) => !isExecutable(path.join(binDir, b)));
}

/**
 * Finds the toolchain: the project's own build first (all required binaries), else every binary on
 * PATH. Throws ToolchainMissingError with one line naming what is missing and the fix.
 */
export function findToolchain(binDir: string = toolchainBin()): Toolchain {
    const missing = missingIn(binDir);
    if (missing.length === 0) {
        return { binDir, pulumi: path.join(binDir, "pulumi") };
    }
    const fromPath = REQUIRED.map((b) => onPath(b));
    if (fromPath.every((p) => p !== undefined)) {
        return { binDir: path.dirname(fromPath[0]), pulumi: fromPath[0] };
    }
    throw new ToolchainMissingError(
        `Pulumi toolchain not found (missing ${missing.join(", ")} in ${binDir} and on PATH); run: ${installCommand("gate")}`,
    );
}

/**
 * The CLI for the gate, which previews the user's own project: the project's toolchain when it is
 * complete (its folder goes first on PATH, as in the harness), else the user's own `pulumi` on PATH,
 * used as installed, so their language hosts and provider plugins are the ones they chose.
 */
export function findGateCli(binDir: string = toolchainBin()): { pulumi: string; binDir?: string } {
    if (missingIn(binDir).length === 0) return { pulumi: path.join(binDir, "pulumi"), binDir };
    const pulumi = onPath("pulumi");
    if (pulumi) return { pulumi };
    throw new ToolchainMissingError(
        `Pulumi toolchain not found (no complete toolchain in ${binDir}, no pulumi on PATH); install the Pulumi CLI, or run: ${installCommand("gate")}`,
    );
}
