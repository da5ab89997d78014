/**
 * Imported first by every command-line entry point: any error that escapes (even while loading modules)
 * becomes one line on stderr and exit code 2, never a stack trace. Set PKO_GUARD_DEBUG=1 for the trace.
 */
import { isMainThread } from "worker_threads";
import { endWithInternalError } from "./exit";

// A worker thread's failure is its parent's to handle (`check` then runs in one thread: gitops/manifests/parallel.ts).
if (isMainThread) {
    process.on("uncaughtException", endWithInternalError);
    process.on("unhandledRejection", endWithInternalError);
}
