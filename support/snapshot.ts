/**
 * State a start-up snapshot must not keep (cli/bundle/snapshot-builder.ts builds one of the installed command,
 * with a `check` run once inside it so that its functions are compiled): a module that keeps something of the
 * process it runs in (listeners, the environment, the tools found on PATH, a temporary folder) says here how to
 * forget it. The callbacks run just before the snapshot is written, in the builder only; a run started from the
 * snapshot then finds these modules as a fresh process would.
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
