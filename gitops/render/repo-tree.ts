/**
 * The repository as rendering sees it: walked once per run (bounded), its folders and files as Argo CD's
 * generators list them, and its symbolic links confined to it before any tool runs.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";

/** What the walk reads and keeps of a run's render context (./render.ts RenderContext). */
export interface RepoContext {
    /** Repository root (absolute): rendering reads nothing outside it. */
    repoRoot: string;
    /** How a folder is shown in messages (repository-relative). */
    show: (abs: string) => string;
    /** The repository's one walk (repoTree), made on first use: a run walks it once. */
    tree?: RepoTree;
}

/**
 * The repository root a run uses, as a message that fails closed because of it says: a manifests folder inside
 * another repository is judged against that repository's root (the git top level) unless --repo-root says otherwise.
 */
export function rootInUse(ctx: Pick<RepoContext, "repoRoot">): string {
    return `the repository root in use is ${ctx.repoRoot}; --repo-root sets another`;
}

/** At most this many entries are walked (a repository larger than that is refused). */
const MAX_WALK = 1_000_000;

/** What the one bounded walk of the repository found: what confineLinks and repoFolders each need. */
export interface RepoTree {
    /** Repository-relative folders (`/`-separated, sorted); hidden folders, node_modules and what they hold are not listed. */
    folders: string[];
    /** Repository-relative regular files (`/`-separated, sorted), hidden folders' too (git lists them), not those of node_modules or a `.git`. */
    files: string[];
    /** The first symbolic link found that is absolute or steps outside the repository (absolute path). */
    escapingLink?: string;
    /** Set when the repository holds more than MAX_WALK entries (the walk stopped there). */
    tooLarge?: boolean;
}

/**
 * The repository walked once per run (`.git` at its root aside; links are not followed, unreadable folders not
 * read) and at most MAX_WALK entries: its folders, and its first symbolic link that leaves it.
 */
export function repoTree(ctx: RepoContext): RepoTree {
    if (ctx.tree) return ctx.tree;
    const root = path.resolve(ctx.repoRoot);
    const tree: RepoTree = { folders: [], files: [] };
    let seen = 0;
    const escapes = (link: string) => {
        const target = fs.readlinkSync(link);
        let cur = path.dirname(link);
        return (
            path.isAbsolute(target) ||
            target.split(/[\\/]/).some((part) => {
                cur = path.join(cur, part);
                const rel = path.relative(root, cur);
                return rel.startsWith("..") || path.isAbsolute(rel);
            })
        );
    };
    /**
     * Walks `dir`; `listed`: its folders are listed (it is not inside a hidden or node_modules folder); `filed`:
     * its files are listed (it is not inside node_modules). False once the bound is reached.
     */
    const walk = (dir: string, listed: boolean, filed = true): boolean => {
        let entries: fs.Dirent[];
        try {
            entries = fs.readdirSync(dir, { withFileTypes: true });
        } catch {
            return true; // unreadable folders are not read by the tools either
        }
        for (const e of entries) {
            if (++seen > MAX_WALK) return false;
            const p = path.join(dir, e.name);
            if (e.isSymbolicLink()) {
                if (!tree.escapingLink && escapes(p)) tree.escapingLink = p;
            } else if (e.isDirectory() && !(dir === root && e.name === ".git")) {
                // Argo CD's repo server skips hidden folders (walkDirectoryTree, v3.6.1; its default); node_modules is skipped as
                // what a working tree installs rather than what the repository holds.
                const inside = listed && !e.name.startsWith(".") && e.name !== "node_modules";
                if (inside) tree.folders.push(path.relative(root, p).split(path.sep).join("/"));
                if (!walk(p, inside, filed && e.name !== "node_modules" && e.name !== ".git")) return false;
            } else if (filed && e.isFile()) tree.files.push(path.relative(root, p).split(path.sep).join("/"));
        }
        return true;
    };
    tree.tooLarge = !walk(root, true);
    tree.folders.sort();
    tree.files.sort();
    ctx.tree = tree;
    return tree;
}

function tooLarge(ctx: RepoContext, why: string): BadInputError {
    return new BadInputError(
        `${ctx.show(path.resolve(ctx.repoRoot))}: more than ${MAX_WALK.toLocaleString("en")} files and folders; ${why}`,
    );
}

/**
 * Argo CD's repo server refuses to render from a repository holding a symbolic link that is absolute or whose
 * target steps outside the repository at any point (`.git` aside), since a tool following it would read the
 * machine's files (a chart's `.Files.Get`, a value file, a jsonnet import). check refuses the same before the
 * first render.
 */
export function confineLinks(ctx: RepoContext): void {
    const tree = repoTree(ctx);
    if (tree.escapingLink)
        throw new BadInputError(
            `${ctx.show(tree.escapingLink)}: a symbolic link that points outside the repository (Argo CD refuses to render a repository holding one; ${rootInUse(ctx)})`,
        );
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for links");
}

/** The repository's folders as a git directories generator lists them (repository-relative, sorted). */
export function repoFolders(ctx: RepoContext): string[] {
    const tree = repoTree(ctx);
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for folders");
    return tree.folders;
}

/** The repository's files as a git files generator reads them (repository-relative, sorted). */
export function repoFiles(ctx: RepoContext): string[] {
    const tree = repoTree(ctx);
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for files");
    return tree.files;
}
