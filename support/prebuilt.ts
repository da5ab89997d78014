/**
 * The prebuilt rendering tools of a platform package (`@pko-guard/<os>-<arch>`, an optional dependency npm installs to
 * fit the machine).
 * A tool runs only once its file matches the SHA-256 the main package ships (toolchain/prebuilt.json); a mismatch is an
 * error, never run. A match is remembered in the user's cache by path, size, inode and mtime, so later runs do not hash
 * it again.
 */
import type { Hash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { userCacheDir } from "./cache-dir";
import { ToolchainMissingError } from "./errors";
import { REPO_ROOT } from "./paths";

/** The checksums file: in the published package only (a checkout has no platform packages). */
export const PREBUILT_MANIFEST = path.join(REPO_ROOT, "toolchain", "prebuilt.json");

export interface PrebuiltEntry {
    /** The tool's pinned version (what install.sh builds). */
    version: string;
    sha256: string;
}

export interface PrebuiltManifest {
    /** The pko-guard version the platform packages were built for. */
    version: string;
    /** `<os>-<arch>` as Node names them (linux-x64): the platform package and its tools. */
    platforms: Record<string, { package: string; tools: Record<string, PrebuiltEntry> }>;
}

export interface PrebuiltTool {
    name: string;
    path: string;
    version: string;
    package: string;
}

/** This machine's platform as the platform packages are named: `<os>-<arch>` (linux-x64, linux-arm64). */
export function platformKey(platform: string = process.platform, arch: string = process.arch): string {
    return `${platform}-${arch}`;
}

const MANIFEST_LIMIT = 64 * 1024;

/** The checksums file, or undefined when this package has none (a checkout, a tarball of `npm pack`). */
export function readManifest(file: string = PREBUILT_MANIFEST): PrebuiltManifest | undefined {
    let text: string;
    try {
        if (fs.statSync(file).size > MANIFEST_LIMIT) return undefined;
        text = fs.readFileSync(file, "utf8");
    } catch {
        return undefined;
    }
    try {
        const m = JSON.parse(text) as PrebuiltManifest;
        return typeof m === "object" && m !== null && typeof m.platforms === "object" ? m : undefined;
    } catch {
        return undefined;
    }
}

/** The installed folder of a package, resolved from `from` as Node would; undefined when not installed. */
function packageDir(name: string, from: string): string | undefined {
    try {
        return path.dirname(require.resolve(`${name}/package.json`, { paths: [from] }));
    } catch {
        return undefined;
    }
}

/**
 * A SHA-256 hash. Node's crypto is loaded on the first (a run that starts no prebuilt tool, as most `check` runs,
 * does not load it: it is one of Node's larger modules).
 */
function sha256Hash(): Hash {
    return (require("crypto") as typeof import("crypto")).createHash("sha256");
}

/** The SHA-256 of a file, read in bounded pieces. */
export function fileSha256(file: string): string {
    const hash = sha256Hash();
    const buf = Buffer.alloc(1 << 20);
    const fd = fs.openSync(file, "r");
    try {
        for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null))
            hash.update(buf.subarray(0, n));
    } finally {
        fs.closeSync(fd);
    }
    return hash.digest("hex");
}

/** What identifies a file's content between checks without reading it: its checksum and its stat. */
function fingerprint(file: string, sha256: string): string {
    const st = fs.statSync(file);
    return `${sha256} ${st.size} ${st.ino} ${st.mtimeMs}\n`;
}

function recordFile(file: string): string {
    return path.join(userCacheDir(), "verified", sha256Hash().update(file).digest("hex").slice(0, 32));
}

/** True when the file's checksum is `sha256`: remembered from an earlier check, else read now (and remembered). */
export function verifiedFile(file: string, sha256: string): boolean {
    const record = recordFile(file);
    try {
        if (fs.readFileSync(record, "utf8") === fingerprint(file, sha256)) return true;
    } catch {
        // not checked before (or the cache folder is unreadable): check now
    }
    if (fileSha256(file) !== sha256) return false;
    try {
        fs.mkdirSync(path.dirname(record), { recursive: true, mode: 0o700 });
        fs.writeFileSync(`${record}.tmp${process.pid}`, fingerprint(file, sha256));
        fs.renameSync(`${record}.tmp${process.pid}`, record);
    } catch {
        // a read-only cache folder: the file is checked again next run
    }
    return true;
}

const found = new Map<string, PrebuiltTool | undefined>();

/**
 * The prebuilt tool for this machine, checked against its checksum before its first use; undefined when this
 * package ships none for the platform or its platform package is not installed. Throws ToolchainMissingError when
 * the file does not match (a damaged or replaced binary is never run).
 */
export function prebuiltTool(
    name: string,
    manifestFile: string = PREBUILT_MANIFEST,
    from: string = REPO_ROOT,
): PrebuiltTool | undefined {
    const key = `${manifestFile}\0${from}\0${name}`;
    if (found.has(key)) return found.get(key);
    const platform = readManifest(manifestFile)?.platforms[platformKey()];
    const entry = platform?.tools[name];
    const dir = platform && entry ? packageDir(platform.package, from) : undefined;
    let tool: PrebuiltTool | undefined;
    if (platform && entry && dir && fs.existsSync(path.join(dir, "bin", name))) {
        const file = path.join(dir, "bin", name);
        if (!verifiedFile(file, entry.sha256))
            throw new ToolchainMissingError(
                `prebuilt ${name} (${file}) does not match its checksum in ${manifestFile}; reinstall pko-guard (npm install pko-guard), or remove ${platform.package} to build from source`,
            );
        ensureExecutable(file);
        tool = { name, path: file, version: entry.version, package: platform.package };
    }
    found.set(key, tool);
    return tool;
}

/** npm keeps a tarball's file modes; a package unpacked without them gets its execute bits back here. */
function ensureExecutable(file: string): void {
    try {
        fs.accessSync(file, fs.constants.X_OK);
    } catch {
        try {
            fs.chmodSync(file, 0o755);
        } catch {
            // a read-only install: running it reports why
        }
    }
}
