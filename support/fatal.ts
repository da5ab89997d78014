/**
 * Imported first by every command-line entry point: any error that escapes (even while loading modules)
 * becomes one line on stderr and exit code 2, never a stack trace. Set PKO_GUARD_DEBUG=1 for the trace.
 */
import { isMainThread } from "worker_threads";
import { endWithInternalError } from "./exit";

// A worker thread's failure is its parent's to handle (its part of `check` is then judged on the main thread).
if (isMainThread) {
    process.on("uncaughtException", endWithInternalError);
    process.on("unhandledRejection", endWithInternalError);
}

/**
 * Where an entry point's top-level promise ends when it rejects: as any escaping error does, endWithInternalError() in the main
 * thread, and in a worker thread thrown on to its parent (the worker's `error` event).
 */
export function escaped(e: unknown): void {
    if (isMainThread) endWithInternalError(e);
    setImmediate(() => {
        throw e;
    });
}
