/**
 * What a Flux `Kustomization` (kustomize.toolkit.fluxcd.io/v1) applies, built as kustomize-controller builds it, by the
 * toolchain's flux-build, which runs Flux's own library (github.com/fluxcd/pkg/kustomize).
 * The `substituteFrom` ConfigMaps and Secrets are the repository's own; one missing and not `optional`, or
 * SOPS-encrypted (unreadable), fails closed. It is built from the source's artifact (./flux-artifact.ts), as the
 * controller builds it. `commonMetadata` and owner labels are added when the objects land
 * (../manifests/flux-placement.ts).
 */
import * as fs from "fs";
import * as path from "path";
import { list, record, str } from "../../support/records";
import { RenderContext, RenderedStream, runTool } from "../render/render";
import { confineLinks, rootInUse } from "../render/repo-tree";
import { isRemoteEntry, kustomizationFile, splitByOrigin } from "../render/kustomize";
import { mappingOf } from "../render/render";
import { ManifestObject } from "../manifests/manifest-objects";
import { SourceLookup, artifactOf, resolveSource } from "./flux-sources";
import { fromArtifact } from "./flux-artifact";
import { BadInputError } from "../../support/errors";
import { fluxName } from "./flux-kinds";
import { fetchedContext } from "../render/fetched-sources";

type Obj = Record<string, unknown>;

/** What one Flux Kustomization or HelmRelease applies, or why check cannot compute it (`notes`, one line each). */
export interface FluxOutput {
    streams: RenderedStream[];
    notes: string[];
    /** Folders rendered (never rendered again with defaults). */
    rendered: string[];
    /** Files below a rendered folder that the source's artifact leaves out (`.sourceignore`, `spec.ignore`). */
    ignored?: string[];
}

/** Whether an object holds SOPS-encrypted values (its `sops` metadata, which SOPS writes at the top level). */
export function sopsEncrypted(o: Obj): boolean {
    const sops = record(o.sops);
    return (
        sops !== undefined && (sops.mac !== undefined || sops.version !== undefined || sops.lastmodified !== undefined)
    );
}

/** A `valuesFrom` or `substituteFrom` entry's ConfigMap or Secret, found among the repository's objects. */
export interface DataSource {
    ref: Record<string, unknown>;
    kind: string;
    shown: string;
    match: ManifestObject;
}

/**
 * The ConfigMap or Secret one entry names, in the applier's namespace; a note (and undefined) when it names none,
 * is not in this repository (unless `optional`), or is SOPS-encrypted. `what` says what its values are for.
 */
export function dataSource(
    entry: unknown,
    field: string,
    namespace: string,
    objects: ManifestObject[],
    notes: string[],
    what: "gives" | "substitutes",
): DataSource | undefined {
    const ref = record(entry);
    const kind = str(ref?.kind);
    const name = str(ref?.name);
    if (!ref || (kind !== "ConfigMap" && kind !== "Secret") || !name) {
        notes.push(`${field} does not name a ConfigMap or Secret`);
        return undefined;
    }
    const shown = `${kind} ${JSON.stringify(`${namespace}/${name}`)}`;
    const match = objects.find(
        (o) =>
            o.named &&
            o.kind === kind &&
            o.object.apiVersion === "v1" &&
            fluxName(o.object).name === name &&
            fluxName(o.object).namespace === namespace,
    );
    if (!match) {
        if (ref.optional !== true)
            notes.push(
                `${field} names ${shown}, which is not in this repository, so the values it ${what} are not known`,
            );
        return undefined;
    }
    if (sopsEncrypted(match.object)) {
        notes.push(`${field} names ${shown}, which is SOPS-encrypted: the values it ${what} cannot be read here`);
        return undefined;
    }
    return { ref, kind, shown, match };
}

/** The ConfigMaps and Secrets a Kustomization's `substituteFrom` names, as the API server would hold them. */
function substituteObjects(ks: Obj, objects: ManifestObject[], notes: string[]): Obj[] {
    const { namespace } = fluxName(ks);
    const found: Obj[] = [];
    for (const [i, entry] of list(record(record(ks.spec)?.postBuild)?.substituteFrom).entries()) {
        const source = dataSource(
            entry,
            `spec.postBuild.substituteFrom[${i}]`,
            namespace,
            objects,
            notes,
            "substitutes",
        );
        if (source) found.push(apiObject(source.match.object));
    }
    return found;
}

/** A ConfigMap or Secret as the API server holds it: a Secret's `stringData` merged into `data` (base64). */
function apiObject(o: Obj): Obj {
    const meta = record(o.metadata) ?? {};
    const out: Obj = { apiVersion: "v1", kind: o.kind, metadata: { name: meta.name, namespace: meta.namespace } };
    if (o.kind === "ConfigMap") {
        const data: Record<string, string> = {};
        for (const [k, v] of Object.entries(record(o.data) ?? {})) data[k] = typeof v === "string" ? v : String(v);
        out.data = data;
        return out;
    }
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(record(o.data) ?? {})) if (typeof v === "string") data[k] = v;
    for (const [k, v] of Object.entries(record(o.stringData) ?? {}))
        data[k] = Buffer.from(typeof v === "string" ? v : String(v), "utf8").toString("base64");
    out.data = data;
    return out;
}

/** Renders what a Flux Kustomization applies (`scope`, `near`: where it is, to find its source). */
export function fluxKustomizationOutput(
    ks: Obj,
    run: RenderContext,
    lookup: SourceLookup,
    objects: ManifestObject[],
    scope: string,
    near: string | undefined,
): FluxOutput {
    const out: FluxOutput = { streams: [], notes: [], rendered: [] };
    const spec = record(ks.spec) ?? {};
    const { namespace, shown } = fluxName(ks);
    const source = resolveSource(spec.sourceRef, "spec.sourceRef", namespace, scope, near, lookup, run);
    if ("reason" in source) {
        out.notes.push(source.reason);
        return out;
    }
    // A fetched source is built as its own repository: its tree is the root, its files named `<url>@<resolved>/...`.
    const ctx = source.got ? fetchedContext(run, source.got, source.url ?? "") : run;
    const written = str(spec.path) ?? "";
    const rel = path.relative(source.dir, path.resolve(source.dir, written.replace(/^\/+/, "")));
    const notFolder = `spec.path ${JSON.stringify(written)} is not a folder of this repository (${rootInUse(ctx)})`;
    if (rel.startsWith("..") || path.isAbsolute(rel)) {
        out.notes.push(notFolder);
        return out;
    }
    confineLinks(ctx);
    // kustomize-controller builds from the source's artifact: what its .sourceignore files and spec.ignore (else
    // Flux's default excludes) leave out is not built, and not applied; what spec.include copies in is.
    const art = artifactOf(source, "spec.sourceRef", scope, near, lookup, run);
    if ("reason" in art) {
        out.notes.push(art.reason);
        return out;
    }
    const artDir = path.join(art.dir, rel);
    // The folder as written: this repository's, a fetched source's, or an included one's.
    const dir = art.origin(artDir).from;
    if (!isFolder(artDir)) {
        if (!isFolder(dir)) {
            out.notes.push(notFolder);
            return out;
        }
        throw new BadInputError(
            `Kustomization ${JSON.stringify(shown)} (flux build): spec.path ${JSON.stringify(written)} is not in the source's artifact (its files are all ignored)`,
        );
    }
    out.rendered.push(dir);
    const kfile = kustomizationFile(artDir);
    if (kfile) {
        const k = mappingOf(fs.readFileSync(kfile, "utf8"));
        const remote = ["resources", "bases", "components"].some((f) =>
            list(k[f]).some((e) => typeof e === "string" && isRemoteEntry(e)),
        );
        if (remote) {
            out.notes.push(
                `spec.path ${JSON.stringify(written)}: a remote base needs the network, which check does not use; vendor it into the repository`,
            );
            return out;
        }
    }
    const substitute = record(spec.postBuild) ? substituteObjects(ks, objects, out.notes) : [];
    if (out.notes.length > 0) return out;
    const input = JSON.stringify({
        root: art.dir,
        path: artDir,
        kustomization: ks,
        objects: substitute,
        origins: true,
        // kustomize-controller fails a build on a variable no input sets and no default covers (its
        // StrictPostBuildSubstitutions feature gate, on by default since v1.9).
        strict: true,
    });
    const text = runTool("flux-build", [], `Kustomization ${JSON.stringify(shown)} (flux build)`, art.ctx, {
        cwd: artDir,
        input,
    });
    out.streams.push(...fromArtifact(splitByOrigin(text, artDir, artDir), art));
    out.ignored = art.ignored.filter((f) => f.startsWith(`${artDir}${path.sep}`)).map((f) => art.origin(f).from);
    return out;
}

function isFolder(p: string): boolean {
    return fs.existsSync(p) && fs.statSync(p).isDirectory();
}
