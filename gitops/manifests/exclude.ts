/**
 * What `check` leaves out of the folders it walks: `--exclude GLOB` and `exclude:` of the repository's
 * configuration file (./check-settings.ts), and that file itself, which is never taken for a manifest.
 *
 * A glob is matched against a path relative to the repository root, `/`-separated: `*` matches within one
 * folder or file name, `?` one character, `**` any number of folders (`examples/**`, `**\/crds/**`); a glob
 * without `/` matches a name at any depth (`*.example.yaml`, `testdata`), as in `.gitignore`. An excluded folder
 * is not walked. Paths named on the command line are always read, and what an Argo CD Application syncs is read
 * whole, excluded or not: an exclusion never hides what the cluster receives.
 */
import * as path from "path";
import { posix } from "./files";

/** The repository configuration file's name (at the repository root). */
export const CONFIG_FILE = ".pko-guard.yaml";

/** A glob as a regular expression over a repository-relative path; undefined when it is not a valid glob. */
export function globRegExp(glob: string): RegExp | undefined {
    let g = glob.trim().replace(/^\.\//, "").replace(/\/+$/, "");
    if (g === "" || g.includes("\u0000")) return undefined;
    const anywhere = !g.includes("/");
    if (g.startsWith("/")) g = g.slice(1);
    let re = "";
    for (let i = 0; i < g.length; i++) {
        const c = g[i];
        if (c === "*" && g[i + 1] === "*") {
            const slash = g[i + 2] === "/";
            re += slash ? "(?:.*/)?" : ".*";
            i += slash ? 2 : 1;
        } else if (c === "*") re += "[^/]*";
        else if (c === "?") re += "[^/]";
        else re += c.replace(/[\\^$.|+(){}[\]]/g, "\\$&");
    }
    return new RegExp(`^${anywhere ? "(?:.*/)?" : ""}${re}$`);
}

/** Whether a repository-relative path (a file or a folder) is excluded by one of the globs. */
export function excludedBy(globs: RegExp[], rel: string): boolean {
    return globs.some((g) => g.test(rel));
}

/**
 * The walk's filter for one run: true for a file or folder (absolute) that is excluded, or that is the
 * repository's configuration file.
 */
export function walkFilter(repoRoot: string, globs: string[] = []): (abs: string) => boolean {
    const res = globs.map(globRegExp).filter((r): r is RegExp => r !== undefined);
    const configFile = path.join(repoRoot, CONFIG_FILE);
    return (abs) => {
        if (abs === configFile) return true;
        if (res.length === 0) return false;
        const rel = path.relative(repoRoot, abs);
        if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return false;
        return excludedBy(res, posix(rel));
    };
}
