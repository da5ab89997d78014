/**
 * Manifest objects: each becomes the resource the Kubernetes provider would register for it (type
 * `kubernetes:<group>/<version>:<Kind>`, identity `Kind/namespace/name` or `Kind/name`, a synthesized URN),
 * `kind: List` items one by one, the source-path annotation added; what the evaluator gets of them.
 */
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { EvalResource } from "../../evaluation/evaluate";
import { ClusterCapabilities } from "../render/capabilities";
import type { CheckedRepository } from "../render/repo-url";
import { policies } from "../../policies/index";
import { FLOATING_SOURCE, MANIFEST_URN_PREFIX, SOURCE_PATH } from "../../policies/model/origin";
import { extended } from "../../support/shapes";
import { record } from "../../support/records";
import { NO_CLUSTER, describeScope, viewScope } from "../argocd/destinations";
import { Place, fieldSegments, findNode, placeNode, placeStart, startOf } from "../decode/field-positions";
import type { FetchPolicy } from "../fetch/network-policy";
import type { FetchedSource } from "../fetch/fetch";

/** Kinds some pko-guard rule reads (`<group>/<Kind>`, from each rule's `about.reads`); other objects are counted, never reported. */
const KINDS_RULES_READ = new Set(policies.flatMap((p) => p.about.reads));

export interface Location {
    /** The file as shown to users and in reports ("-" is standard input, shown as `<stdin>`). */
    file: string;
    line: number;
    column: number;
}

export interface ManifestObject extends Location {
    identity: string;
    type: string;
    urn: string;
    kind: string;
    /** The object as parsed (plain JSON), with the source-path annotation added when known. */
    object: Record<string, unknown>;
    /** Whether some rule reads objects of this kind. */
    read: boolean;
    /** Whether it has a metadata.name (unnamed objects of kinds no rule reads are only counted). */
    named: boolean;
    /** The file's path relative to the repository root (posix), when the file is inside it. */
    repoPath?: string;
    /** Finds the line and column of a field path (`spec.branch`, `subjects[0]`), or of its nearest parent. */
    locate(field: string): { line: number; column: number };
    /** What brings it into the cluster, as shown: `Application argocd/ledger` (the Application that syncs it) or `ApplicationSet argocd/apps` (for an Application a set generates). */
    syncedBy?: string;
    /** The file it was read from (absolute), for matching directory sources. */
    abs?: string;
    /** Whether a render made it (kustomize, Helm, jsonnet output), rather than a file as written. */
    rendered?: boolean;
    /**
     * The cluster it lands in (gitops/argocd/destinations.ts): the destination of the Application that syncs it;
     * unset for objects no Application syncs, which share one scope.
     */
    scope?: string;
}

/** The folder (repository-relative) an object was rendered from with defaults (an unclaimed kustomization or chart). */
const defaultRenders = new WeakMap<ManifestObject, string>();

/** Records that `objects` come from rendering the folder `root` with defaults (./placement.ts renderUnclaimed). */
export function renderedWithDefaults(objects: ManifestObject[], root: string, repoRoot: string): void {
    const rel = path.relative(repoRoot, root).split(path.sep).join("/") || ".";
    for (const o of objects) defaultRenders.set(o, rel);
}

/** The folder (repository-relative) `o` was rendered from with defaults, if it was. */
export function renderedWithDefaultsFrom(o: ManifestObject): string | undefined {
    return defaultRenders.get(o);
}

export interface Skip {
    file: string;
    reason: string;
}

export interface LoadResult {
    objects: ManifestObject[];
    files: number;
    documents: number;
    skipped: Skip[];
    /** Folders rendered (kustomize, Helm) or .jsonnet files evaluated. */
    rendered: number;
    /** Sources and generators that could not be rendered or expanded here, one line each (stderr, summary). */
    notRendered: string[];
    /** What aliases have added so far in this run (bounded by MAX_ALIAS_EXPANSION). */
    budget: { aliasNodes: number };
    /** Identities defined more than once in one scope: each group's definitions, in read order (./scopes.ts). */
    duplicates?: ManifestObject[][];
    /** Remote sources fetched (or taken from the cache) for the run, in the order they were first used. */
    fetched?: FetchedSource[];
    /** `.jsonnet` files found by walking the folders named (evaluated only as an Application's source). */
    jsonnetWalked?: number;
}

/** A load with nothing read yet, counting aliases against `budget` (its own, or a run's it shares). */
export function emptyLoad(budget: LoadResult["budget"] = { aliasNodes: 0 }): LoadResult {
    return { objects: [], files: 0, documents: 0, skipped: [], rendered: 0, notRendered: [], budget };
}

export interface LoadOptions {
    /** Repository root for source paths (default: the git top level of the first path, else its folder). */
    repoRoot?: string;
    /** Standard input's text, when "-" is given (read by the caller). */
    stdin?: () => string;
    /** Base folder for shown file names (default: the current directory). */
    cwd?: string;
    /** Time allowed for rendering (kustomize, Helm, jsonnet) in the whole run; default 300 s. */
    timeoutMs?: number;
    /** Skip a folder's oversized, undecodable and non-regular files (a line each) instead of failing the run. */
    skipUnreadable?: boolean;
    /** The destination cluster Helm is told about (default: gitops/render/capabilities.ts DEFAULT_CAPABILITIES). */
    cluster?: ClusterCapabilities;
    /** Argo CD builds kustomizations with --enable-helm, whatever the repository's argocd-cm says. */
    kustomizeHelm?: boolean;
    /** Globs of paths (repository-relative) that walking folders leaves out (./exclude.ts). */
    exclude?: string[];
    /** The run's own configuration files (absolute: the policy pack config), never read as manifests. */
    toolConfigs?: string[];
    /**
     * The repository checked: an Application source is read only when its repoURL names it
     * (gitops/render/repo-url.ts). Unset: every source path is read (the harness's fixtures).
     */
    repository?: CheckedRepository;
    /** The network policy for remote sources (gitops/fetch/network-policy.ts); unset: nothing is fetched. */
    fetch?: FetchPolicy;
}

export interface Source {
    /** Shown name. */
    file: string;
    text: string;
    repoPath?: string;
    abs?: string;
    /** Rendered output: positions are looked up in the file it came from (`abs`), not in this text. */
    rendered?: boolean;
    /** The floating reference of the fetched source it came from (`<url> at <ref>, resolved to <x>`), if any. */
    floating?: string;
}

function gvk(apiVersion: string): { group: string; version: string } {
    const slash = apiVersion.lastIndexOf("/");
    return slash < 0
        ? { group: "core", version: apiVersion }
        : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function addObject(
    src: Source,
    obj: Record<string, unknown>,
    place: Place,
    out: LoadResult,
    fromFolder: boolean,
): void {
    const where = () => placeStart(place);
    const { apiVersion, kind } = obj;
    if (typeof apiVersion !== "string" || typeof kind !== "string" || apiVersion === "" || kind === "") {
        const reason = "not a Kubernetes object (no apiVersion and kind)";
        if (fromFolder) {
            out.skipped.push({ file: `${src.file}:${where().line}`, reason });
            return;
        }
        throw new BadInputError(`${src.file}:${where().line}:${where().column}: ${reason}`);
    }
    // `kind: List` (and the typed lists kubectl prints) hold their objects in `items`.
    if (kind === "List" || (kind.endsWith("List") && Array.isArray(obj.items))) {
        const items = Array.isArray(obj.items) ? obj.items : [];
        items.forEach((item, i) => {
            const itemPlace: Place = { locator: place.locator, doc: place.doc, item: i };
            if (item === null || typeof item !== "object" || Array.isArray(item)) {
                const p = placeStart(itemPlace);
                throw new BadInputError(
                    `${src.file}:${p.line}:${p.column}: items[${i}] of the List is not a Kubernetes object`,
                );
            }
            addObject(src, item as Record<string, unknown>, itemPlace, out, fromFolder);
        });
        return;
    }
    const { group, version } = gvk(apiVersion);
    const read = KINDS_RULES_READ.has(`${group}/${kind}`);
    const metadata = record(obj.metadata) ?? {};
    const name = metadata.name;
    const namespace = metadata.namespace;
    if (typeof name !== "string" || name === "") {
        if (!read) {
            // e.g. a kustomization.yaml: nothing to govern, nothing to name.
            out.objects.push(
                makeObject(src, obj, kind, `${kind} at ${src.file}:${where().line}`, group, version, place),
            );
            return;
        }
        throw new BadInputError(
            `${src.file}:${where().line}:${where().column}: ${kind}${name === undefined || name === "" ? " has no metadata.name" : `: metadata.name ${notAString(name)}`}`,
        );
    }
    if (namespace !== undefined && typeof namespace !== "string") {
        throw new BadInputError(
            `${src.file}:${where().line}:${where().column}: ${kind} ${JSON.stringify(name)}: metadata.namespace ${notAString(namespace)}`,
        );
    }
    const identity = namespace ? `${kind}/${namespace}/${name}` : `${kind}/${name}`;
    const o = makeObject(src, obj, kind, identity, group, version, place);
    o.read = read;
    o.named = true;
    const annotations = (
        metadata.annotations !== null &&
        typeof metadata.annotations === "object" &&
        !Array.isArray(metadata.annotations)
            ? metadata.annotations
            : {}
    ) as Record<string, unknown>;
    if (src.repoPath !== undefined && annotations[SOURCE_PATH] === undefined) {
        o.object = extended(obj, {
            metadata: extended(metadata, { annotations: extended(annotations, { [SOURCE_PATH]: src.repoPath }) }),
        });
    }
    if (src.floating !== undefined || annotations[FLOATING_SOURCE] !== undefined) {
        // Only check's own value is read: one the manifest wrote is dropped.
        const { [FLOATING_SOURCE]: _written, ...rest } = record(record(o.object.metadata)?.annotations) ?? {};
        const own = src.floating === undefined ? rest : extended(rest, { [FLOATING_SOURCE]: src.floating });
        o.object = extended(o.object, { metadata: extended(record(o.object.metadata) ?? {}, { annotations: own }) });
    }
    out.objects.push(o);
}

/**
 * Why a value that must be a string is not one, in words that never quote the document: Kubernetes decodes
 * YAML 1.1, so an unquoted `y`, `no`, `on` or `off` is a boolean and `0755` a number.
 */
function notAString(v: unknown): string {
    const type =
        v === null
            ? "null"
            : Array.isArray(v)
              ? "a list"
              : typeof v === "object"
                ? "a map"
                : typeof v === "boolean"
                  ? "a boolean"
                  : typeof v === "number"
                    ? "a number"
                    : `a ${typeof v}`;
    const hint =
        typeof v === "boolean" || typeof v === "number"
            ? " (Kubernetes reads YAML 1.1: unquoted y/n, yes/no, on/off are booleans and digits numbers; quote the value)"
            : "";
    return `is ${type}, not a string${hint}`;
}

function makeObject(
    src: Source,
    obj: Record<string, unknown>,
    kind: string,
    identity: string,
    group: string,
    version: string,
    place: Place,
): ManifestObject {
    const type = `kubernetes:${group}/${version}:${kind}`;
    const fields: ObjectFields = {
        file: src.file,
        identity,
        type,
        urn: `${MANIFEST_URN_PREFIX}${type}::${identity}`,
        kind,
        object: obj,
        read: false,
        named: false,
        repoPath: src.repoPath,
        abs: src.abs,
        rendered: src.rendered === true,
    };
    return new LocatedObject(fields, new FilePlace(place));
}

/** Where an object is in its file: found on demand from its place in the decoded document (most objects never need it). */
class FilePlace {
    private start?: { line: number; column: number };

    constructor(private readonly place: Place) {}

    private at(): { line: number; column: number } {
        return (this.start ??= placeStart(this.place));
    }

    get line(): number {
        return this.at().line;
    }

    get column(): number {
        return this.at().column;
    }

    locate(field: string): { line: number; column: number } {
        const begin = startOf(findNode(placeNode(this.place), fieldSegments(field)));
        return begin === undefined ? this.at() : this.place.locator.pos(begin);
    }
}

/** What a manifest object is apart from its location. */
export type ObjectFields = Pick<
    ManifestObject,
    | "file"
    | "identity"
    | "type"
    | "urn"
    | "kind"
    | "object"
    | "read"
    | "named"
    | "repoPath"
    | "abs"
    | "rendered"
    | "syncedBy"
    | "scope"
>;

/**
 * A manifest object: its fields, and what locates it (its place in its file, another object, another thread). A
 * class, its accessors on the prototype: an object literal with getters gives each object a hidden class of its own
 * and its properties in a dictionary, which cost memory for the whole run (docs/contributing/benchmarks.md, the fifth pass).
 */
export class LocatedObject implements ManifestObject {
    file: string;
    identity: string;
    type: string;
    urn: string;
    kind: string;
    object: Record<string, unknown>;
    read: boolean;
    named: boolean;
    repoPath?: string;
    abs?: string;
    rendered: boolean;
    syncedBy?: string;
    scope?: string;

    constructor(
        fields: ObjectFields,
        private readonly place: Pick<ManifestObject, "line" | "column" | "locate">,
    ) {
        this.file = fields.file;
        this.identity = fields.identity;
        this.type = fields.type;
        this.urn = fields.urn;
        this.kind = fields.kind;
        this.object = fields.object;
        this.read = fields.read;
        this.named = fields.named;
        this.repoPath = fields.repoPath;
        this.abs = fields.abs;
        this.rendered = fields.rendered === true;
        this.syncedBy = fields.syncedBy;
        this.scope = fields.scope;
    }

    get line(): number {
        return this.place.line;
    }

    get column(): number {
        return this.place.column;
    }

    locate(field: string): { line: number; column: number } {
        return this.place.locate(field);
    }
}

/**
 * An object made from another one (an Application an ApplicationSet generates): shown and located where that
 * one is, in its file.
 */
export function madeFrom(
    from: ManifestObject,
    own: Pick<ManifestObject, "identity" | "type" | "urn" | "kind" | "object" | "read" | "named" | "syncedBy">,
): ManifestObject {
    return new LocatedObject(
        { file: from.file, repoPath: from.repoPath, abs: from.abs, rendered: from.rendered, ...own },
        from,
    );
}

/**
 * The resources the evaluator gets: every named object, as the provider would register it, in its view's scope,
 * with that scope as messages name it (destinations.ts `describeScope`).
 */
export function evalResources(objects: ManifestObject[]): EvalResource[] {
    const named = objects.filter((o) => o.named);
    const synced = new Set(named.filter((o) => o.syncedBy !== undefined).map((o) => o.scope ?? NO_CLUSTER));
    return named.map((o) => {
        const scope = viewScope(o.object, o.scope);
        return {
            type: o.type,
            name: o.identity,
            urn: o.urn,
            props: o.object,
            scope,
            scopeName: describeScope(scope, synced.has(scope)),
        };
    });
}
