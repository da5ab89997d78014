/**
 * The repository root of a run (gitops/manifests/files.ts gitTopLevel): git's own answer, `git rev-parse
 * --show-toplevel`, except that git is not run where it surely finds no repository (surelyNoRepository). Each
 * case compares gitTopLevel with git run directly: outside any repository, in a repository and a folder of it, in
 * a linked worktree (a `.git` file), in a bare repository, through a symbolic link into a repository, and with
 * GIT_DIR set. In the plain case (gitops/manifests/work-tree.ts: a `.git` folder of the user's that moves nothing) the
 * answer is read from git's files, and git (a stand-in on PATH that says when it runs) is not run.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { gitTopLevel, gitWorkTree, surelyNoRepository } from "../../../../gitops/manifests/files";
import { plainTopLevel } from "../../../../gitops/manifests/work-tree";

/** What git itself says from `dir` (undefined: not a work tree). */
function gitSays(dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const r = spawnSync("git", ["rev-parse", "--show-toplevel"], { cwd: dir, env, encoding: "utf8" });
    return r.status === 0 ? r.stdout.trim() || undefined : undefined;
}

/** The HEAD commit git itself names from `dir` (undefined: none, or not a repository). */
function headSays(dir: string): string | undefined {
    const r = spawnSync("git", ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: dir, encoding: "utf8" });
    return r.status === 0 ? r.stdout.trim() || undefined : undefined;
}

describe("the repository root: git's answer, without running git where there is surely no repository", () => {
    let tmp: string;
    const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "ignore" });

    before(function () {
        tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-repo-root-")));
        // The cases need a temporary folder that is itself in no repository.
        if (gitSays(tmp) !== undefined) this.skip();
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("outside any repository: git is not run, and its answer (none) is kept", () => {
        const dir = path.join(tmp, "plain", "manifests");
        fs.mkdirSync(dir, { recursive: true });
        assert.strictEqual(surelyNoRepository(dir), true);
        assert.strictEqual(gitTopLevel(dir), undefined);
        assert.strictEqual(gitSays(dir), undefined);
    });

    it("in a repository and a folder of it, a linked worktree (a .git file) and through a symbolic link: git's answer", () => {
        const repo = path.join(tmp, "repo");
        fs.mkdirSync(path.join(repo, "apps", "a"), { recursive: true });
        git(repo, "init", "-q");
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one");
        const worktree = path.join(tmp, "worktree");
        git(repo, "worktree", "add", "-q", worktree);
        fs.mkdirSync(path.join(worktree, "deep"));
        fs.symlinkSync(path.join(repo, "apps"), path.join(tmp, "link"));
        for (const dir of [
            repo,
            path.join(repo, "apps", "a"),
            worktree,
            path.join(worktree, "deep"),
            path.join(tmp, "link"),
            path.join(tmp, "link", "a"),
        ]) {
            assert.strictEqual(surelyNoRepository(dir), false, dir);
            assert.strictEqual(gitTopLevel(dir), gitSays(dir), dir);
            assert.ok(gitTopLevel(dir), dir);
        }
    });

    it("in a bare repository (no .git entry, but HEAD, objects, refs): left to git", () => {
        const bare = path.join(tmp, "bare.git");
        fs.mkdirSync(bare);
        git(bare, "init", "-q", "--bare");
        for (const dir of [bare, path.join(bare, "refs")]) {
            assert.strictEqual(surelyNoRepository(dir), false, dir);
            assert.strictEqual(gitTopLevel(dir), gitSays(dir), dir);
        }
    });

    it("GIT_DIR and other variables that point git at a repository leave it to git; credential and transport ones do not", () => {
        const dir = path.join(tmp, "plain");
        fs.mkdirSync(dir, { recursive: true });
        for (const name of [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_CEILING_DIRECTORIES",
            "GIT_CONFIG_PARAMETERS",
            "GIT_OBJECT_DIRECTORY",
        ]) {
            assert.strictEqual(surelyNoRepository(dir, { [name]: path.join(tmp, "repo", ".git") }), false, name);
        }
        for (const name of ["GIT_SSL_CAINFO", "GIT_TERMINAL_PROMPT", "GIT_SSH_COMMAND", "GIT_AUTHOR_NAME"]) {
            assert.strictEqual(surelyNoRepository(dir, { [name]: "x" }), true, name);
        }
        // GIT_DIR makes git answer outside any repository's folders: its answer is what the root is.
        const env = { ...process.env, GIT_DIR: path.join(tmp, "repo", ".git"), GIT_WORK_TREE: path.join(tmp, "repo") };
        assert.ok(gitSays(dir, env));
    });

    it("the work tree's HEAD comes from the same git process, as git names it: none before the first commit", () => {
        const repo = path.join(tmp, "heads");
        fs.mkdirSync(path.join(repo, "a", "b"), { recursive: true });
        git(repo, "init", "-q");
        // Before any commit: a top level, no HEAD commit (git exits 1 after printing the top level).
        const empty = gitWorkTree(path.join(repo, "a"));
        assert.strictEqual(empty.topLevel, gitSays(repo));
        assert.strictEqual(empty.head, undefined);
        assert.strictEqual(headSays(repo), undefined);
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one");
        // From a folder below, and from its top level: the commit git names.
        const deep = gitWorkTree(path.join(repo, "a", "b"));
        assert.strictEqual(deep.topLevel, gitSays(path.join(repo, "a", "b")));
        assert.match(deep.head ?? "", /^[0-9a-f]{40}$/);
        assert.strictEqual(deep.head, headSays(repo));
        assert.strictEqual(gitWorkTree(deep.topLevel ?? "").head, deep.head);
        // A bare repository has no work tree: neither.
        const bare = path.join(tmp, "heads-bare.git");
        fs.mkdirSync(bare);
        git(bare, "init", "-q", "--bare");
        assert.deepStrictEqual(gitWorkTree(bare), {});
    });

    it("a folder that does not exist: left to git (which cannot run there)", () => {
        const dir = path.join(tmp, "missing");
        assert.strictEqual(surelyNoRepository(dir), false);
        assert.strictEqual(gitTopLevel(dir), undefined);
    });
    describe("read from git's files in the plain case", () => {
        let marks: string;
        let fakeBin: string;
        let savedPath: string | undefined;
        const realGit = () =>
            (process.env.PATH ?? "")
                .split(path.delimiter)
                .map((d) => path.join(d, "git"))
                .find((f) => fs.existsSync(f))!;
        before(() => {
            // A git first on PATH that notes each run, then runs the real one.
            fakeBin = path.join(tmp, "fake-bin");
            marks = path.join(tmp, "git-runs");
            fs.mkdirSync(fakeBin);
            fs.writeFileSync(
                path.join(fakeBin, "git"),
                `#!/bin/sh\necho run >> '${marks}'\nexec '${realGit()}' "$@"\n`,
                { mode: 0o755 },
            );
            savedPath = process.env.PATH;
        });
        afterEach(() => {
            process.env.PATH = savedPath;
        });
        /** gitTopLevel(dir) with the noting git first on PATH: its answer and whether git ran. */
        const topLevel = (dir: string) => {
            fs.rmSync(marks, { force: true });
            process.env.PATH = `${fakeBin}${path.delimiter}${savedPath}`;
            try {
                return { top: gitTopLevel(dir), ran: fs.existsSync(marks) };
            } finally {
                process.env.PATH = savedPath;
            }
        };

        it("a repository's own .git folder: git's answer without running git, from the repository, a folder of it and a link into it", () => {
            const repo = path.join(tmp, "plain-repo");
            fs.mkdirSync(path.join(repo, "apps", "a"), { recursive: true });
            git(repo, "init", "-q");
            fs.symlinkSync(path.join(repo, "apps"), path.join(tmp, "plain-link"));
            for (const dir of [repo, path.join(repo, "apps", "a"), path.join(tmp, "plain-link", "a")]) {
                assert.strictEqual(plainTopLevel(dir), gitSays(dir), dir);
                assert.deepStrictEqual(topLevel(dir), { top: gitSays(dir), ran: false }, dir);
            }
        });

        it("a linked worktree, core.worktree, a bare or included configuration, GIT_DIR, no git on PATH: git is asked", () => {
            const repo = path.join(tmp, "asked");
            fs.mkdirSync(path.join(repo, "sub"), { recursive: true });
            git(repo, "init", "-q");
            git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one");
            const worktree = path.join(tmp, "asked-worktree");
            git(repo, "worktree", "add", "-q", worktree);
            assert.strictEqual(plainTopLevel(worktree), undefined);
            assert.deepStrictEqual(topLevel(worktree), { top: gitSays(worktree), ran: true });
            for (const [key, value] of [
                ["core.worktree", path.join(repo, "sub")],
                ["core.bare", "true"],
                ["include.path", path.join(tmp, "none.gitconfig")],
            ]) {
                git(repo, "config", key, value);
                assert.strictEqual(plainTopLevel(repo), undefined, key);
                assert.deepStrictEqual(topLevel(repo), { top: gitSays(repo), ran: true }, key);
                git(repo, "config", "--unset", key);
            }
            assert.strictEqual(plainTopLevel(repo), gitSays(repo));
            assert.strictEqual(plainTopLevel(repo, { ...process.env, GIT_DIR: path.join(repo, ".git") }), undefined);
            assert.strictEqual(plainTopLevel(repo, { PATH: path.join(tmp, "no-such-bin") }), undefined);
        });

        it("a repository of another user: git is asked (it refuses one it does not deem safe)", function () {
            if (process.getuid?.() !== 0) this.skip();
            const repo = path.join(tmp, "theirs");
            fs.mkdirSync(repo);
            git(repo, "init", "-q");
            fs.chownSync(repo, 65534, 65534);
            assert.strictEqual(plainTopLevel(repo), undefined);
            assert.deepStrictEqual(topLevel(repo), { top: gitSays(repo), ran: true });
        });
    });
});
