/**
 * Where the Pulumi toolchain is: the binaries `npm run setup` builds into .cache/toolchain/bin, or a
 * `pulumi` on PATH. One function answers, or says clearly that it is missing and how to install it.
 */
import * as fs from "fs";
import * as path from "path";
import { ToolchainMissingError } from "./errors";
import { REPO_ROOT } from "./paths";

export const TOOLCHAIN_BIN = path.join(REPO_ROOT, ".cache", "toolchain", "bin");

/** The toolchain folder in force: PKO_GUARD_TOOLCHAIN_BIN, else the project's own build. */
export function toolchainBin(): string {
    return process.env.PKO_GUARD_TOOLCHAIN_BIN ?? TOOLCHAIN_BIN;
}

/** Binaries the real leg needs: the CLI, the nodejs language host and the Kubernetes provider. */
export const REQUIRED = [
    "pulumi",
    "pulumi-language-nodejs",
    "pulumi-language-yaml",
    "pulumi-resource-kubernetes",
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

/** The first executable `name` in a folder of PATH. */
export function onPath(name: string): string | undefined {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
        if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
    }
    return undefined;
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
        return { binDir: path.dirname(fromPath[0]!), pulumi: fromPath[0]! };
    }
    throw new ToolchainMissingError(
        `Pulumi toolchain not found (missing ${missing.join(", ")} in ${binDir} and on PATH); run: npm run setup`,
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
        `Pulumi toolchain not found (no complete toolchain in ${binDir}, no pulumi on PATH); run: npm run setup, or install the Pulumi CLI`,
    );
}
