/**
 * One part of `check`'s judge step on a worker thread (gitops/manifests/parallel.ts): the command's handle on the
 * thread (startPart, over evaluation/threads.ts) and the thread's side (servePart), which runs the resource hooks
 * over the part's resources and answers with their rows, or with why it could not.
 */
import { parentPort } from "worker_threads";
import { EvalResource, EvalRow, evaluatePack } from "../../evaluation/evaluate";
import { PackConfig } from "../../evaluation/pack-config";
import { Failed, PartThread, partJob } from "../../evaluation/threads";

/** What marks a worker thread as one of check's parts (workerData). */
const PART = "pkoGuardCheckPart";

/** What a part is given to judge. */
export interface PartJob {
    resources: EvalResource[];
    config: PackConfig;
}

type FromPart = { rows: EvalRow[] } | Failed;

/** The command's handle on one part's thread. */
export type CheckPartThread = PartThread<PartJob, never, FromPart>;

/** Starts a worker thread on `entry` (the installed command's file) that judges `job` (servePart). */
export function startPart(entry: string, job: PartJob): CheckPartThread {
    return new PartThread<PartJob, never, FromPart>(entry, PART, job);
}

/** A part's thread: judges its part, answers once, and waits to be ended (the installed command calls this first). */
export function servePart(): void {
    const job = partJob<PartJob>(PART);
    if (job === undefined) return;
    const port = parentPort!;
    let answer: FromPart;
    try {
        answer = { rows: evaluatePack(job.resources, job.config, undefined, "resource") };
    } catch (e) {
        answer = { failed: true, reason: e instanceof Error ? e.message.split("\n")[0] : String(e) };
    }
    port.postMessage(answer);
    // Kept open until the command ends it (PartThread.stop): an exit could overtake the answer.
    port.on("message", () => undefined);
}
