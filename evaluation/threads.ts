/**
 * Worker threads for a large evaluation, as a seam: how many threads a run of a given size uses on this machine,
 * how its inputs are split into contiguous parts, and a handle on one part's thread (a thread that fails or exits
 * answers `{ failed: true }` with why). PKO_GUARD_WORKERS=1 turns threads off. Why these sizes:
 * docs/contributing/benchmarks.md.
 */
import * as fs from "fs";
import * as os from "os";
import { Worker, isMainThread, workerData } from "worker_threads";

/**
 * Bytes of input that make one thread's share: below twice this (about 50,000 manifest objects), a run stays in one
 * thread. One thread already keeps more than one core busy (V8's concurrent garbage collection and compilation).
 */
export const MIN_BYTES_PER_THREAD = 8 * 1024 * 1024;
/** The most threads a run uses. */
const MAX_THREADS = 4;
/**
 * From this many bytes (about 100,000 manifest objects) a run uses its threads even when no core is idle: one heap
 * of that size costs more in garbage collection than two halves.
 */
export const BUSY_MIN_BYTES = 32 * 1024 * 1024;
/**
 * How much of a run this thread takes against each worker thread: less, since besides its part it builds every
 * object's wire copy and runs the stack hooks while the workers judge (gitops/manifests/parallel.ts), which costs
 * it more than a worker's start (bootstrap, the copy of its part, its own isolate's warm-up) costs the worker.
 */
const FIRST_PART_WEIGHT = 0.8;

/**
 * The threads running on this machine right now, this one included (Linux: /proc/stat's procs_running, an
 * instant count, not the load average's minute-long memory); undefined where it cannot be read.
 */
export function runningNow(): number | undefined {
    try {
        const m = /^procs_running (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"));
        return m ? Number(m[1]) : undefined;
    } catch {
        return undefined;
    }
}

/**
 * How many threads a run of `bytes` uses: PKO_GUARD_WORKERS when set; else one per MIN_BYTES_PER_THREAD, at most
 * MAX_THREADS and the cores, and below BUSY_MIN_BYTES no more than the cores idle right now (`running`: the
 * threads running, this one included): a worker on a busy core only adds its start-up and its isolate's warm-up.
 */
export function threadsFor(bytes: number, requested = process.env.PKO_GUARD_WORKERS, running = runningNow()): number {
    const n = Number(requested);
    if (requested !== undefined && requested !== "" && Number.isInteger(n) && n >= 1) return Math.min(n, 16);
    const cores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
    const idle = running === undefined || bytes >= BUSY_MIN_BYTES ? cores : cores - running + 1;
    return Math.max(1, Math.min(cores, idle, MAX_THREADS, Math.floor(bytes / MIN_BYTES_PER_THREAD)));
}

/** Contiguous parts of `items` by size, the first FIRST_PART_WEIGHT times each other's (never an empty part). */
export function splitBySize<F>(items: F[], sizes: number[], parts: number): F[][] {
    const total = sizes.reduce((a, b) => a + b, 0);
    const share = total / (FIRST_PART_WEIGHT + parts - 1);
    const out: F[][] = [];
    let current: F[] = [];
    let done = 0;
    items.forEach((f, i) => {
        current.push(f);
        done += sizes[i];
        const left = items.length - i - 1;
        if (
            out.length < parts - 1 &&
            done >= share * (FIRST_PART_WEIGHT + out.length) &&
            left >= parts - 1 - out.length
        ) {
            out.push(current);
            current = [];
        }
    });
    if (current.length > 0) out.push(current);
    return out;
}

/** What a part's thread answers when it failed, exited or threw, and why. */
export type Failed = { failed: true; reason: string };

/** The job this thread was started with when it is a part thread tagged `tag`, else undefined. */
export function partJob<Job>(tag: string): Job | undefined {
    if (isMainThread) return undefined;
    const data = workerData as { tag?: string; job?: Job } | undefined;
    return data?.tag === tag ? data.job : undefined;
}

/** One worker thread running a part (`entry`, started with `job` under `tag`): its messages in order, on request. */
export class PartThread<Job, In, Out> {
    private readonly worker: Worker;
    private readonly waiting: ((m: Out | Failed) => void)[] = [];
    private readonly received: (Out | Failed)[] = [];
    private failure?: Failed;

    constructor(entry: string, tag: string, job: Job) {
        this.worker = new Worker(entry, { workerData: { tag, job } });
        this.worker.on("message", (m: Out) => {
            const w = this.waiting.shift();
            if (w) w(m);
            else this.received.push(m);
        });
        const fail = (reason: string) => {
            this.failure ??= { failed: true, reason };
            for (const w of this.waiting.splice(0)) w(this.failure);
        };
        this.worker.on("error", (e: Error) => fail(e.message.split("\n")[0]));
        this.worker.on("exit", (code: number) => fail(`the thread exited with code ${code}`));
    }

    next(): Promise<Out | Failed> {
        const m = this.received.shift();
        if (m) return Promise.resolve(m);
        if (this.failure) return Promise.resolve(this.failure);
        return new Promise((resolve) => this.waiting.push(resolve));
    }

    send(m: In): void {
        this.worker.postMessage(m);
    }

    stop(): void {
        this.worker.removeAllListeners("exit");
        this.worker.terminate().catch(() => undefined); // a thread that cannot be ended is ended with the process
    }
}
