/**
 * Child processes and temporary folders.
 * Every child runs in its own process group, so a deadline, Ctrl-C or SIGTERM kills the whole tree it started (the
 * Pulumi CLI's language hosts and providers), not only the direct child; on SIGINT/SIGTERM the interrupt hooks run and
 * the process exits 130 or 143, as shells do. SIGKILL cannot be caught: ./watchdog.ts, fed pids over a pipe the kernel
 * closes on any death, kills what is left (why not PR_SET_PDEATHSIG: docs/gate.md, "Signals").
 */
import { ChildProcess, SpawnOptions, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "./paths";
import { extended } from "./shapes";
import { forgetInSnapshot } from "./snapshot";

const children = new Set<ChildProcess>();
const folders = new Set<string>();
const interruptHooks = new Set<(signal: NodeJS.Signals) => void>();
let installed = false;
let watchdog: ChildProcess | undefined;

/** The watchdog's script: compiled beside this module, or tsc's output (from the CLI bundle), or (under ts-node, in tests) its source. */
function watchdogCommand(): string[] {
    for (const js of [path.join(__dirname, "watchdog.js"), path.join(REPO_ROOT, "bin", "support", "watchdog.js")])
        if (fs.existsSync(js)) return [js];
    return ["-r", require.resolve("ts-node/register/transpile-only"), path.join(__dirname, "watchdog.ts")];
}

/** Tells the watchdog (started on first use) about a child to kill if this process dies: `+pid` or `-pid`. */
function tellWatchdog(line: string): void {
    if (process.env.PKO_GUARD_NO_WATCHDOG === "1") return;
    if (!watchdog) {
        watchdog = spawn(process.execPath, watchdogCommand(), { detached: true, stdio: ["pipe", "ignore", "ignore"] });
        watchdog.on("error", () => undefined);
        watchdog.stdin!.on("error", () => undefined);
        watchdog.unref();
        (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
    }
    watchdog.stdin!.write(`${line}\n`);
}

function track(x: ChildProcess | string): void {
    if (typeof x === "string") folders.add(x);
    else {
        children.add(x);
        if (x.pid !== undefined) tellWatchdog(`+${x.pid}`);
    }
    installSignalHandlers();
}

function untrack(x: ChildProcess | string): void {
    if (typeof x === "string") folders.delete(x);
    else if (children.delete(x) && x.pid !== undefined) tellWatchdog(`-${x.pid}`);
}

/**
 * Runs `hook` when SIGINT or SIGTERM ends this process, after its children are killed and before it exits
 * (a command writes its reports there). Returns a function that removes it.
 */
export function onInterrupt(hook: (signal: NodeJS.Signals) => void): () => void {
    interruptHooks.add(hook);
    installSignalHandlers();
    return () => interruptHooks.delete(hook);
}

/** The live descendants of `pid` (children, grandchildren, ...), from the process table. */
export function descendantsOf(pid: number): number[] {
    let table = "";
    try {
        table = spawnSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8", timeout: 5000 }).stdout ?? "";
    } catch {
        return [];
    }
    const children = new Map<number, number[]>();
    for (const line of table.split("\n")) {
        const [p, pp] = line.trim().split(/\s+/).map(Number);
        if (Number.isInteger(p) && Number.isInteger(pp)) children.set(pp, [...(children.get(pp) ?? []), p]);
    }
    const out: number[] = [];
    const walk = (p: number) => {
        for (const c of children.get(p) ?? []) {
            if (out.includes(c)) continue;
            out.push(c);
            walk(c);
        }
    };
    walk(pid);
    return out;
}

/**
 * Kills a child and everything it started. The child's process group is killed, and so is every
 * descendant found in the process table first (before the kill reparents them): the Pulumi CLI starts
 * its language hosts and providers in process groups of their own, which a group kill alone misses.
 */
export function killTree(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
    if (child.pid !== undefined) killPidTree(child.pid, signal);
}

/** Kills a process started in its own group, its group and every descendant (see killTree). */
export function killPidTree(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
    const tree = descendantsOf(pid);
    for (const target of [-pid, pid, ...tree.flatMap((p) => [-p, p])]) {
        try {
            process.kill(target, signal);
        } catch {
            /* gone, or not a group leader */
        }
    }
}

/** Kills tracked children and removes tracked folders; safe to call more than once. */
export function cleanupNow(): void {
    for (const c of children) killTree(c);
    children.clear();
    for (const f of folders) fs.rmSync(f, { recursive: true, force: true });
    folders.clear();
}

/** The handlers installSignalHandlers added (a start-up snapshot removes them: ./snapshot.ts). */
const signalHandlers: [NodeJS.Signals, () => void][] = [];

function installSignalHandlers(): void {
    if (installed) return;
    installed = true;
    // Whatever way the process ends, nothing it started outlives it.
    process.once("exit", cleanupNow);
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
        const handler = () => {
            cleanupNow();
            for (const hook of interruptHooks) {
                try {
                    hook(signal);
                } catch {
                    // a hook that fails must not keep the process from ending
                }
            }
            process.stderr.write(`pko-guard: interrupted (${signal}); cleaned up\n`);
            process.exit(signal === "SIGINT" ? 130 : 143);
        };
        signalHandlers.push([signal, handler]);
        process.once(signal, handler);
    }
}

/**
 * The temporary root of this process: one folder under the system's temporary folder (or
 * PKO_GUARD_TMPDIR), created on first use, holding every temporary folder the run makes, and removed on
 * exit and on interrupt. Tests and concurrent runs never see each other's folders.
 */
let root: string | undefined;
function tmpRoot(): string {
    if (root === undefined || !fs.existsSync(root)) {
        const base = process.env.PKO_GUARD_TMPDIR ?? os.tmpdir();
        fs.mkdirSync(base, { recursive: true });
        root = fs.mkdtempSync(path.join(base, `pko-guard-${process.pid}-`));
        track(root);
    }
    return root;
}

/** A new temporary folder inside this run's temporary root. Remove it with `removeTempDir`. */
export function makeTempDir(prefix: string): string {
    return fs.mkdtempSync(path.join(tmpRoot(), `${prefix}-`));
}

export function removeTempDir(dir: string): void {
    fs.rmSync(dir, { recursive: true, force: true });
}

/** Runs `fn` with a fresh temporary folder that is removed afterwards, whatever happens. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
    const dir = makeTempDir(prefix);
    try {
        return await fn(dir);
    } finally {
        removeTempDir(dir);
    }
}

export interface Spawned {
    child: ChildProcess;
    /** Resolves when the child has exited (code null when killed or never started). */
    exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
    /** True once the deadline killed the child's process group. */
    timedOut(): boolean;
    /** Kills the child's process group now. */
    kill(): void;
}

/**
 * Spawns a tracked child in its own process group with a deadline: at `timeoutMs` the whole group is
 * killed. The child is untracked (and its timer cleared) when it exits.
 */
export function spawnTracked(cmd: string, args: string[], options: SpawnOptions & { timeoutMs?: number }): Spawned {
    const { timeoutMs, ...spawnOptions } = options;
    const child = spawn(cmd, args, extended(spawnOptions, { detached: true }));
    track(child);
    let timedOut = false;
    const timer =
        timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), killTree(child)), timeoutMs) : undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
        const done = (r: { code: number | null; signal: NodeJS.Signals | null; error?: Error }) => {
            if (timer) clearTimeout(timer);
            untrack(child);
            resolve(r);
        };
        child.once("error", (error) => done({ code: null, signal: null, error }));
        child.once("close", (code, signal) => done({ code, signal }));
    });
    return { child, exited, timedOut: () => timedOut, kill: () => killTree(child) };
}

export interface ExecResult {
    code: number | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
}

/** The most of each stream `exec` keeps for error messages (its tail); a reader given `onStdout` sees all of it. */
export const KEPT_OUTPUT_CHARS = 200_000;

/**
 * Runs a command to completion with a deadline (the whole process group is killed when it passes). Only the
 * tail of each stream is kept (for one-line error messages); `onStdout` receives every chunk of standard
 * output as it arrives, so a reader that must not lose anything (the preview's event stream) reads it whole,
 * incrementally, without holding it. `keepStdout: false` keeps no stdout at all.
 */
export async function exec(
    cmd: string,
    args: string[],
    opts: {
        cwd: string;
        env: NodeJS.ProcessEnv;
        input?: string;
        timeoutMs: number;
        onStdout?: (chunk: Buffer) => void;
        keepStdout?: boolean;
    },
): Promise<ExecResult> {
    const p = spawnTracked(cmd, args, {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ["pipe", "pipe", "pipe"],
        timeoutMs: opts.timeoutMs,
    });
    let stdout = "";
    let stderr = "";
    p.child.stdout!.on("data", (d: Buffer) => {
        opts.onStdout?.(d);
        if (opts.keepStdout !== false) stdout = (stdout + d.toString()).slice(-KEPT_OUTPUT_CHARS);
    });
    p.child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-KEPT_OUTPUT_CHARS)));
    p.child.stdin!.on("error", () => undefined);
    p.child.stdin!.end(opts.input ?? "");
    const r = await p.exited;
    return { code: r.code, stdout, stderr: r.error ? `${stderr}${r.error.message}` : stderr, timedOut: p.timedOut() };
}

/** A deadline for work that is not a child process (e.g. gRPC calls): rejects with `message` when it passes. */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, message: () => Error): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(message()), timeoutMs);
    });
    return Promise.race([work, deadline]).finally(() => timer && clearTimeout(timer));
}

// A snapshot's heap holds no process: no handler (a signal handler is a handle, which V8 cannot write), no child,
// no temporary folder, no interrupt hook; a run started from it installs its own on first use.
forgetInSnapshot(() => {
    cleanupNow();
    interruptHooks.clear();
    process.removeListener("exit", cleanupNow);
    for (const [signal, handler] of signalHandlers.splice(0)) process.removeListener(signal, handler);
    installed = false;
    root = undefined;
});
