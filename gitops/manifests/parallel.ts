/**
 * `check`'s one flow: read and place the run's objects (loadManifests), judge them, locate each row. The judge step
 * maps the resource hooks over contiguous parts of the objects, each part on a worker thread of its own when the run
 * is large enough (how many: evaluation/threads.ts; the first part stays on this thread), and runs the stack hooks
 * here once over every object while the threads judge their parts. The rows, sorted, are a single-threaded run's: a
 * resource hook's findings depend on its resource and the config alone. A part whose thread fails is judged here
 * instead, with a notice saying why.
 */
import * as fs from "fs";
import { EvalResource, EvalRow, evaluateFirstPart, evaluatePack } from "../../evaluation/evaluate";
import { PackConfig } from "../../evaluation/pack-config";
import { splitBySize, threadsFor } from "../../evaluation/threads";
import { escapeText } from "../../support/escape";
import { note } from "../../support/timings";
import { startPart } from "./check-parts";
import { LocatedRow, locateRows } from "./evaluate-manifests";
import { loadManifests } from "./load";
import { LoadOptions, LoadResult, evalResources } from "./manifest-objects";

/** A loaded run with its rows located, as `check` uses it. */
export interface CheckedManifests {
    load: LoadResult & { repoRoot: string };
    rows: LocatedRow[];
}

/** How `check` judges on threads. */
export interface ParallelOptions {
    /** The script a worker thread runs: the installed command's file (undefined: no worker threads). */
    entry?: string;
    /** Threads to use (default: PKO_GUARD_WORKERS, else by the run's size and the machine's cores). */
    threads?: number;
    /** Called once the run is read and placed, before it is judged. */
    onLoaded?: (load: LoadResult) => void;
    /** Where a notice goes (a part judged on this thread because its own failed); default: standard error. */
    notice?: (line: string) => void;
}

/** Reads, places and judges a `check` run; the same rows on any number of threads. */
export async function checkManifests(
    paths: string[],
    o: LoadOptions,
    config: PackConfig,
    par: ParallelOptions = {},
): Promise<CheckedManifests> {
    const load = loadManifests(paths, o);
    par.onLoaded?.(load);
    const rows = await judged(evalResources(load.objects), config, par, () => inputBytes(load));
    return { load, rows: locateRows(load, rows) };
}

/** The pack's rows over `resources`: the resource hooks mapped over parts (on threads when worth it), then the stack hooks. */
async function judged(
    resources: EvalResource[],
    config: PackConfig,
    par: ParallelOptions,
    bytes: () => number,
): Promise<EvalRow[]> {
    const threads =
        par.entry === undefined || resources.length < 2
            ? 1
            : Math.min(par.threads ?? threadsFor(bytes()), resources.length);
    if (threads < 2) {
        note("threads", 1);
        return evaluatePack(resources, config);
    }
    const parts = splitBySize(
        resources,
        resources.map(() => 1),
        threads,
    );
    const workers = parts.slice(1).map((part) => startPart(par.entry!, { resources: part, config }));
    try {
        // The first part's resource hooks and the stack hooks (which need none of the parts' rows) run here in one
        // request while the threads start and judge their parts. The stack rows still come last, as before sorting.
        const { resource: rows, stack: stackRows } = evaluateFirstPart(resources, config, parts[0].length);
        let used = 1;
        for (const [i, w] of workers.entries()) {
            const m = await w.next();
            let partRows: EvalRow[];
            if ("rows" in m) {
                partRows = m.rows;
                used++;
            } else {
                const notice = par.notice ?? ((line: string) => process.stderr.write(`${line}\n`));
                notice(
                    `pko-guard check: part ${i + 2} of ${parts.length} judged on the main thread: its worker thread failed (${escapeText(m.reason)})`,
                );
                partRows = evaluatePack(parts[i + 1], config, undefined, "resource");
            }
            for (const r of partRows) rows.push(r);
        }
        note("threads", used);
        for (const r of stackRows) rows.push(r);
        return rows;
    } finally {
        for (const w of workers) w.stop();
    }
}

/** The bytes of the files a run read (the input its thread count is sized by). */
function inputBytes(load: LoadResult): number {
    let total = 0;
    for (const file of new Set(load.objects.map((x) => x.abs))) {
        if (file === undefined) continue;
        try {
            total += fs.statSync(file).size;
        } catch (e) {
            // Read a moment ago: gone since, it counts for nothing.
            if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        }
    }
    return total;
}
