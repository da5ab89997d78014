/**
 * The top level of the git work tree holding a folder, read from the files git itself reads, without running git,
 * in the plain case only: a `.git` folder of the running user's (a repository's own, not a linked worktree's or a
 * submodule's `.git` file), whose configuration moves nothing (no `core.worktree`, not bare, no include, no
 * extension), found from the folder's real path upward on one file system, with no GIT_ variable that could point
 * git elsewhere and git on PATH. Anything else is undefined: the caller asks git (./files.ts gitWorkTree), so the
 * answer is always git's; a run of `check` then needs no process and no `child_process` for its repository root.
 */
import * as fs from "fs";
import * as path from "path";

/** GIT_ variables that cannot make git find another repository (as ./files.ts surelyNoRepository reads them). */
const GIT_ENV_UNRELATED =
    /^GIT_(?:SSL_|SSH|ASKPASS$|TERMINAL_PROMPT$|AUTHOR_|COMMITTER_|EDITOR$|PAGER$|HTTP_|CURL_|PROXY_)/;

/** A repository configuration that leaves the work tree where its `.git` folder is (else git is asked). */
function plainConfig(text: string): boolean {
    // core.worktree, extensions.worktreeConfig, include/includeIf, any extension: left to git.
    if (/worktree|include|^\s*\[\s*extensions/im.test(text)) return false;
    for (const m of text.matchAll(/^\s*bare\s*(?:=\s*(.*?))?\s*(?:[#;].*)?$/gim))
        if (!/^(?:false|no|off|0)$/i.test(m[1] ?? "")) return false;
    for (const m of text.matchAll(/^\s*repositoryformatversion\s*=\s*(\S*)/gim)) if (!/^[01]$/.test(m[1])) return false;
    return true;
}

/** Whether `name` is an executable file in a folder of PATH (git, where git would be run). */
function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
    for (const dir of (env.PATH ?? "").split(path.delimiter)) {
        if (dir === "") continue;
        try {
            fs.accessSync(path.join(dir, name), fs.constants.X_OK);
            if (fs.statSync(path.join(dir, name)).isFile()) return true;
        } catch {
            // not here
        }
    }
    return false;
}

/** The entry's status without following a link, undefined when there is none (or it cannot be looked at: `unsure`). */
function entry(p: string): fs.Stats | undefined | "unsure" {
    try {
        return fs.lstatSync(p, { throwIfNoEntry: false });
    } catch {
        return "unsure";
    }
}

/**
 * The real path of the top level of the work tree holding `dir` when it is surely the plain case above (what
 * `git rev-parse --show-toplevel` prints there), else undefined (no repository, or not sure: ask git).
 */
export function plainTopLevel(dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    if (process.platform === "win32" || typeof process.getuid !== "function") return undefined;
    for (const name of Object.keys(env)) if (name.startsWith("GIT_") && !GIT_ENV_UNRELATED.test(name)) return undefined;
    const uid = process.getuid();
    let d: string;
    let device: number;
    try {
        d = fs.realpathSync(dir);
        device = fs.statSync(d).dev;
    } catch {
        return undefined;
    }
    for (;;) {
        const dotGit = entry(path.join(d, ".git"));
        if (dotGit === "unsure") return undefined;
        if (dotGit !== undefined) {
            if (!dotGit.isDirectory()) return undefined;
            const gitDir = path.join(d, ".git");
            const parts = [
                entry(path.join(gitDir, "HEAD")),
                entry(path.join(gitDir, "objects")),
                entry(path.join(gitDir, "refs")),
            ];
            if (!parts.every((p) => p !== undefined && p !== "unsure" && !p.isSymbolicLink())) return undefined;
            // git refuses a repository of another user (unless configured safe): it is asked then.
            try {
                if (fs.statSync(d).uid !== uid || dotGit.uid !== uid) return undefined;
                if (!plainConfig(fs.readFileSync(path.join(gitDir, "config"), "latin1"))) return undefined;
            } catch {
                return undefined;
            }
            return onPath("git", env) ? d : undefined;
        }
        // A bare repository (git's own files in the folder itself) is git's to judge.
        for (const name of ["HEAD", "objects", "refs"]) if (entry(path.join(d, name)) !== undefined) return undefined;
        const up = path.dirname(d);
        if (up === d) return undefined;
        try {
            // git stops at another file system (without GIT_DISCOVERY_ACROSS_FILESYSTEM): so does this.
            if (fs.statSync(up).dev !== device) return undefined;
        } catch {
            return undefined;
        }
        d = up;
    }
}
