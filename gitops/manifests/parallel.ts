/**
 * `check` over a large repository on several cores: the run's files are split into contiguous parts (in the
 * order loadManifests reads them), and each part is read, decoded and judged by every per-resource hook in a
 * thread of its own (worker threads; the first part in this thread), its findings located in its own files. The
 * stack-level hooks then run here once over every object, exactly as a single-threaded run gives them (the
 * pack's stack policies see the whole repository), and their findings are located by the thread that read
 * the object. The rows, sorted (evaluation/rows.ts), are those of the single-threaded run, byte for byte: a resource
 * hook's findings depend on its resource and the config alone (evaluation/evaluate.ts `Hooks`), objects and skipped
 * files are joined in part order, and rows that tie in the sort come from one part in its own order.
 *
 * Only plain runs are split (files and folders without anything to render, no standard input); anything else,
 * and anything unusual found on the way (bad input, an Argo CD Application or ApplicationSet, one identity
 * twice, aliases over the run's budget, a thread that fails), is left to the single-threaded path, which then
 * says what it always says: the parallel path never has its own error messages. How many threads a run uses, how
 * its files are split and the threads themselves are the evaluation seam's (evaluation/threads.ts): a small
 * repository never starts a thread, nor a busy machine, and PKO_GUARD_WORKERS=N sets the number (1: none).
 */
import * as fs from "fs";
import { EvalRow, evaluatePack } from "../../evaluation/evaluate";
import { PackConfig } from "../../evaluation/pack-config";
import { sortRows } from "../../evaluation/rows";
import { LocatedRow, evaluateManifests, locatedRow, rowPosition } from "./evaluate-manifests";
import { RunFile, loadManifests, plainRunFiles, runRepoRoot } from "./load";
import { LoadOptions, LoadResult, ManifestObject, evalResources } from "./manifest-objects";
import { CheckPartThread, PartResult, elsewhere, runPart, startPart } from "./check-parts";
import { splitBySize, steady, threadsFor } from "../../evaluation/threads";
import { MAX_ALIAS_EXPANSION } from "../decode/manifest-yaml";
import { note } from "../../support/timings";

/** A loaded run with its rows located, as `check` uses it. */
export interface CheckedManifests {
    load: LoadResult & { repoRoot: string };
    rows: LocatedRow[];
}

/** Where a worker thread starts: the installed command's file (it serves a part when it sees one: ./check-parts.ts). */
export interface ParallelOptions {
    /** The script a worker thread runs (undefined: no worker threads). */
    entry?: string;
    /** Threads to use (default: PKO_GUARD_WORKERS, else by the repository's size and the machine's cores). */
    threads?: number;
    /** Called once the run is read (with several threads: read and judged by the resource hooks), before the rest. */
    onLoaded?: (load: LoadResult) => void;
}

/** The single-threaded path: what `check` always did (`repoRoot`: runRepoRoot's answer, when already asked). */
function single(
    paths: string[],
    o: LoadOptions,
    config: PackConfig,
    onLoaded?: (load: LoadResult) => void,
    repoRoot?: string,
): CheckedManifests {
    note("threads", 1);
    const load = loadManifests(paths, o, repoRoot);
    onLoaded?.(load);
    return { load, rows: evaluateManifests(load, config) };
}

/**
 * Loads and judges a `check` run: on several threads when it is plain and large enough (see the header), else
 * in this one. Either way the same load summary and the same rows.
 */
export async function checkManifests(
    paths: string[],
    o: LoadOptions,
    config: PackConfig,
    par: ParallelOptions = {},
): Promise<CheckedManifests> {
    if (par.entry === undefined) return single(paths, o, config, par.onLoaded);
    const cwd = o.cwd ?? process.cwd();
    let repoRoot: string;
    try {
        repoRoot = runRepoRoot(paths, o);
    } catch {
        return single(paths, o, config, par.onLoaded);
    }
    const files = plainRunFiles(paths, cwd, repoRoot, o.exclude);
    if (!files || files.length < 2) return single(paths, o, config, par.onLoaded, repoRoot);
    const sizes = files.map((f) => {
        try {
            return fs.statSync(f.abs).size;
        } catch {
            return 0;
        }
    });
    const threads = Math.min(par.threads ?? threadsFor(sizes.reduce((a, b) => a + b, 0)), files.length);
    if (threads < 2) return single(paths, o, config, par.onLoaded, repoRoot);
    const parts = splitBySize(files, sizes, threads);
    const skipUnreadable = o.skipUnreadable === true;
    const workers: CheckPartThread[] = [];
    try {
        for (const part of parts.slice(1))
            workers.push(startPart(par.entry, { files: part, cwd, repoRoot, skipUnreadable, config }));
        const joined = await joinParts(parts[0], workers, cwd, repoRoot, skipUnreadable, config, par.onLoaded);
        return joined ?? single(paths, o, config, par.onLoaded, repoRoot);
    } catch {
        return single(paths, o, config, par.onLoaded, repoRoot);
    } finally {
        for (const w of workers) w.stop();
    }
}

/** A row, and where its finding is once located. */
type RowAt = { row: EvalRow; at?: { line: number; column: number } };

/** The parts joined into one run, or undefined when the single-threaded path must decide. */
async function joinParts(
    first: RunFile[],
    workers: CheckPartThread[],
    cwd: string,
    repoRoot: string,
    skipUnreadable: boolean,
    config: PackConfig,
    onLoaded?: (load: LoadResult) => void,
): Promise<CheckedManifests | undefined> {
    let own: ReturnType<typeof runPart>;
    try {
        own = runPart(first, cwd, repoRoot, skipUnreadable, config, true);
    } catch {
        return undefined;
    }
    const results = await partResults(own.result, workers);
    if (!results) return undefined;
    if (results.some((r) => r.unusual) || results.reduce((n, r) => n + r.aliasNodes, 0) > MAX_ALIAS_EXPANSION)
        return undefined;
    const joined = joinObjects(own.objects, results);
    if (!joined) return undefined;
    const { objects, owner } = joined;
    const load = joinedLoad(objects, results, repoRoot);
    note("threads", results.length);
    onLoaded?.(load);
    // Resource hooks' rows in part order, then the stack hooks' over every object (the single-threaded order, by part).
    const rows: RowAt[] = results.flatMap((r) => r.rows);
    const stackRows = evaluatePack(steady(evalResources(objects)), config, undefined, "stack").map((row) => ({
        row,
        at: undefined as { line: number; column: number } | undefined,
    }));
    if (!(await locateRows(rows, stackRows, owner, own.objects, workers))) return undefined;
    const byUrn = new Map(objects.map((x) => [x.urn, x]));
    return {
        load,
        rows: sortRows<LocatedRow>(
            [...rows, ...stackRows].map(({ row, at }) => locatedRow(row, byUrn.get(row.urn), at)),
        ),
    };
}

/** Every part's result, this thread's first; undefined when a worker failed. */
async function partResults(own: PartResult, workers: CheckPartThread[]): Promise<PartResult[] | undefined> {
    const results: PartResult[] = [own];
    for (const w of workers) {
        const m = await w.next();
        if (!("result" in m)) return undefined;
        results.push(m.result);
    }
    return results;
}

/**
 * The run's objects in read order: this thread's own, then each part's as plain data; and the part that read
 * each (by URN). Undefined when two objects have one identity (loadManifests names both places).
 */
function joinObjects(
    ownObjects: ManifestObject[],
    results: PartResult[],
): { objects: ManifestObject[]; owner: Map<string, number> } | undefined {
    const owner = new Map<string, number>();
    const objects: ManifestObject[] = [...ownObjects];
    ownObjects.forEach((x) => owner.set(x.urn, 0));
    results.slice(1).forEach((r, i) => {
        for (const x of r.objects) {
            objects.push(elsewhere(x));
            owner.set(x.urn, i + 1);
        }
    });
    const identities = new Set<string>();
    for (const x of objects) {
        if (!x.named) continue;
        if (identities.has(x.identity)) return undefined;
        identities.add(x.identity);
    }
    return { objects, owner };
}

/** The load summary of the joined parts, as loadManifests gives it for the same files. */
function joinedLoad(objects: ManifestObject[], results: PartResult[], repoRoot: string) {
    const load: LoadResult & { repoRoot: string } = {
        objects,
        files: results.reduce((n, r) => n + r.files, 0),
        documents: results.reduce((n, r) => n + r.documents, 0),
        skipped: results.flatMap((r) => r.skipped),
        rendered: 0,
        notRendered: [],
        budget: { aliasNodes: results.reduce((n, r) => n + r.aliasNodes, 0) },
        repoRoot,
    };
    return load;
}

/**
 * Locates the rows not yet located: on this thread's own objects here, on another part's objects by that part's
 * thread (one request each). False when a thread failed to answer.
 */
async function locateRows(
    rows: RowAt[],
    stackRows: RowAt[],
    owner: Map<string, number>,
    ownObjects: ManifestObject[],
    workers: CheckPartThread[],
): Promise<boolean> {
    const ownByUrn = new Map(ownObjects.map((x) => [x.urn, x]));
    const wanted: Map<
        number,
        { urn: string; row: EvalRow; set: (at: { line: number; column: number } | undefined) => void }[]
    > = new Map();
    const ask = (entry: RowAt) => {
        const part = owner.get(entry.row.urn);
        if (part === undefined) return;
        if (part === 0) {
            entry.at = rowPosition(entry.row, ownByUrn.get(entry.row.urn)!);
            return;
        }
        const list = wanted.get(part) ?? [];
        list.push({ urn: entry.row.urn, row: entry.row, set: (at) => (entry.at = at) });
        wanted.set(part, list);
    };
    for (const entry of rows) if (!entry.at) ask(entry);
    for (const entry of stackRows) ask(entry);
    for (const [part, list] of wanted) workers[part - 1].send({ locate: list.map(({ urn, row }) => ({ urn, row })) });
    for (const [part, list] of wanted) {
        const m = await workers[part - 1].next();
        if (!("at" in m)) return false;
        list.forEach((x, i) => x.set(m.at[i]));
    }
    return true;
}
