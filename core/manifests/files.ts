/**
 * Manifest files: which files a folder holds (recursive `.yaml`/`.yml`/`.json`, sorted, hidden folders and
 * `node_modules` not walked, no folder twice), reading one bounded (MAX_FILE_BYTES, binary files refused or
 * skipped), and where the repository root is (git).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../errors";
import { Skip } from "./objects";
import { isChart, kustomizationFile } from "../render/render";

export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** The git top level containing `dir`, or undefined outside a work tree (or without git). */
export function gitTopLevel(dir: string): string | undefined {
    try {
        return execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: dir, stdio: ["ignore", "pipe", "ignore"], encoding: "utf8" }).trim() || undefined;
    } catch {
        return undefined;
    }
}

export function posix(p: string): string {
    return p.split(path.sep).join("/");
}

function isBinary(buf: Buffer): boolean {
    const n = Math.min(buf.length, 8000);
    for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
    return false;
}

/**
 * Files under a folder, sorted, following no folder twice. A folder that needs rendering (a kustomization,
 * a Helm chart) is never read as raw files: it goes to `roots` instead.
 */
export function walk(dir: string, seen: Set<string>, out: string[], roots: string[]): void {
    let real: string;
    try {
        real = fs.realpathSync(dir);
    } catch {
        throw new BadInputError(`${dir}: cannot read folder`);
    }
    if (seen.has(real)) return;
    seen.add(real);
    if (kustomizationFile(dir) || isChart(dir)) {
        roots.push(dir);
        return;
    }
    let entries: fs.Dirent[];
    try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
        throw new BadInputError(`${dir}: cannot read folder`);
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const p = path.join(dir, e.name);
        let isDir = e.isDirectory();
        if (e.isSymbolicLink()) {
            try {
                isDir = fs.statSync(p).isDirectory();
            } catch {
                throw new BadInputError(`${p}: broken symbolic link`);
            }
        }
        if (isDir) {
            if (!e.name.startsWith(".") && e.name !== "node_modules") walk(p, seen, out, roots);
        } else if (EXTENSIONS.has(path.extname(e.name).toLowerCase())) {
            out.push(p);
        }
    }
}

export function readFile(file: string, shown: string, fromFolder: boolean, out: { skipped: Skip[] }): string | undefined {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(file);
    } catch {
        throw new BadInputError(`${shown}: no such file or folder`);
    }
    if (stat.size > MAX_FILE_BYTES) {
        const reason = `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`;
        if (fromFolder) {
            out.skipped.push({ file: shown, reason });
            return undefined;
        }
        throw new BadInputError(`${shown}: ${reason}; not read`);
    }
    let buf: Buffer;
    try {
        buf = fs.readFileSync(file);
    } catch {
        throw new BadInputError(`${shown}: cannot read file`);
    }
    if (isBinary(buf)) {
        if (fromFolder) {
            out.skipped.push({ file: shown, reason: "binary file" });
            return undefined;
        }
        throw new BadInputError(`${shown}: binary file, not a manifest`);
    }
    return buf.toString("utf8");
}

