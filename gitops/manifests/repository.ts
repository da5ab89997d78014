/**
 * The repository `check` judges, as Application sources name it (gitops/render/repo-url.ts): the `origin`
 * remote of the git repository whose top level is the repository root, plus the URLs the user declares as the
 * same repository (`repositories:` of the configuration file, `--repository`). When the root is not a git top
 * level (a folder inside another repository, a copy without `.git`) or has no `origin`, only declared URLs
 * count: with none, no Application source is read from this folder (each fails closed), and the run says so
 * once (a notice), rather than guess which repository the folder is.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import { CheckedRepository } from "../render/repo-url";
import { GitWorkTree, gitWorkTree } from "./files";

/** The `origin` remote's URL of the git repository whose top level is `repoRoot` (`tree`: what git says of it), if any. */
export function originRemote(repoRoot: string, tree: GitWorkTree = gitWorkTree(repoRoot)): string | undefined {
    if (tree.topLevel === undefined) return undefined;
    try {
        if (fs.realpathSync(tree.topLevel) !== fs.realpathSync(repoRoot)) return undefined;
        const url = execFileSync("git", ["remote", "get-url", "origin"], {
            cwd: repoRoot,
            stdio: ["ignore", "pipe", "ignore"],
            encoding: "utf8",
            maxBuffer: 64 * 1024,
        }).trim();
        return url === "" ? undefined : url;
    } catch {
        return undefined;
    }
}

/** The HEAD commit of the git repository holding `repoRoot`, if it has one (the working tree check judges). */
export function headCommit(repoRoot: string): string | undefined {
    return gitWorkTree(repoRoot).head;
}

/**
 * The checked repository: its origin remote (when the root is a git top level), then the declared URLs; and the
 * HEAD commit. Only Applications read them, and asking git costs a process (one for the top level and HEAD, one
 * for the remote), so git is asked when they are first read: a run without Applications never asks.
 */
export function checkedRepository(repoRoot: string, declared: { url: string; from: string }[]): CheckedRepository {
    return new RepositoryOfRoot(repoRoot, declared);
}

class RepositoryOfRoot implements CheckedRepository {
    private tree: GitWorkTree | undefined;
    private known: { url: string; from: string }[] | undefined;

    constructor(
        private readonly root: string,
        private readonly declared: { url: string; from: string }[],
    ) {}

    private workTree(): GitWorkTree {
        return (this.tree ??= gitWorkTree(this.root));
    }

    get revision(): string | undefined {
        return this.workTree().head;
    }

    get urls(): { url: string; from: string }[] {
        if (this.known === undefined) {
            const origin = originRemote(this.root, this.workTree());
            this.known = [...(origin !== undefined ? [{ url: origin, from: "origin remote" }] : []), ...this.declared];
        }
        return this.known;
    }
}

/** The one notice of a run whose repository's URL is not known (no origin remote, none declared). */
export function unknownRepositoryNotice(repo: CheckedRepository): string | undefined {
    if (repo.urls.length > 0) return undefined;
    return (
        "this repository's URL is not known (the repository root is not a git top level with an origin remote, " +
        "and no URL is declared): no Application or Flux source is read from it, each fails closed; declare it under " +
        "repositories: in .pko-guard.yaml, or with --repository URL"
    );
}
