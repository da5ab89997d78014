#!/usr/bin/env node
/**
 * The pko-guard command (cli/program.ts assembles its commands, one module each). Exit codes: 0 no blocking violation,
 * 1 blocking violations, 2 bad usage or a tool error.
 */
import { escaped } from "../support/fatal";
import { startupSnapshot } from "v8";
import { isMainThread } from "worker_threads";
import { exitWhenWritten } from "../support/exit";
import { note } from "../support/timings";
import { main } from "./program";

/**
 * What a start-up snapshot's builder runs (cli/bundle/snapshot-builder.ts): the command, how it exits, and the
 * bench's note that a run started from the snapshot.
 */
export { escaped, exitWhenWritten, main, note };

// In a start-up snapshot's builder the command is loaded, not run: the snapshot's main function runs it.
if (!startupSnapshot.isBuildingSnapshot()) {
    if (isMainThread) main(process.argv.slice(2)).then(exitWhenWritten, escaped);
    // A worker thread of this command is a part of a large `check` (gitops/manifests/parallel.ts).
    else import("../gitops/manifests/check-parts").then((parts) => parts.servePart(), escaped);
}
