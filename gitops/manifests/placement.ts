/**
 * Where an Argo CD Application puts what it syncs: its sources rendered (or its files read), its objects landed
 * in its destination (namespace, cluster scope, tracking metadata), Application trees and ApplicationSets expanded
 * in turn, and folders no Application renders rendered with defaults. loadManifests (./load.ts) drives it.
 */
import * as fs from "fs";
import * as path from "path";
import { MANIFEST_URN_PREFIX, NOT_RENDERED } from "../../policies/model/origin";
import { extended } from "../../support/shapes";
import { applicationOutput, isApplication, isApplicationSet } from "../argocd/applications";
import { argoKustomizeSettings, renderedArgoCdCms } from "../argocd/argocd-cm";
import { expandApplicationSet } from "../argocd/application-sets";
import { appKey, walkApplicationTree } from "../argocd/app-tree";
import { neverApplied } from "../argocd/sync-hooks";
import { CLUSTER_SCOPED_KINDS } from "../../support/kube-kinds";
import { record } from "../../support/records";
import { RenderContext, RenderedStream, SourceNotFetched, ToolFailed, mappingOf } from "../render/render";
import { kustomizationFile, renderKustomize } from "../render/kustomize";
import { isChart, renderHelm } from "../render/helm";
import {
    LoadResult,
    LocatedObject,
    ManifestObject,
    ObjectFields,
    emptyLoad,
    madeFrom,
    renderedWithDefaults,
} from "./manifest-objects";
import { destinationCluster } from "../argocd/destinations";
import { BadInputError } from "../../support/errors";
import { markNotRendered } from "./not-rendered";
import { placeFlux } from "./flux-placement";
import { isFluxApplier } from "../flux/flux-kinds";
import { otherRepository, shownUrl } from "../render/repo-url";

const TRACKING_ID = "argocd.argoproj.io/tracking-id";

/** The Application objects land by: its name, as shown, and its destination cluster (../argocd/destinations.ts). */
interface AppLanding {
    name: string;
    shown: string;
    cluster: string;
}

/** What an object was before any Application landed it, and the objects landing made of it (one a scope and identity). */
const landings = new WeakMap<ManifestObject, { base: ObjectFields; landed: ManifestObject[] }>();

/**
 * Lands an object read from a file an Application syncs: in place the first time, and again in place for
 * another Application that puts it at the same identity in the same cluster (the last one tracks it, as the
 * folder's one object); for another cluster or namespace, a copy of the object as read is landed there (`add`).
 */
function landFileObject(x: ManifestObject, namespace: string | undefined, app: AppLanding, add: Placing["add"]): void {
    const entry = landings.get(x);
    if (!entry || !x.named) {
        if (!entry) landings.set(x, { base: objectFields(x), landed: [x] });
        land(x, namespace, app);
        return;
    }
    const meta = record(entry.base.object.metadata) ?? {};
    const lands =
        namespace && x.named && (meta.namespace ?? "") === "" && !CLUSTER_SCOPED_KINDS.has(x.kind)
            ? `${x.kind}/${namespace}/${String(meta.name)}`
            : entry.base.identity;
    const same = entry.landed.find((v) => (v.scope ?? "") === app.cluster && v.identity === lands);
    if (same) return land(same, namespace, app);
    const copy = new LocatedObject({ ...entry.base }, x);
    entry.landed.push(copy);
    land(copy, namespace, app);
    add(copy);
}

function objectFields(x: ManifestObject): ObjectFields {
    const { file, identity, type, urn, kind, object, read, named, repoPath, abs, rendered, syncedBy, scope } = x;
    return { file, identity, type, urn, kind, object, read, named, repoPath, abs, rendered, syncedBy, scope };
}

/**
 * The object as it lands: in `namespace` when it is namespaced and names none, and marked as synced by the
 * Application `app` the way Argo CD v3 marks what it applies by default (annotation tracking,
 * `<app>:<group>/<Kind>:<namespace>/<name>`), so that rules know which Application manages it.
 */
function land(o: ManifestObject, namespace: string | undefined, app: AppLanding): void {
    o.syncedBy = `Application ${app.shown}`;
    o.scope = app.cluster;
    if (!o.named) return;
    const meta = (o.object.metadata ?? {}) as Record<string, unknown>;
    const name = String(meta.name);
    let ns = typeof meta.namespace === "string" ? meta.namespace : "";
    if (namespace && ns === "" && !CLUSTER_SCOPED_KINDS.has(o.kind)) {
        ns = namespace;
        o.identity = `${o.kind}/${namespace}/${name}`;
        o.urn = `${o.urn.slice(0, o.urn.lastIndexOf("::") + 2)}${o.identity}`;
    }
    const apiVersion = typeof o.object.apiVersion === "string" ? o.object.apiVersion : "";
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : "";
    const annotations = record(meta.annotations) ?? {};
    const tracking = `${app.name}:${group}/${o.kind}:${CLUSTER_SCOPED_KINDS.has(o.kind) ? "" : ns}/${name}`;
    if (landedMetadata.has(meta) && landedMetadata.has(annotations)) {
        // Landed before in this load (several Applications sync its folder): the copies that landing made are
        // this object's own, so they are updated in place, to the same keys in the same order as a fresh copy.
        if (ns !== "") meta.namespace = ns;
        annotations[TRACKING_ID] = tracking;
        return;
    }
    const landedAnnotations = extended(annotations, { [TRACKING_ID]: tracking });
    const landed = extended(
        meta,
        ns !== "" ? { namespace: ns, annotations: landedAnnotations } : { annotations: landedAnnotations },
    );
    landedMetadata.add(landed);
    landedMetadata.add(landedAnnotations);
    o.object = extended(o.object, { metadata: landed });
}

/**
 * The metadata (and annotations) objects `land` made, which belong to the landed object alone. An object that
 * many Applications sync (the same folder) is landed once per Application; copying it each time was most of
 * the Argo CD step's time (in a generated 10k-object repository where 20 Applications sync each folder).
 */
const landedMetadata = new WeakSet<object>();

/**
 * Argo CD's part: ApplicationSets expanded into Applications; each Application's sources rendered (or its
 * directory files read) and their objects placed in its destination namespace, then the Applications and
 * ApplicationSets that rendering produced, in turn (../argocd/app-tree.ts); folders that need rendering
 * and no Application renders are rendered with defaults (a kustomization no other kustomization uses as a
 * base, a chart that is not another chart's subchart).
 */
export function placeApplications(
    out: LoadResult,
    ctx: RenderContext,
    folders: { roots: string[]; named: Set<string> },
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
    // The Argo CD instance's kustomize settings, when the repository holds its argocd-cm, as written or as one of
    // its kustomizations builds it. A run told so (--kustomize-enable-helm) keeps it.
    ctx.kustomizeHelm ||= argoKustomizeSettings(out.objects, renderedArgoCdCms(ctx)).enableHelm;
    expandApplicationSets(out, ctx);
    const rendered = new Set<string>();
    for (const x of out.objects) index(x);
    const unapplied = new Set<ManifestObject>();
    const walk = (apps: ManifestObject[]) =>
        walkApplicationTree(apps, {
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
        });
    walk(out.objects.filter((x) => x.named && isApplication(x.object)));
    // Applications that unclaimed folders render (an app-of-apps chart whose root Application is made outside
    // the repository, as argocd-example-apps' `apps`) are placed in turn, like those of plain files.
    // Then Flux's entry points and what they apply (./flux-placement.ts): from plain files and from unclaimed
    // folders (the flux-system folder `flux bootstrap` writes is a kustomization).
    renderUnclaimed(out, folders, rendered, placing, (objects) => {
        const sets = objects.filter((x) => x.named && isApplicationSet(x.object));
        const created = sets.length > 0 ? expandApplicationSets(out, ctx, sets) : [];
        walk([...objects.filter((x) => x.named && isApplication(x.object)), ...created.filter((x) => x.named)]);
        placeFlux(out, placing, rendered);
    });
    if (unapplied.size > 0) out.objects = out.objects.filter((x) => !unapplied.has(x));
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

/**
 * Folders nobody renders, rendered with defaults: leaves only (bases and subcharts are rendered through what uses
 * them). Those whose output holds Applications or ApplicationSets are merged first and `place`d; the folders
 * their Applications then render are not rendered again with defaults (nor is their error raised).
 */
function renderUnclaimed(
    out: LoadResult,
    { roots, named }: { roots: string[]; named: Set<string> },
    rendered: Set<string>,
    p: Placing,
    place: (objects: ManifestObject[]) => void,
): void {
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
    const loads = new Map<string, LoadResult | BadInputError>();
    for (const r of unique) {
        if (used.has(r) || rendered.has(r)) continue;
        if (path.basename(path.dirname(r)) === "charts" && isChart(path.dirname(path.dirname(r)))) continue;
        try {
            const streams = kustomizationFile(r)
                ? renderKustomize(r, p.ctx)
                : renderHelm(r, p.ctx, { releaseName: path.basename(r) });
            const extra = p.fresh();
            for (const s of streams) p.readStream(s, extra);
            renderedWithDefaults(extra.objects, r, p.ctx.repoRoot);
            loads.set(r, extra);
        } catch (e) {
            if (!(e instanceof BadInputError)) throw e;
            loads.set(r, e);
        }
    }
    const holdsApps = (l: LoadResult | BadInputError): l is LoadResult =>
        !(l instanceof Error) &&
        l.objects.some((x) => isApplication(x.object) || isApplicationSet(x.object) || isFluxApplier(x.object));
    const parents = [...loads.values()].filter(holdsApps);
    for (const l of parents) {
        out.rendered++;
        p.merge(l);
    }
    place(parents.flatMap((l) => l.objects));
    for (const [r, l] of loads) {
        if (holdsApps(l) || rendered.has(r)) continue;
        if (l instanceof Error) {
            // A folder that an Application names in another repository (a fork or copy of the repository its
            // Applications name, a folder a plugin renders there): what Argo CD applies for that path is the
            // other repository's, judged through the Application (fetched, or failing closed), not this guess.
            const app = namingElsewhere(out.objects, r, p.ctx);
            const shown = p.ctx.show(r);
            // A folder found by walking that nothing here renders, which its tool refuses or whose remote base or
            // chart dependency cannot be fetched: the line says why check rendered it at all (its Application may
            // be outside the repository, or a plugin may render it).
            if (!app && !named.has(path.resolve(r)) && (l instanceof ToolFailed || l instanceof SourceNotFetched))
                throw new BadInputError(
                    `${l.message}; no Application of the run renders this folder, so check rendered it with defaults (--exclude ${shown} if a config management plugin or an Application elsewhere renders it)`,
                );
            if (!app) throw l;
            const why = (l.message.startsWith(`${shown} `) ? l.message.slice(shown.length + 1) : l.message).replace(
                /^\([a-z ]+\): /,
                "",
            );
            out.skipped.push({
                file: shown,
                reason: `rendering it with defaults fails (${why}); Application ${app.name} names this path in ${shownUrl(app.repoURL)}, whose content is what it applies`,
            });
            continue;
        }
        out.rendered++;
        p.merge(l);
    }
}

/**
 * The first Application of the load whose source names folder `dir`'s path (relative to the repository root) in
 * another repository than the checked one, or undefined (always when the run knows no repository).
 */
function namingElsewhere(
    objects: ManifestObject[],
    dir: string,
    ctx: RenderContext,
): { name: string; repoURL: string } | undefined {
    if (!ctx.repository) return undefined;
    const rel = path.relative(ctx.repoRoot, dir).split(path.sep).join("/");
    const norm = (p: string) => path.posix.normalize(p.replace(/^\/+/, "")).replace(/\/+$/, "").replace(/^\.$/, "");
    for (const x of objects) {
        if (!x.named || !isApplication(x.object)) continue;
        const spec = record(x.object.spec) ?? {};
        const sources = Array.isArray(spec.sources) ? (spec.sources as unknown[]) : [spec.source];
        for (const s of sources.map(record)) {
            if (typeof s?.path !== "string" || typeof s.repoURL !== "string" || norm(s.path) !== rel) continue;
            if (otherRepository(s.repoURL, "spec.source", ctx.repository) === undefined) continue;
            const meta = record(x.object.metadata) ?? {};
            const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? `${meta.namespace}/` : "";
            return { name: `${ns}${String(meta.name)}`, repoURL: s.repoURL };
        }
    }
    return undefined;
}
