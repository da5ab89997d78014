/**
 * Manifest files: which files a folder holds (recursive `.yaml`/`.yml`/`.json`, sorted, hidden folders and
 * `node_modules` not walked, no folder twice), reading one bounded (MAX_FILE_BYTES, binary files refused or
 * skipped), and where the repository root is (git).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { LoadResult } from "./manifest-objects";
import { isChart, kustomizationFile } from "../render/folders";
import { plainTopLevel } from "./work-tree";

export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** How standard input is named in messages and findings. */
export const STDIN_FILE = "<stdin>";
const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/**
 * Environment variables of git's that cannot make it find a repository (credentials, transport, identity,
 * editor): any other GIT_ variable (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_*, ...) leaves the answer to git.
 */
const GIT_ENV_UNRELATED =
    /^GIT_(?:SSL_|SSH|ASKPASS$|TERMINAL_PROMPT$|AUTHOR_|COMMITTER_|EDITOR$|PAGER$|HTTP_|CURL_|PROXY_)/;

/**
 * Whether git surely finds no repository from `dir`: no GIT_ variable that could point it at one, and no folder
 * from `dir` up to the root (its real path's and its path as given) holding what git looks for, a `.git` entry
 * (a folder, a file of a worktree or submodule, a link) or a bare repository's `HEAD`, `objects` or `refs`.
 * Anything unsure (an entry that cannot be looked at) is left to git. Without a repository git says it is not
 * in one (or is not installed), which gitTopLevel reads as undefined; so this saves running it, not its answer.
 */
export function surelyNoRepository(dir: string, env: NodeJS.ProcessEnv = process.env): boolean {
    for (const name of Object.keys(env)) if (name.startsWith("GIT_") && !GIT_ENV_UNRELATED.test(name)) return false;
    let real: string;
    try {
        real = fs.realpathSync(dir);
    } catch {
        return false;
    }
    for (const start of new Set([real, path.resolve(dir)])) {
        for (let d = start; ; d = path.dirname(d)) {
            for (const name of [".git", "HEAD", "objects", "refs"]) {
                try {
                    if (fs.lstatSync(path.join(d, name), { throwIfNoEntry: false }) !== undefined) return false;
                } catch (e) {
                    const code = (e as NodeJS.ErrnoException).code;
                    if (code !== "ENOENT" && code !== "ENOTDIR") return false;
                }
            }
            if (path.dirname(d) === d) break;
        }
    }
    return true;
}

/** What git says of a folder: the top level of the work tree holding it and that work tree's HEAD commit. */
export interface GitWorkTree {
    topLevel?: string;
    head?: string;
}

/**
 * The work tree holding `dir` as git sees it, from one git process (`rev-parse --show-toplevel` and the HEAD
 * commit; none when git surely finds no repository): `{}` outside a work tree, in a bare repository or without git,
 * no `head` in a repository without commits.
 */
export function gitWorkTree(dir: string): GitWorkTree {
    const answer: GitWorkTree = {};
    // Running git costs a process (a fork of this one, slower the larger its heap): not when there is no repository.
    if (!surelyNoRepository(dir)) {
        const r = spawnSync("git", ["rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"], {
            cwd: dir,
            stdio: ["ignore", "pipe", "ignore"],
            encoding: "utf8",
            maxBuffer: 64 * 1024,
        });
        // In a work tree git prints its top level first, then the commit when HEAD names one (exit 1 without).
        const [top, head] = r.error || (r.status !== 0 && r.status !== 1) ? [] : r.stdout.split("\n");
        if (top) {
            answer.topLevel = top;
            if (head && /^[0-9a-f]{40,64}$/.test(head)) answer.head = head;
        }
    }
    return answer;
}

/**
 * The git top level containing `dir`, or undefined outside a work tree (or without git): read from git's files in
 * the plain case (./work-tree.ts, no process), else git's answer.
 */
export function gitTopLevel(dir: string): string | undefined {
    return plainTopLevel(dir) ?? gitWorkTree(dir).topLevel;
}

export function posix(p: string): string {
    return p.split(path.sep).join("/");
}

/** Why a file's bytes are not a manifest's text (undecodable), or its text as kubectl decodes it. */
export function decodeText(buf: Buffer): { text: string } | { problem: string } {
    let text: string;
    if (buf[0] === 0xff && buf[1] === 0xfe) {
        text = new TextDecoder("utf-16le").decode(buf.subarray(2));
    } else if (buf[0] === 0xfe && buf[1] === 0xff) {
        text = new TextDecoder("utf-16be").decode(buf.subarray(2));
    } else {
        if (buf.includes(0)) return { problem: "binary file, not a manifest" };
        try {
            text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buf);
        } catch {
            return { problem: "not UTF-8 text (nor UTF-16 with a byte-order mark)" };
        }
        return { text };
    }
    if (text.includes("\u0000")) return { problem: "binary file, not a manifest" };
    return { text };
}

/**
 * Reads at most `max` bytes from an open descriptor, chunk by chunk; more is an error (`oversized`). The
 * count is of bytes read, so a device or a pipe that never ends is bounded like a file. `size` (a regular
 * file's size) sizes the first chunk: a file that has not grown is read into one buffer of its size plus the
 * byte that finds its end (one 1 MiB buffer a read, as before, was most of the time spent reading a repository
 * of small files, and garbage outside the heap that made the collector run more often).
 */
function readBounded(fd: number, max: number, size?: number): { buf: Buffer } | { oversized: true } {
    const chunks: Buffer[] = [];
    let total = 0;
    let next = size !== undefined && size >= 0 ? size + 1 : 64 * 1024;
    for (;;) {
        const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(next, 1 << 20, max + 1 - total)));
        let filled = 0;
        let ended = false;
        while (filled < chunk.length) {
            let n: number;
            try {
                n = fs.readSync(fd, chunk, filled, chunk.length - filled, null);
            } catch (e) {
                // Standard input may be a non-blocking pipe: wait for data instead of failing.
                if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
                    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
                    continue;
                }
                throw e;
            }
            if (n === 0) {
                ended = true;
                break;
            }
            filled += n;
        }
        if (filled > 0) chunks.push(filled === chunk.length ? chunk : chunk.subarray(0, filled));
        total += filled;
        if (total > max) return { oversized: true };
        if (ended) break;
        next = Math.max(64 * 1024, chunk.length * 2);
    }
    return { buf: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total) };
}

/** Standard input, bounded by MAX_FILE_BYTES of bytes read, decoded as files are. */
export function readStdin(fd = 0): string {
    let r: ReturnType<typeof readBounded>;
    try {
        r = readBounded(fd, MAX_FILE_BYTES);
    } catch {
        throw new BadInputError(`${STDIN_FILE}: cannot read standard input`);
    }
    if ("oversized" in r)
        throw new BadInputError(`${STDIN_FILE}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; not read`);
    const d = decodeText(r.buf);
    if ("problem" in d) throw new BadInputError(`${STDIN_FILE}: ${d.problem}`);
    return d.text;
}

/**
 * Files under a folder, sorted, following no folder twice. A folder that needs rendering (a kustomization,
 * a Helm chart) is never read as raw files: it goes to `roots` instead. A broken symbolic link or a folder that
 * cannot be read below `dir` is bad input: thrown, or with `problems`, kept there and the walk goes on.
 * `.jsonnet` files, which only an Application evaluates, go to `jsonnet` when given.
 */
export function walk(
    dir: string,
    seen: Set<string>,
    out: string[],
    roots: string[],
    problems?: string[],
    skip?: (abs: string) => boolean,
    jsonnet?: string[],
): void {
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
        if (skip?.(p)) continue; // excluded (./exclude.ts)
        let isDir = e.isDirectory();
        try {
            if (e.isSymbolicLink()) {
                try {
                    isDir = fs.statSync(p).isDirectory();
                } catch {
                    throw new BadInputError(`${p}: broken symbolic link`);
                }
            }
            if (isDir && !e.name.startsWith(".") && e.name !== "node_modules")
                walk(p, seen, out, roots, problems, skip, jsonnet);
        } catch (err) {
            if (!problems || !(err instanceof BadInputError)) throw err;
            problems.push(err.message);
            continue;
        }
        if (!isDir && EXTENSIONS.has(path.extname(e.name).toLowerCase())) out.push(p);
        else if (!isDir && jsonnet && path.extname(e.name).toLowerCase() === ".jsonnet") jsonnet.push(p);
    }
}

/**
 * Reads one file, bounded (see the module comment). A problem with a named file is bad input; with a file
 * found in a folder too, unless `skip` (then it is recorded as skipped and undefined is returned).
 */
export function readFile(
    file: string,
    shown: string,
    skip: boolean,
    out: Pick<LoadResult, "skipped">,
): string | undefined {
    const refuse = (reason: string): undefined => {
        if (!skip) throw new BadInputError(`${shown}: ${reason}`);
        out.skipped.push({ file: shown, reason });
        return undefined;
    };
    let fd: number;
    try {
        // Non-blocking: opening a FIFO must not wait for a writer. Only regular files are read.
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
    } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new BadInputError(`${shown}: no such file or folder`);
        if (code === "ENXIO") return refuse("not a regular file (a socket or FIFO); not read");
        return refuse("cannot read file");
    }
    try {
        const stat = fs.fstatSync(fd);
        if (!stat.isFile()) return refuse("not a regular file (a device, FIFO or socket); not read");
        let r: ReturnType<typeof readBounded>;
        try {
            r = readBounded(fd, MAX_FILE_BYTES, stat.size);
        } catch {
            return refuse("cannot read file");
        }
        if ("oversized" in r) return refuse(`larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; not read`);
        const d = decodeText(r.buf);
        if ("problem" in d) return refuse(d.problem);
        return d.text;
    } finally {
        fs.closeSync(fd);
    }
}
