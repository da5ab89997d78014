/**
 * Imported first by every command-line entry point: any error that escapes (even while loading modules)
 * becomes one line on stderr and exit code 2, never a stack trace. Set PKO_GUARD_DEBUG=1 for the trace.
 */
import { isMainThread } from "worker_threads";
import { escapeText } from "./escape";

/** Ends the process on an error nothing else handled: one line on stderr, exit 2 (a last resort). */
export function fatal(e: unknown): never {
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(`pko-guard: internal error: ${escapeText(message.split("\n")[0])}\n`);
    if (process.env.PKO_GUARD_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
    process.exit(2);
}

// A worker thread's failure is its parent's to handle (`check` then runs in one thread: gitops/manifests/parallel.ts).
if (isMainThread) {
    process.on("uncaughtException", fatal);
    process.on("unhandledRejection", fatal);
}
