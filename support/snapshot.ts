/**
 * State a start-up snapshot must not keep: a module that holds something of its process (listeners, the environment,
 * tools found on PATH, a temporary folder) registers here how to forget it.
 * The callbacks run only in the builder (cli/bundle/snapshot-builder.ts), just before the snapshot is written, so a run
 * started from it finds these modules as a fresh process would.
 */
import { startupSnapshot } from "v8";

/** Runs `forget` before a start-up snapshot of this process is written (never, in a process that builds none). */
export function forgetInSnapshot(forget: () => void): void {
    if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.addSerializeCallback(forget);
}

/**
 * Runs `start` now and, in a process that builds a start-up snapshot, again in each run started from it: what a
 * module reads of its process when it loads (the environment), read from the process that runs.
 */
export function startAgainFromSnapshot(start: () => void): void {
    start();
    if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.addDeserializeCallback(start);
}
