/**
 * One part of a large `check` run (gitops/manifests/parallel.ts): its files read, decoded and judged by every
 * per-resource hook, in whichever thread runs it; a worker thread serving its part (servePart) and the command's
 * handle on one (startPart, over evaluation/threads.ts); and the objects other threads read, as the command's
 * thread holds them.
 */
import { parentPort } from "worker_threads";
import { EvalRow, evaluatePack } from "../../evaluation/evaluate";
import { PackConfig } from "../../evaluation/pack-config";
import { isApplication, isApplicationSet } from "../argocd/applications";
import { isFluxApplier } from "../flux/flux-kinds";
import { rowPosition } from "./evaluate-manifests";
import { RunFile, loadFiles } from "./load";
import { LocatedObject, ManifestObject, Skip, evalResources } from "./manifest-objects";
import { extended } from "../../support/shapes";
import { Failed, PartThread, partJob, steady } from "../../evaluation/threads";

/** What marks a worker thread as one of check's parts (workerData). */
const PART = "pkoGuardCheckPart";

/** What a part sends back: its load (objects as plain data), its resource hooks' rows (located in the command's own part). */
export interface PartResult {
    files: number;
    documents: number;
    skipped: Skip[];
    aliasNodes: number;
    objects: PlainObject[];
    rows: { row: EvalRow; at?: { line: number; column: number } }[];
    /** Something only the single-threaded path handles (an Application, an ApplicationSet, a Flux Kustomization or HelmRelease). */
    unusual?: boolean;
}

type PlainObject = Pick<
    ManifestObject,
    "file" | "identity" | "type" | "urn" | "kind" | "object" | "read" | "named" | "repoPath" | "abs"
>;

/**
 * A part's work, in whichever thread runs it; `objects` keeps the part's own objects for locating later. The
 * command's own part locates its rows at once; a worker's rows are located when asked (after the stack hooks).
 */
export function runPart(
    files: RunFile[],
    cwd: string,
    repoRoot: string,
    skipUnreadable: boolean,
    config: PackConfig,
    locate: boolean,
): { result: PartResult; objects: ManifestObject[] } {
    const load = loadFiles(files, cwd, repoRoot, skipUnreadable);
    const base = {
        files: load.files,
        documents: load.documents,
        skipped: load.skipped,
        aliasNodes: load.budget.aliasNodes,
    };
    if (
        load.objects.some(
            (x) => x.named && (isApplication(x.object) || isApplicationSet(x.object) || isFluxApplier(x.object)),
        )
    ) {
        return { result: extended(base, { objects: [], rows: [], unusual: true }), objects: load.objects };
    }
    const byUrn = new Map(load.objects.map((o) => [o.urn, o]));
    // Nothing changes an object once read here (no Argo CD step): the SDK's copy of it made for the resource hooks
    // is the stack hooks' too, in this thread (evaluation/evaluate.ts `immutable`).
    const rows = evaluatePack(steady(evalResources(load.objects)), config, undefined, "resource").map((row) => {
        const obj = byUrn.get(row.urn);
        return { row, ...(obj && locate ? { at: rowPosition(row, obj) } : {}) };
    });
    const plain = load.objects.map((o): PlainObject => ({
        file: o.file,
        identity: o.identity,
        type: o.type,
        urn: o.urn,
        kind: o.kind,
        object: o.object,
        read: o.read,
        named: o.named,
        repoPath: o.repoPath,
        abs: o.abs,
    }));
    return { result: extended(base, { objects: plain, rows }), objects: load.objects };
}

/** What a part is given to do. */
export interface PartJob {
    files: RunFile[];
    cwd: string;
    repoRoot: string;
    skipUnreadable: boolean;
    config: PackConfig;
}

type FromPart = { result: PartResult } | Failed | { at: ({ line: number; column: number } | undefined)[] };
type ToPart = { locate: { urn: string; row: EvalRow }[] };

/** The command's handle on one part's thread. */
export type CheckPartThread = PartThread<PartJob, ToPart, FromPart>;

/** Starts a worker thread on `entry` (the installed command's file) that serves `job` (servePart). */
export function startPart(entry: string, job: PartJob): CheckPartThread {
    return new PartThread<PartJob, ToPart, FromPart>(entry, PART, job);
}

/** Whether this thread is a part of a check (the installed command then serves it instead of parsing arguments). */
export function isPartThread(): boolean {
    return partJob<PartJob>(PART) !== undefined;
}

/** A part's thread: runs its part, answers requests to locate rows on its objects, until it is terminated. */
export function servePart(): void {
    const data = partJob<PartJob>(PART);
    if (data === undefined) return;
    const port = parentPort!;
    let objects: Map<string, ManifestObject>;
    try {
        const part = runPart(data.files, data.cwd, data.repoRoot, data.skipUnreadable, data.config, false);
        objects = new Map(part.objects.map((o) => [o.urn, o]));
        port.postMessage({ result: part.result } satisfies FromPart);
        // While the command's thread runs the stack hooks: find the fields of this part's rows (each document's
        // positions are parsed once and kept), so that the request to locate them is answered at once.
        for (const { row } of part.result.rows) {
            const obj = objects.get(row.urn);
            if (obj) rowPosition(row, obj);
        }
    } catch {
        // Whatever it was (bad input included), the single-threaded path says it.
        port.postMessage({ failed: true } satisfies FromPart);
        return;
    }
    port.on("message", (m: ToPart) => {
        let at: ({ line: number; column: number } | undefined)[];
        try {
            at = m.locate.map(({ urn, row }) => {
                const obj = objects.get(urn);
                return obj ? rowPosition(row, obj) : undefined;
            });
        } catch {
            port.postMessage({ failed: true } satisfies FromPart);
            return;
        }
        port.postMessage({ at } satisfies FromPart);
    });
}

/** An object another thread read: everything but its positions, which that thread keeps. */
export function elsewhere(x: PlainObject): ManifestObject {
    return new LocatedObject(x, new OtherThread(x.identity));
}

/** Where an object another thread read is: only that thread can say. */
class OtherThread {
    constructor(private readonly identity: string) {}

    private away(): never {
        throw new Error(`${this.identity}: read by another thread; located there`);
    }

    get line(): number {
        return this.away();
    }

    get column(): number {
        return this.away();
    }

    locate(): never {
        return this.away();
    }
}
