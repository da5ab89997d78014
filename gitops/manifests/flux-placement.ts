/**
 * Where Flux puts what it applies. Each Flux entry point is a cluster: a Kustomization or HelmRelease that no
 * other one applies (the `flux-system` Kustomization of `clusters/<name>/` that `flux bootstrap` writes, or
 * each top-level Kustomization tree). Its scope is the cluster folder it is written in (`clusters/prod` for
 * `clusters/prod/flux-system/gotk-sync.yaml`), so the same Kustomization in each cluster's folder is one object
 * in each cluster, never a duplicate. From each entry, breadth first, every Kustomization and HelmRelease is
 * rendered as its controller renders it (gitops/flux/) and its objects land in the entry's cluster (another
 * cluster for one with `spec.kubeConfig`), marked with the owner labels the controller sets; the Kustomizations
 * and HelmReleases among them are placed in turn. A file Flux renders is judged as rendered, not as written:
 * the objects read from it as plain files give way to the rendered ones.
 */
import * as path from "path";
import { RenderContext, RenderedStream } from "../render/render";
import { kustomizationFile } from "../render/kustomize";
import { record, str } from "../../support/records";
import { extended } from "../../support/shapes";
import { CLUSTER_SCOPED_KINDS } from "../../support/kube-kinds";
import { LoadResult, ManifestObject, renderedWithDefaultsFrom } from "./manifest-objects";
import { markNotRendered } from "./not-rendered";
import { BadInputError } from "../../support/errors";
import { fluxName, isFluxApplier, isFluxKustomization, isHelmRelease } from "../flux/flux-kinds";
import { sourceLookup } from "../flux/flux-sources";
import { FluxOutput, fluxKustomizationOutput, sopsEncrypted } from "../flux/flux-kustomizations";
import { helmReleaseOutput } from "../flux/flux-helmreleases";

/** At most this many Kustomizations and HelmReleases below an entry point (a deeper one fails closed). */
const MAX_DEPTH = 10;

/** What placing Flux's objects needs from the run's load. */
export interface FluxPlacing {
    ctx: RenderContext;
    readStream: (s: RenderedStream, into: LoadResult) => void;
    fresh: () => LoadResult;
    merge: (from: LoadResult) => void;
}

/**
 * The scope of a Flux cluster whose entry point is `o`: the cluster its kubeConfig names, else its cluster folder.
 */
export function entryScope(o: ManifestObject): string {
    return kubeConfigScope(o.object) ?? entryHome(o);
}

/**
 * The cluster an entry point `o` itself is applied to, where its controller runs and reads its sources: its
 * cluster folder, the folder rendered with defaults that produced it (an overlay), else the folder of its file.
 */
function entryHome(o: ManifestObject): string {
    let dir = renderedWithDefaultsFrom(o) ?? path.posix.dirname(o.repoPath ?? o.file.replace(/\\/g, "/"));
    if (path.posix.basename(dir) === "flux-system") dir = path.posix.dirname(dir);
    return `flux:${dir}`;
}

/** Another cluster, for an object with `spec.kubeConfig` (named by its Secret), else undefined. */
function kubeConfigScope(o: Record<string, unknown>): string | undefined {
    const kube = record(record(o.spec)?.kubeConfig);
    if (!kube) return undefined;
    const secret = str(record(kube.secretRef)?.name);
    const provider = str(record(kube.configMapRef)?.name);
    return `flux-kubeconfig:${fluxName(o).namespace}/${secret ?? provider ?? "(unnamed)"}`;
}

interface Queued {
    o: ManifestObject;
    /** The cluster `o` is applied to: its controller runs there and reads its sources, substitutions and values. */
    home: string;
    /** The cluster what `o` applies lands in (`home`, or the one its `spec.kubeConfig` names): `o`'s scope. */
    scope: string;
    via: string[];
}

function who(o: Record<string, unknown>): string {
    return `${isHelmRelease(o) ? "HelmRelease" : "Kustomization"} ${fluxName(o).shown}`;
}

/**
 * Places every Flux Kustomization and HelmRelease of the load and what they apply. `rendered`: folders rendered,
 * which are never rendered again with defaults.
 */
export function placeFlux(out: LoadResult, p: FluxPlacing, rendered: Set<string>): void {
    const raw = out.objects.filter(
        (o) => o.named && o.syncedBy === undefined && o.scope === undefined && isFluxApplier(o.object),
    );
    if (raw.length === 0) return;
    const lookup = sourceLookup(() => out.objects);
    // Sources are looked up in the cluster the object is in (`home`), not the one a kubeConfig sends it to.
    const render = (o: ManifestObject, home: string): FluxOutput =>
        isFluxKustomization(o.object)
            ? fluxKustomizationOutput(o.object, p.ctx, lookup, out.objects, home, o.abs)
            : helmReleaseOutput(o.object, p.ctx, lookup, out.objects, home, o.abs);
    // Entry points: the Flux objects no other one renders (a file another Kustomization builds is not an entry).
    const first = new Map<ManifestObject, FluxOutput>();
    const covered = new Map<string, ManifestObject[]>();
    for (const o of raw) {
        if (!isFluxKustomization(o.object)) continue;
        let output: FluxOutput;
        try {
            output = render(o, entryHome(o));
        } catch (e) {
            // Said again, and failing the run, if it is an entry point (rendered below); else another one applies it.
            if (!(e instanceof BadInputError)) throw e;
            continue;
        }
        first.set(o, output);
        for (const s of output.streams) covered.set(s.from, [...(covered.get(s.from) ?? []), o]);
    }
    let entries = raw.filter((o) => !(covered.get(o.abs ?? "") ?? []).some((by) => by !== o));
    if (entries.length === 0) entries = raw;
    const entrySet = new Set(entries);
    const superseded = new Set<string>();
    const dropped = new Set<ManifestObject>();
    const placed = new Set<string>();
    const queue: Queued[] = entries.map((o) => ({ o, home: entryHome(o), scope: entryScope(o), via: [] }));
    while (queue.length > 0) {
        const { o, home, scope, via } = queue.shift()!;
        const key = `${scope}\u0000${who(o.object)}`;
        if (placed.has(key)) {
            // The entry's own manifest among what it applies (a self-managed flux-system), or one reached twice.
            if (!entrySet.has(o)) dropped.add(o);
            continue;
        }
        placed.add(key);
        // In the scope of the cluster it applies to, as an Application is in its destination's: the rules that
        // relate it to what it applies (prune and destroyOnFinalize) look within one scope.
        o.scope = scope;
        if (via.length >= MAX_DEPTH) {
            fail(o, out, [
                `it is more than ${MAX_DEPTH} Kustomizations and HelmReleases below its entry point, which check does not follow`,
            ]);
            continue;
        }
        const output = via.length === 0 && first.has(o) ? first.get(o)! : render(o, home);
        fail(o, out, output.notes);
        for (const d of output.rendered) claim(d, output.streams, rendered);
        // A file its source leaves out of the artifact is never applied by it: not judged as written either.
        for (const f of output.ignored ?? []) superseded.add(f);
        out.rendered += output.streams.length > 0 ? 1 : 0;
        const chain = [`Flux ${who(o.object)}`, ...via];
        const sops: string[] = [];
        for (const s of output.streams) {
            superseded.add(s.from);
            const load = p.fresh();
            p.readStream(s, load);
            for (const x of load.objects) {
                landFlux(x, o.object, scope, chain);
                if (x.named && x.read && x.kind !== "Secret" && sopsEncrypted(x.object))
                    sops.push(
                        `${x.identity} (${x.repoPath ?? x.file}) is SOPS-encrypted: the values rules read cannot be decrypted here`,
                    );
            }
            p.merge(load);
            for (const x of load.objects)
                if (x.named && isFluxApplier(x.object))
                    queue.push({ o: x, home: scope, scope: kubeConfigScope(x.object) ?? scope, via: chain });
        }
        if (sops.length > 0) fail(o, out, [...output.notes, ...sops]);
    }
    out.objects = out.objects.filter(
        (x) =>
            !dropped.has(x) &&
            !(x.syncedBy === undefined && !entrySet.has(x) && x.abs !== undefined && superseded.has(x.abs)),
    );
    clusterFolders(out.objects, entries);
}

/**
 * The objects written beside an entry point, in its cluster folder, that no Kustomization applies (the sources
 * and Kustomizations of `clusters/prod/*.yaml` when nothing manages that folder): applied to that cluster with
 * the entry point, by whoever applies it, so they are in its scope (the deepest folder, when folders nest).
 */
function clusterFolders(objects: ManifestObject[], entries: ManifestObject[]): void {
    const folders = [...new Set(entries.map((e) => e.scope ?? "").filter((s) => s.startsWith("flux:")))]
        .map((s) => ({ scope: s, dir: s.slice("flux:".length) }))
        .sort((a, b) => b.dir.length - a.dir.length);
    if (folders.length === 0) return;
    for (const x of objects) {
        // An object of a folder rendered with defaults (an overlay) is where that folder is.
        const from = renderedWithDefaultsFrom(x);
        const at = from !== undefined ? `${from}/` : x.repoPath;
        if (x.scope !== undefined || x.syncedBy !== undefined || at === undefined) continue;
        const home = folders.find((f) => f.dir === "." || at.startsWith(`${f.dir}/`));
        if (home) x.scope = home.scope;
    }
}

function fail(o: ManifestObject, out: LoadResult, notes: string[]): void {
    markNotRendered(o, notes);
    out.notRendered.push(...notes.map((n) => `${who(o.object)}: ${n}`));
}

/** The folder built and every kustomization folder its objects came through: never rendered with defaults. */
function claim(dir: string, streams: RenderedStream[], rendered: Set<string>): void {
    rendered.add(dir);
    for (const s of streams) {
        for (let d = path.dirname(s.from); d.startsWith(dir) && d !== dir; d = path.dirname(d))
            if (kustomizationFile(d)) rendered.add(d);
    }
}

/**
 * An object as Flux applies it: in the owner's cluster, with the owner labels kustomize-controller
 * (`kustomize.toolkit.fluxcd.io/name`, `/namespace`) or helm-controller (`helm.toolkit.fluxcd.io/...`,
 * internal/postrender `NewOriginLabels`) set over `commonMetadata` labels and annotations, over the object's own,
 * and a HelmRelease's objects that name no namespace in the release's namespace.
 */
function landFlux(x: ManifestObject, owner: Record<string, unknown>, scope: string, chain: string[]): void {
    x.scope = scope;
    x.syncedBy = chain.join(" via ");
    if (!x.named) return;
    const { namespace, name } = fluxName(owner);
    const helm = isHelmRelease(owner);
    const group = helm ? "helm.toolkit.fluxcd.io" : "kustomize.toolkit.fluxcd.io";
    const meta = record(x.object.metadata) ?? {};
    const common = record(record(owner.spec)?.commonMetadata);
    const labels = extended(extended(record(meta.labels) ?? {}, record(common?.labels) ?? {}), {
        [`${group}/name`]: name,
        [`${group}/namespace`]: namespace,
    });
    const annotations = extended(record(meta.annotations) ?? {}, record(common?.annotations) ?? {});
    let ns = str(meta.namespace) ?? "";
    if (helm && ns === "" && !CLUSTER_SCOPED_KINDS.has(x.kind)) {
        const spec = record(owner.spec) ?? {};
        ns = str(spec.targetNamespace) || str(spec.releaseNamespace) || namespace;
        x.identity = `${x.kind}/${ns}/${String(meta.name)}`;
        x.urn = `${x.urn.slice(0, x.urn.lastIndexOf("::") + 2)}${x.identity}`;
    }
    x.object = extended(x.object, {
        metadata: extended(
            extended(meta, Object.keys(annotations).length > 0 ? { labels, annotations } : { labels }),
            ns !== "" ? { namespace: ns } : {},
        ),
    });
}
