/**
 * The entry of the `check` bundle (bin/cli/pko-guard-check.bundle.js, built by ./build-cli.ts): the command line with
 * `check` alone, so that the code a `check` run compiles, caches and holds in its start-up snapshot is what `check`
 * can reach, not every command's. ./launch.ts runs it for `pko-guard check ...` and for the worker threads of a
 * large `check`; any other command line runs the whole command (cli/pko-guard.ts). Same exports as that entry, for
 * the snapshot's builder (./snapshot-builder.ts).
 */
import { startupSnapshot } from "v8";
import { isMainThread } from "worker_threads";
import { escaped } from "../../support/fatal";
import { exitWhenWritten } from "../../support/exit";
import { note } from "../../support/timings";
import * as check from "../check";
import { CommandTable, runCommandLine } from "../command-line";
import { Terminal, processTerminal } from "../guide";

/**
 * Imported, not `import()`ed as cli/program.ts does: this bundle runs `check` alone, and a module esbuild need not load
 * lazily it also need not wrap (each module's exports an object of getters), which the start-up snapshot would hold.
 */
const CHECK: CommandTable = [["check", () => Promise.resolve(check)]];

/** Runs `pko-guard check ...` (`argv` without node and the script; its first word is `check`). */
export function main(argv: string[], term: Terminal = processTerminal()): Promise<number> {
    return runCommandLine(argv, CHECK, term);
}

export { escaped, exitWhenWritten, note };

// As cli/pko-guard.ts: in a snapshot's builder the command is loaded, not run.
if (!startupSnapshot.isBuildingSnapshot()) {
    if (isMainThread) main(process.argv.slice(2)).then(exitWhenWritten, escaped);
    else import("../../gitops/manifests/check-parts").then((parts) => parts.servePart(), escaped);
}
