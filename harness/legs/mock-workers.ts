/**
 * Warm workers of the mock leg. Starting Node, loading @pulumi/pulumi and the TypeScript compiler cost more than
 * running a fixture program, so each worker (mock-program.js --serve) pays them once and runs programs one after
 * another, each in a fresh SDK state; a run's fixtures share the workers (one busy worker a fixture under way).
 * ts-node's require hook is process-wide, so a worker that compiled a TypeScript program only takes programs of
 * the same TypeScript set-up (its tsconfig.json, or none). A worker whose program failed or overran is gone; the
 * next fixture starts a new one. Idle workers never keep the harness alive, and end with it.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";
import { Spawned, spawnTracked } from "../../support/process";

/** A program to run: its folder, project, stack and runtime, and the config the language host would pass. */
export interface ProgramJob {
    dir: string;
    project: string;
    stack: string;
    runtime: string;
    config: string;
    secretKeys: string;
}

/** A reply of the worker: the registrations, or the run's error as one line. */
export type ProgramReply = { resources: unknown[] } | { error: string };

/** The compiled worker (the harness always runs from compiled JavaScript in bin/). */
const PROGRAM_RUNNER = path.join(REPO_ROOT, "bin", "harness", "legs", "mock-program.js");

/** The TypeScript set-up a program needs: none, or its tsconfig.json's text ("" when it has none). */
export function typeScriptKey(dir: string): string | undefined {
    if (!fs.existsSync(path.join(dir, "index.ts"))) return undefined;
    const tsConfig = path.join(dir, "tsconfig.json");
    return fs.existsSync(tsConfig) ? fs.readFileSync(tsConfig, "utf8") : "";
}

interface Worker {
    spawned: Spawned;
    /** The TypeScript set-up it registered (undefined: none yet, it takes any program). */
    typeScript: string | undefined;
    /** The tail of its stderr, for the line of a worker that died. */
    stderr: string;
    gone: boolean;
}

/** Idle workers, the one used last at the end. */
const idle: Worker[] = [];
/**
 * The most workers kept idle: the cores (`--jobs`' default). Fixtures of as many TypeScript set-ups would
 * otherwise each leave a worker waiting; past this the worker used longest ago ends.
 */
const MAX_IDLE = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);

/** Lets the harness exit while `w` waits (ref: keeps it alive while `w` runs a program). */
function hold(w: Worker, ref: boolean): void {
    const handles = [w.spawned.child, w.spawned.child.stderr, (w.spawned.child as { channel?: unknown }).channel];
    for (const h of handles as ({ ref?: () => void; unref?: () => void } | undefined)[])
        if (ref) h?.ref?.();
        else h?.unref?.();
}

function startWorker(): Worker {
    const spawned = spawnTracked(process.execPath, [PROGRAM_RUNNER, "--serve"], {
        cwd: REPO_ROOT,
        env: process.env,
        stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    const w: Worker = { spawned, typeScript: undefined, stderr: "", gone: false };
    spawned.child.stderr!.on("data", (d: Buffer) => (w.stderr = (w.stderr + d.toString()).slice(-8000)));
    // `exited` never rejects (support/process.ts): it resolves with the exit, or the error that prevented a start.
    spawned.exited.then(
        () => {
            w.gone = true;
            if (idle.includes(w)) idle.splice(idle.indexOf(w), 1);
        },
        () => undefined,
    );
    return w;
}

/** The idle worker last used that can run a program of this TypeScript set-up (the warmest), else a new one. */
function takeWorker(typeScript: string | undefined): Worker {
    let i = idle.length - 1;
    const fits = (w: Worker) => typeScript === undefined || w.typeScript === undefined || w.typeScript === typeScript;
    while (i >= 0 && (idle[i].gone || !fits(idle[i]))) i--;
    const w = i >= 0 ? idle.splice(i, 1)[0] : startWorker();
    hold(w, true);
    return w;
}

/** Runs a program in a warm worker; resolves with its registrations or rejects with one line. */
export function runInWorker(job: ProgramJob, timeoutMs: number): Promise<unknown[]> {
    const typeScript = job.runtime === "go" ? undefined : typeScriptKey(job.dir);
    const w = takeWorker(typeScript);
    const child = w.spawned.child;
    return new Promise((resolve, reject) => {
        let settled = false;
        const settle = (): boolean => {
            if (settled) return false;
            settled = true;
            clearTimeout(timer);
            child.off("message", onReply);
            return true;
        };
        const onReply = (reply: ProgramReply): void => {
            if (!settle()) return;
            if ("error" in reply) return reject(new Error(reply.error)); // the worker exits after a failure
            w.typeScript = w.typeScript ?? typeScript;
            hold(w, false);
            idle.push(w);
            if (idle.length > MAX_IDLE) idle.shift()!.spawned.kill();
            resolve(reply.resources);
        };
        const timer = setTimeout(() => {
            if (!settle()) return;
            w.spawned.kill();
            reject(new Error(`program timed out after ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
        child.on("message", onReply);
        // `exited` never rejects (support/process.ts).
        w.spawned.exited.then(
            ({ code, error }) => {
                if (!settle()) return;
                if (error) return reject(new Error(`cannot start the mock program runner: ${error.message}`));
                const last = w.stderr.trim().split("\n").filter(Boolean).pop();
                reject(new Error(last ?? `program runner exited with code ${code}`));
            },
            () => undefined,
        );
        child.send(job, (e) => {
            if (e && settle()) reject(new Error(`cannot reach the mock program runner: ${e.message}`));
        });
    });
}
