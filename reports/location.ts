/**
 * The one rule for where a finding is in machine-read outputs (SARIF and GitHub workflow commands): a path
 * relative to the repository root, `/`-separated; standard input named as such; a file outside the root by its
 * base name only (no absolute path leaves the machine); a fetched source's file as `<url>@<resolved>/<path>`.
 */
import * as fs from "fs";
import * as path from "path";

import { STDIN_FILE } from "../gitops/manifests/files";

export { STDIN_FILE };

export type FindingPlace =
    | { kind: "repo"; path: string }
    | { kind: "stdin" }
    | { kind: "outside"; name: string }
    | { kind: "fetched"; url: string };

export function findingPlace(file: string, root: string): FindingPlace {
    if (file === STDIN_FILE || file === "-") return { kind: "stdin" };
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file)) return { kind: "fetched", url: file };
    const rel = path.isAbsolute(file) ? path.relative(root, file) : path.normalize(file);
    if (rel === "" || rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
        return { kind: "outside", name: path.basename(file) };
    return { kind: "repo", path: rel.split(path.sep).join("/") };
}

/** The place in words, for a message when there is no repository path to point at. */
export function placeWords(p: FindingPlace): string {
    if (p.kind === "fetched") return p.url;
    return p.kind === "repo" ? p.path : p.kind === "stdin" ? "standard input" : `${p.name} (outside the repository)`;
}

/** The repository root for a file: the nearest folder up with a .git entry, else `fallback`. */
export function sourceRoot(file: string, fallback = process.cwd()): string {
    let dir = path.dirname(path.resolve(file));
    for (;;) {
        if (fs.existsSync(path.join(dir, ".git"))) return dir;
        const up = path.dirname(dir);
        if (up === dir) return path.resolve(fallback);
        dir = up;
    }
}
