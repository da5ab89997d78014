/**
 * Reads Kubernetes manifests for `pko-guard check` and the manifest leg (files.ts: files and folders; yaml.ts:
 * documents; positions.ts: lines; objects.ts: objects and identities; Argo CD's part here): files and folders
 * (recursive `.yaml`/`.yml`/`.json`), multi-document YAML, `kind: List` and typed lists, and `-` for standard
 * input, decoded as Kubernetes decodes them (gitops/decode/kube-yaml.ts). Argo CD Applications are rendered with the real
 * tools (gitops/render/) and their objects placed in their destination namespace; folders that need rendering
 * are never read as raw files. Every object knows its file, line and column, and a field's.
 *
 * Each object becomes the resource the Kubernetes provider would register for it:
 * - type: `kubernetes:<group>/<version>:<Kind>`, the core group as `core` (`kubernetes:core/v1:Secret`);
 * - name (identity): `Kind/namespace/name`, or `Kind/name` when the object sets no namespace (cluster-scoped
 *   objects, and namespaced objects whose namespace is chosen when applied: Argo CD's destination, `-n`);
 * - urn: `urn:pulumi:check::manifests::<type>::<identity>` (synthesized; no Pulumi stack exists).
 * Identities are per cluster (./scopes.ts): one defined twice in one cluster is judged in each place and reported.
 *
 * Bad input is one line each, never the content of a file (a Secret's values never appear): invalid YAML
 * (file:line:column), a document that is not a mapping, an unreadable path, a named file that is binary or
 * larger than MAX_FILE_BYTES (exit 2). Every file is read before the run fails: each file that cannot be read
 * or decoded is a line (see `unreadable`), not just the first. Inside a folder, binary and oversized files, and documents that are
 * not Kubernetes objects (no apiVersion/kind, e.g. a CI workflow), are skipped and counted; hidden folders
 * (`.git`, `.github`) and `node_modules` are not walked.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError, BadInputsError } from "../../support/errors";
import { MANIFEST_URN_PREFIX, NOT_RENDERED } from "../../policies/model/origin";
import { extended } from "../../support/shapes";
import { applicationOutput, isApplication, isApplicationSet } from "../argocd/applications";
import { expandApplicationSet } from "../argocd/application-sets";
import { appKey, walkApplicationTree } from "../argocd/app-tree";
import { neverApplied } from "../argocd/sync-hooks";
import { record } from "../../support/records";
import { RenderContext, RenderedStream, mappingOf } from "../render/render";
import { KUSTOMIZATION_FILES, kustomizationFile, renderKustomize } from "../render/kustomize";
import { isChart, renderHelm } from "../render/helm";
import { STDIN_FILE, gitTopLevel, posix, readFile, readStdin, walk } from "./files";
import { LoadOptions, LoadResult, ManifestObject, emptyLoad, madeFrom } from "./manifest-objects";
import { AppLanding, land, landFileObject } from "./landing";
import { scopeObjects } from "./scopes";
import { CONFIG_FILE, walkFilter } from "./exclude";
import { destinationCluster } from "../argocd/destinations";
import { originals, parseSource } from "../decode/manifest-yaml";

/**
 * Loads every object of the given paths; duplicates and bad input throw BadInputError (one line). `knownRoot`:
 * the run's repository root when the caller has found it already (runRepoRoot, same paths and options).
 */
export function loadManifests(
    paths: string[],
    o: LoadOptions = {},
    knownRoot?: string,
): LoadResult & { repoRoot: string } {
    const cwd = o.cwd ?? process.cwd();
    const repoRoot = knownRoot ?? runRepoRoot(paths, o);
    originals.clear();
    const out = emptyLoad();
    const { shownName, repoPathOf, readOne, problems } = fileReader(cwd, repoRoot, o.skipUnreadable === true, out);
    const ctx: RenderContext = {
        deadline: Date.now() + (o.timeoutMs ?? 300_000),
        repoRoot,
        show: (abs) => repoPathOf(abs) ?? shownName(abs),
        scratch: {},
        cluster: o.cluster,
        repository: o.repository,
    };
    const skip = walkFilter(repoRoot, o.exclude);
    /** Folders that need rendering, found by walking or named directly. */
    const roots: string[] = [];
    let stdinRead = false;
    for (const p of paths) {
        if (p === "-") {
            if (stdinRead) throw new BadInputError("-: standard input given twice");
            stdinRead = true;
            const text = o.stdin ? o.stdin() : readStdin();
            out.files++;
            parseSource({ file: STDIN_FILE, text }, out, false);
            continue;
        }
        const abs = path.resolve(cwd, p);
        let stat: fs.Stats;
        try {
            stat = fs.statSync(abs);
        } catch {
            problems.push(`${p}: no such file or folder`);
            continue;
        }
        if (stat.isDirectory()) {
            const files: string[] = [];
            try {
                walk(abs, new Set(), files, roots, problems, skip);
            } catch (e) {
                if (!(e instanceof BadInputError)) throw e;
                problems.push(e.message);
            }
            for (const f of files) readOne(f, true);
        } else if (KUSTOMIZATION_FILES.includes(path.basename(abs)) || path.basename(abs) === "Chart.yaml") {
            roots.push(path.dirname(abs));
        } else if (abs !== path.join(repoRoot, CONFIG_FILE)) {
            readOne(abs, false);
        }
    }
    unreadable(problems);
    try {
        placeApplications(out, ctx, roots, readOne, (stream, into) => {
            parseSource(
                {
                    file: shownName(stream.from),
                    text: stream.text,
                    repoPath: repoPathOf(stream.from),
                    abs: stream.from,
                    rendered: true,
                },
                into,
                true,
            );
        });
    } finally {
        if (ctx.scratch?.dir) fs.rmSync(ctx.scratch.dir, { recursive: true, force: true });
    }
    unreadable(problems);
    // Identities are per cluster; one defined twice in a cluster is a finding on each definition (./scopes.ts).
    out.duplicates = scopeObjects(out.objects);
    return extended(out, { repoRoot });
}

/**
 * Fails the run when some file could not be read or decoded: with that file's one line (as ever) when it is the
 * only one, else with a line for each (BadInputsError).
 */
function unreadable(problems: string[]): void {
    if (problems.length === 1) throw new BadInputError(problems[0]);
    if (problems.length > 1) throw new BadInputsError(problems, `${problems.length} files cannot be read as manifests`);
}

/**
 * How files are named (shown, repository-relative) and read into a load, for one run. A file that cannot be read
 * or decoded (bad input) does not stop the reading: its line is kept in `problems`, for the caller to fail with.
 */
function fileReader(cwd: string, repoRoot: string, skipUnreadable: boolean, out: LoadResult) {
    const shownName = (abs: string) => {
        const rel = path.relative(cwd, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? abs : posix(rel);
    };
    const repoPathOf = (abs: string) => {
        const rel = path.relative(repoRoot, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : posix(rel);
    };
    const problems: string[] = [];
    const readOne = (f: string, fromFolder: boolean, into: LoadResult = out) => {
        const shown = shownName(f);
        try {
            const text = readFile(f, shown, fromFolder && skipUnreadable, into);
            if (text === undefined) return;
            into.files++;
            parseSource({ file: shown, text, repoPath: repoPathOf(f), abs: f }, into, fromFolder);
        } catch (e) {
            if (!(e instanceof BadInputError)) throw e;
            problems.push(e.message);
        }
    };
    return { shownName, repoPathOf, readOne, problems };
}

/** A file of a run as loadManifests reads it: its absolute path, and whether it was found in a folder (or named). */
export interface RunFile {
    abs: string;
    fromFolder: boolean;
}

/**
 * The files a run reads, in the order loadManifests reads them, when the run is plain files: no standard input,
 * no folder or file that needs rendering; undefined otherwise, or when a path cannot be read (loadManifests then
 * says why, as ever).
 */
export function plainRunFiles(
    paths: string[],
    cwd: string,
    repoRoot: string,
    exclude?: string[],
): RunFile[] | undefined {
    const skip = walkFilter(repoRoot, exclude);
    const files: RunFile[] = [];
    try {
        for (const p of paths) {
            if (p === "-") return undefined;
            const abs = path.resolve(cwd, p);
            const stat = fs.statSync(abs);
            if (stat.isDirectory()) {
                const found: string[] = [];
                const roots: string[] = [];
                walk(abs, new Set(), found, roots, undefined, skip);
                if (roots.length > 0) return undefined;
                for (const f of found) files.push({ abs: f, fromFolder: true });
            } else if (KUSTOMIZATION_FILES.includes(path.basename(abs)) || path.basename(abs) === "Chart.yaml") {
                return undefined;
            } else if (abs !== path.join(repoRoot, CONFIG_FILE)) {
                files.push({ abs, fromFolder: false });
            }
        }
    } catch {
        return undefined;
    }
    return files;
}

/**
 * Reads some of a plain run's files (plainRunFiles) as loadManifests reads them, with no Argo CD step and no
 * check of identities across files: the caller (gitops/manifests/parallel.ts) joins the parts of a run and leaves
 * anything else to loadManifests.
 */
export function loadFiles(files: RunFile[], cwd: string, repoRoot: string, skipUnreadable: boolean): LoadResult {
    const out = emptyLoad();
    const { readOne, problems } = fileReader(cwd, repoRoot, skipUnreadable, out);
    for (const f of files) readOne(f.abs, f.fromFolder);
    unreadable(problems);
    return out;
}

/** The repository root of a run (as loadManifests finds it), or a BadInputError. */
export function runRepoRoot(paths: string[], o: Pick<LoadOptions, "repoRoot" | "cwd">): string {
    const cwd = o.cwd ?? process.cwd();
    const first = paths.find((p) => p !== "-");
    const firstDir = first ? path.resolve(cwd, first) : cwd;
    const startDir = fs.existsSync(firstDir) && fs.statSync(firstDir).isDirectory() ? firstDir : path.dirname(firstDir);
    const repoRoot = path.resolve(cwd, o.repoRoot ?? gitTopLevel(startDir) ?? cwd);
    if (o.repoRoot !== undefined && !(fs.existsSync(repoRoot) && fs.statSync(repoRoot).isDirectory())) {
        throw new BadInputError(`--repo-root ${o.repoRoot}: no such folder`);
    }
    return repoRoot;
}

/**
 * Records on an Application or ApplicationSet why check could not compute what it applies (one line a reason;
 * argocd-app-rendered reports each, failing closed), replacing whatever the manifest itself wrote there.
 */
function markNotRendered(o: ManifestObject, reasons: string[]): void {
    const meta = (o.object.metadata ?? {}) as Record<string, unknown>;
    const annotations = { ...(record(meta.annotations) ?? {}) };
    delete annotations[NOT_RENDERED];
    const lines = reasons.map((r) => r.replace(/[\r\n]+/g, " "));
    if (lines.length > 0) annotations[NOT_RENDERED] = lines.join("\n");
    else if (meta.annotations === undefined || !(NOT_RENDERED in (meta.annotations as Record<string, unknown>))) return;
    o.object = extended(o.object, { metadata: extended(meta, { annotations }) });
}

/**
 * Argo CD's part: ApplicationSets expanded into Applications; each Application's sources rendered (or its
 * directory files read) and their objects placed in its destination namespace, then the Applications and
 * ApplicationSets that rendering produced, in turn (../argocd/app-tree.ts); folders that need rendering
 * and no Application renders are rendered with defaults (a kustomization no other kustomization uses as a
 * base, a chart that is not another chart's subchart).
 */
function placeApplications(
    out: LoadResult,
    ctx: RenderContext,
    roots: string[],
    readOne: (f: string, fromFolder: boolean, into?: LoadResult) => void,
    readStream: (s: RenderedStream, into: LoadResult) => void,
): void {
    // The objects of each file (by absolute path), kept as objects are added: Applications look their files up here.
    const byFile = new Map<string, ManifestObject[]>();
    const index = (x: ManifestObject) => {
        if (x.abs === undefined) return;
        const list = byFile.get(x.abs);
        if (list) list.push(x);
        else byFile.set(x.abs, [x]);
    };
    const placing: Placing = {
        ctx,
        byFile,
        readOne,
        readStream,
        fresh: () => emptyLoad(out.budget),
        add: (x) => out.objects.push(x),
        merge: (from) => {
            for (const x of from.objects) {
                out.objects.push(x);
                index(x);
            }
            out.files += from.files;
            out.documents += from.documents;
            out.skipped.push(...from.skipped);
        },
    };
    expandApplicationSets(out, ctx);
    const rendered = new Set<string>();
    for (const x of out.objects) index(x);
    const unapplied = new Set<ManifestObject>();
    walkApplicationTree(
        out.objects.filter((x) => x.named && isApplication(x.object)),
        {
            place: (app, via) => placeApplication(app, out, rendered, placing, { via, unapplied }),
            expandSet: (set) => expandApplicationSets(out, ctx, [set]),
            drop: (o) => unapplied.add(o),
            fail: (o, reason) => {
                const before = record(record(o.object.metadata)?.annotations)?.[NOT_RENDERED];
                markNotRendered(o, [
                    ...(typeof before === "string" && before !== "" ? before.split("\n") : []),
                    reason,
                ]);
                out.notRendered.push(`${o.kind} ${JSON.stringify(appKey(o))}: ${reason}`);
            },
        },
    );
    if (unapplied.size > 0) out.objects = out.objects.filter((x) => !unapplied.has(x));
    renderUnclaimed(out, roots, rendered, placing);
}

/** What placing objects needs: the render context, the objects by file, reading into a fresh load, merging it. */
interface Placing {
    ctx: RenderContext;
    byFile: Map<string, ManifestObject[]>;
    readOne: (f: string, fromFolder: boolean, into?: LoadResult) => void;
    readStream: (s: RenderedStream, into: LoadResult) => void;
    /** An empty load that shares the run's alias budget. */
    fresh: () => LoadResult;
    /** Adds a load's objects (indexed by file) and counts to the run's. */
    merge: (from: LoadResult) => void;
    /** Adds one object (a copy landed elsewhere: not indexed by file). */
    add: (x: ManifestObject) => void;
}

/** ApplicationSets (`sets`, default: all of the load's): the Applications they create are objects too; returns those. */
function expandApplicationSets(
    out: LoadResult,
    ctx: RenderContext,
    sets = out.objects.filter((x) => x.named && isApplicationSet(x.object)),
): ManifestObject[] {
    const created: ManifestObject[] = [];
    for (const set of sets) {
        const expansion = expandApplicationSet(set.object, ctx);
        markNotRendered(set, expansion.notExpanded);
        const setName = (set.object.metadata as Record<string, unknown> | undefined)?.name;
        out.notRendered.push(...expansion.notExpanded.map((r) => `ApplicationSet ${JSON.stringify(setName)}: ${r}`));
        expansion.applications.forEach((app) => {
            const meta = (app.metadata ?? {}) as Record<string, unknown>;
            if (typeof meta.name !== "string" || meta.name === "") return;
            const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined;
            const identity = ns ? `Application/${ns}/${meta.name}` : `Application/${meta.name}`;
            const type = "kubernetes:argoproj.io/v1alpha1:Application";
            created.push(
                madeFrom(set, {
                    identity,
                    type,
                    urn: `${MANIFEST_URN_PREFIX}${type}::${identity}`,
                    kind: "Application",
                    object: app,
                    read: true,
                    named: true,
                    syncedBy: `ApplicationSet ${set.identity.replace(/^ApplicationSet\//, "")}`,
                }),
            );
        });
    }
    out.objects.push(...created);
    return created;
}

/**
 * One Application: its sources rendered (or its files read) and their objects landed in its destination, but
 * hooks Argo CD never applies (../argocd/sync-hooks.ts), which are skipped (added to `tree.unapplied` when
 * read before). `tree.via`: the Applications above it in an Application tree, shown on what it syncs. Returns
 * the objects it added to the load.
 */
function placeApplication(
    app: ManifestObject,
    out: LoadResult,
    rendered: Set<string>,
    p: Placing,
    tree: { via: string[]; unapplied: Set<ManifestObject> },
): ManifestObject[] {
    const meta = (app.object.metadata ?? {}) as Record<string, unknown>;
    const shown = `${typeof meta.namespace === "string" ? meta.namespace + "/" : ""}${String(meta.name)}`;
    const appName: AppLanding = {
        name: String(meta.name),
        shown: [shown, ...[...tree.via].reverse()].join(" via "),
        cluster: destinationCluster(app.object),
    };
    const added: ManifestObject[] = [];
    const applied = (x: ManifestObject) => {
        const why = neverApplied(x.object);
        if (why) out.skipped.push({ file: x.file, reason: `${x.identity}: ${why}` });
        return !why;
    };
    const result = applicationOutput(app.object, p.ctx);
    markNotRendered(app, result.notes);
    out.notRendered.push(...result.notes.map((r) => `Application ${JSON.stringify(meta.name)}: ${r}`));
    result.rendered.forEach((d) => rendered.add(d));
    for (const f of result.empty ?? [])
        out.skipped.push({
            file: p.ctx.show(f),
            reason: `yields no objects, so Application ${appName.shown} applies none of it`,
        });
    out.rendered += result.renders;
    const files = new Set(result.files);
    for (const f of result.files) {
        if (!p.byFile.has(f)) {
            const extra = p.fresh();
            p.readOne(f, true, extra);
            p.merge(extra);
            added.push(...extra.objects);
        }
    }
    for (const f of files)
        for (const x of p.byFile.get(f) ?? [])
            if (x !== app && !tree.unapplied.has(x)) {
                if (applied(x)) landFileObject(x, result.namespace, appName, p.add);
                else tree.unapplied.add(x);
            }
    for (const s of result.streams) {
        const extra = p.fresh();
        p.readStream(s, extra);
        extra.objects = extra.objects.filter(applied);
        for (const x of extra.objects) land(x, result.namespace, appName);
        p.merge(extra);
        added.push(...extra.objects);
    }
    return added.filter((x) => !tree.unapplied.has(x));
}

/** Folders nobody renders, rendered with defaults: leaves only (bases and subcharts are rendered through what uses them). */
function renderUnclaimed(out: LoadResult, roots: string[], rendered: Set<string>, p: Placing): void {
    const unique = [...new Set(roots.map((r) => path.resolve(r)))].filter((r) => !rendered.has(r));
    const used = new Set<string>();
    for (const r of [...new Set([...roots.map((x) => path.resolve(x)), ...rendered])]) {
        const k = kustomizationFile(r);
        if (k) {
            const doc = mappingOf(fs.readFileSync(k, "utf8"));
            for (const field of ["resources", "bases", "components"]) {
                for (const e of Array.isArray(doc[field]) ? (doc[field] as unknown[]) : [])
                    if (typeof e === "string") used.add(path.resolve(r, e));
            }
        }
    }
    for (const r of unique) {
        if (used.has(r) || [...rendered].some((d) => d === r)) continue;
        if (path.basename(path.dirname(r)) === "charts" && isChart(path.dirname(path.dirname(r)))) continue;
        const streams = kustomizationFile(r)
            ? renderKustomize(r, p.ctx)
            : renderHelm(r, p.ctx, { releaseName: path.basename(r) });
        out.rendered++;
        for (const s of streams) {
            const extra = p.fresh();
            p.readStream(s, extra);
            p.merge(extra);
        }
    }
}
