/**
 * Phase marks for the benchmark's start-up breakdown of `check` (bench/check-speed.ts), measured inside the command
 * users run.
 * With PKO_GUARD_TIMINGS=FILE set, each mark (milliseconds since the process started) and Node's bootstrap end are
 * written to FILE as JSON at exit. Unset (always, outside the bench), a mark is one comparison.
 */
import * as fs from "fs";
import { isMainThread } from "worker_threads";
import { forgetInSnapshot, startAgainFromSnapshot } from "./snapshot";

let file: string | undefined;
let marks: Record<string, number> = {};
let performance: import("perf_hooks").Performance | undefined;

function write(): void {
    if (!file || !performance) return;
    try {
        fs.writeFileSync(
            file,
            JSON.stringify({
                bootstrapComplete: performance.nodeTiming.bootstrapComplete,
                ...marks,
                exit: performance.now(),
            }),
        );
    } catch {
        // a benchmark aid: never a reason to fail the command
    }
}

startAgainFromSnapshot(() => {
    // The command's own thread only (a worker thread of `check` is part of its run, not a run).
    file = isMainThread ? process.env.PKO_GUARD_TIMINGS : undefined;
    // perf_hooks is loaded only when marks are kept: without it a 1k-object `check` compiles 8 fewer of Node's internal modules.
    performance = file ? (require("perf_hooks") as typeof import("perf_hooks")).performance : undefined;
    if (file) process.once("exit", write);
});
forgetInSnapshot(() => {
    process.removeListener("exit", write);
    file = undefined;
    performance = undefined;
    marks = {};
});

export function mark(name: string): void {
    if (performance) marks[name] = performance.now();
}

/** A count the breakdown reports beside the marks (the threads a `check` ran on). */
export function note(name: string, value: number): void {
    if (file) marks[name] = value;
}
