/**
 * The Flux source a Kustomization or HelmRelease reads (its `spec.sourceRef`, a HelmRelease's chart source), as
 * kustomize-controller and helm-controller resolve it.
 * A `GitRepository` whose `spec.url` is this repository (gitops/render/repo-url.ts) is read from the checkout CI
 * holds; one of another repository is fetched at the ref source-controller checks out, and an `OCIRepository`'s
 * artifact is pulled, when the run fetches. What the controllers read of it is its artifact (./flux-artifact.ts:
 * its ignore rules, and for a GitRepository the GitRepositories its `spec.include` copies in, resolved alike). Any other source, or one not fetched, fails closed (argocd-app-rendered)
 * on the object that names it, naming the field, never guessed.
 */
import * as fs from "fs";
import * as path from "path";
import { record, str } from "../../support/records";
import { isThisRepository, shownUrl } from "../render/repo-url";
import { RenderContext, RenderedStream } from "../render/render";
import { FetchError, FetchRequest, FetchedSource } from "../fetch/fetch";
import { fetched, mergeFetched } from "../render/fetched-sources";
import { ManifestObject } from "../manifests/manifest-objects";
import { SOURCE_GROUP, fluxName } from "./flux-kinds";
import { gitRef } from "../../policies/model/flux-pins";
import { Artifact, ArtifactSource, IncludeResolver, sourceArtifact } from "./flux-artifact";
import { fetchedContext } from "../render/fetched-sources";
import { plain } from "../../policies/model/values";

type Obj = Record<string, unknown>;

/** Finds a Flux source among the run's objects: the one in `scope` first, then the one nearest `near` (a file). */
export type SourceLookup = (
    kind: string,
    namespace: string,
    name: string,
    scope: string,
    near?: string,
) => Obj | undefined;

/** A lookup over objects: in `scope` first, then in the same file, the same folder, else the first read. */
export function sourceLookup(objects: () => ManifestObject[]): SourceLookup {
    return (kind, namespace, name, scope, near) => {
        const found = objects().filter((o) => {
            if (!o.named || o.kind !== kind) return false;
            const api = typeof o.object.apiVersion === "string" ? o.object.apiVersion : "";
            if (!api.startsWith(`${SOURCE_GROUP}/`)) return false;
            const n = fluxName(o.object);
            return n.name === name && n.namespace === namespace;
        });
        const pick =
            found.find((o) => o.scope === scope) ??
            found.find((o) => near !== undefined && o.abs === near) ??
            found.find(
                (o) => near !== undefined && o.abs !== undefined && path.dirname(o.abs) === path.dirname(near),
            ) ??
            found.find((o) => o.scope === undefined) ??
            found[0];
        return pick?.object;
    };
}

/**
 * Where a source's files are: this repository's root or a fetched tree (`got`, fetched from `url`), or why check
 * does not read it (after the field's name).
 */
export type SourceRoot = { dir: string; source: Obj; got?: FetchedSource; url?: string } | { reason: string };

/**
 * The fetch request for a GitRepository's `spec.url` at the ref source-controller checks out: the first ref field
 * set in its order (policies/model/flux-pins.ts `gitRef`), a `semver` range resolved to the highest matching tag as
 * its Git client does; the `master` branch when none is set.
 */
export function gitSourceRequest(spec: Obj): FetchRequest {
    const url = (str(spec.url) ?? "").trim();
    const decided = gitRef(plain(spec.ref ?? {}));
    if (!decided || typeof decided.value !== "string") return { kind: "git", url, ref: "master" };
    const ref = decided.value.trim();
    return decided.field === "semver" ? { kind: "git", url, ref, semver: true } : { kind: "git", url, ref };
}

/** The source a `sourceRef`-like reference (at `field`) names, for an object in `namespace`. */
export function resolveSource(
    ref: unknown,
    field: string,
    namespace: string,
    scope: string,
    near: string | undefined,
    lookup: SourceLookup,
    ctx: RenderContext,
): SourceRoot {
    const r = record(ref);
    const kind = str(r?.kind);
    const name = str(r?.name);
    if (!r || !kind || !name) return { reason: `${field} does not name a source (kind and name)` };
    const ns = str(r.namespace) || namespace;
    const named = `${kind} ${JSON.stringify(`${ns}/${name}`)}`;
    const what: Record<string, string> = {
        Bucket: "a bucket, which check does not read",
        HelmRepository: "a Helm repository, which holds charts for a HelmRelease, not files to apply",
        ExternalArtifact: "an artifact another controller (an ArtifactGenerator) produces, which check does not read",
    };
    if (kind === "OCIRepository") return ociArtifactSource(field, named, lookup(kind, ns, name, scope, near), ctx);
    if (kind !== "GitRepository")
        return { reason: `${field} names ${named}, ${what[kind] ?? "a kind of source check does not read"}` };
    const source = lookup(kind, ns, name, scope, near) ?? bootstrapSource(name, ns, scope, ctx);
    if (!source)
        return {
            reason: `${field} names ${named}, which is not among the objects check read, so what it applies is not known${bootstrapHint(name, ns, scope)}`,
        };
    const spec = record(source.spec) ?? {};
    const url = str(spec.url) ?? "";
    if (ctx.repository && !isThisRepository(ctx.repository, url)) {
        const remote = fetchedGitSource(spec, field, named, ctx);
        if (remote) return "reason" in remote ? remote : { dir: remote.dir, source, got: remote.got, url: remote.url };
        const known =
            ctx.repository.urls.length === 0
                ? "; this repository's URL is not known (no origin remote, none declared)"
                : "";
        return {
            reason: `${field} names ${named}, whose url ${JSON.stringify(shownUrl(url))} is another repository than the one checked, which check does not read${known}`,
        };
    }
    return { dir: ctx.repoRoot, source };
}

/**
 * An OCIRepository's artifact, pulled as source-controller pulls it (gitops/fetch/oci-artifact.ts) when the run
 * fetches: by `spec.ref.digest` (pinned), else `semver`, else `tag`, else `latest` (floating); the layer
 * `spec.layerSelector.mediaType` names, extracted. Not fetched, a `copy` layer (a file, not manifests) or a fetch
 * that fails: why not.
 */
function ociArtifactSource(field: string, named: string, source: Obj | undefined, ctx: RenderContext): SourceRoot {
    if (!source)
        return {
            reason: `${field} names ${named}, which is not among the objects check read, so what it applies is not known`,
        };
    const spec = record(source.spec) ?? {};
    const ref = record(spec.ref) ?? {};
    const selector = record(spec.layerSelector) ?? {};
    if (str(selector.operation) === "copy")
        return {
            reason: `${field} names ${named}, whose layer is copied as a file (layerSelector.operation: copy), not manifests`,
        };
    const url = (str(spec.url) ?? "").trim();
    const digest = str(ref.digest)?.trim() || undefined;
    const semver = str(ref.semver)?.trim() || undefined;
    const req: FetchRequest = {
        kind: "oci",
        url,
        version: semver ?? (str(ref.tag)?.trim() || "latest"),
        digest,
        fluxSemver: semver !== undefined ? { filter: str(ref.semverFilter) || undefined } : undefined,
        artifact: { mediaType: str(selector.mediaType) || undefined },
    };
    const notFetched = `${field} names ${named}, an OCI artifact, which check does not pull in this run (--offline or no network policy)`;
    if (!ctx.fetch) return { reason: notFetched };
    try {
        const got = fetched(req, ctx);
        return got ? { dir: got.path, source, got, url: got.url } : { reason: notFetched };
    } catch (e) {
        if (!(e instanceof FetchError)) throw e;
        return { reason: `${field} names ${named}, an OCI artifact that could not be fetched: ${e.message}` };
    }
}

/**
 * Another repository's GitRepository, fetched at its ref when the run fetches; undefined when the run does not
 * fetch it (the caller says, as before, that it is not read); a reason when it cannot be fetched.
 */
function fetchedGitSource(
    spec: Obj,
    field: string,
    named: string,
    ctx: RenderContext,
): { dir: string; got: FetchedSource; url: string } | { reason: string } | undefined {
    if (!ctx.fetch) return undefined;
    const other = `${field} names ${named}, whose url ${JSON.stringify(shownUrl(str(spec.url) ?? ""))} is another repository than the one checked`;
    const req = gitSourceRequest(spec);
    try {
        const got = fetched(req, ctx);
        return got ? { dir: got.path, got, url: req.url } : undefined;
    } catch (e) {
        if (!(e instanceof FetchError)) throw e;
        return { reason: `${other}, and it could not be fetched: ${e.message}` };
    }
}

/**
 * The GitRepository `flux bootstrap` creates, when the repository holds only its placeholder: `flux-system` in
 * `flux-system`, named by a Kustomization of a cluster folder whose `flux-system/gotk-sync.yaml` bootstrap writes
 * (Flux's example repositories commit it empty). Bootstrap points it at the repository it writes the cluster
 * folder into, which is this one.
 */
function bootstrapSource(name: string, namespace: string, scope: string, ctx: RenderContext): Obj | undefined {
    if (name !== "flux-system" || namespace !== "flux-system" || !scope.startsWith("flux:")) return undefined;
    const sync = path.join(ctx.repoRoot, scope.slice("flux:".length), "flux-system", "gotk-sync.yaml");
    if (!fs.existsSync(sync)) return undefined;
    return {
        apiVersion: `${SOURCE_GROUP}/v1`,
        kind: "GitRepository",
        metadata: { name, namespace },
        spec: { url: ctx.repository?.urls[0]?.url ?? "" },
    };
}

/**
 * For bootstrap's `flux-system` source named from a cluster folder that lacks it (a template repository, before
 * `flux bootstrap` has written its files): where bootstrap writes it, which check would take as this repository.
 */
function bootstrapHint(name: string, namespace: string, scope: string): string {
    if (name !== "flux-system" || namespace !== "flux-system" || !scope.startsWith("flux:")) return "";
    const sync = path.posix.join(scope.slice("flux:".length), "flux-system", "gotk-sync.yaml");
    return `; flux bootstrap writes it into ${JSON.stringify(sync)}: commit that file (bootstrap's placeholder is enough) and check reads this repository for it`;
}

/** Streams rendered from a fetched tree, named by the source (`<url>@<resolved>/<path>`) and marked when it floats. */
export function namedByFetched(streams: RenderedStream[], got: FetchedSource): RenderedStream[] {
    const into = { files: [], streams: [] as RenderedStream[], rendered: [], renders: 0 };
    mergeFetched({ files: [], streams, rendered: [], renders: 0 }, got, into);
    return into.streams;
}

/** What a resolved source's artifact is made of: its tree, object, and the render context of its tree. */
function artifactSource(root: Extract<SourceRoot, { dir: string }>, run: RenderContext): ArtifactSource {
    const ctx = root.got ? fetchedContext(run, root.got, root.url ?? "") : run;
    return { dir: root.dir, source: root.source, got: root.got, ctx };
}

/**
 * The artifact of a resolved source (`field` names it in messages), as the controllers read it: its ignore rules
 * applied and, for a GitRepository, each `spec.include` resolved like any source (found among the objects in the
 * source's namespace; this repository's checkout, or fetched) and copied in; or why it cannot be had.
 */
export function artifactOf(
    root: Extract<SourceRoot, { dir: string }>,
    field: string,
    scope: string,
    near: string | undefined,
    lookup: SourceLookup,
    run: RenderContext,
): Artifact | { reason: string } {
    const include: IncludeResolver = (name, namespace, at) => {
        const r = resolveSource({ kind: "GitRepository", name, namespace }, at, namespace, scope, near, lookup, run);
        return "reason" in r ? r : artifactSource(r, run);
    };
    const kind = str(root.source.kind) ?? "source";
    const meta = record(root.source.metadata) ?? {};
    const shown = `${field} (${kind} ${JSON.stringify(`${str(meta.namespace) || "default"}/${str(meta.name) ?? ""}`)})`;
    return sourceArtifact(artifactSource(root, run), run, shown, include);
}
