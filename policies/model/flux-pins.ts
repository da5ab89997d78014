/**
 * Whether the Flux source a PKO Stack deploys from (`spec.fluxSource.sourceRef`) is pinned, as source-controller
 * decides what its artifact holds. A GitRepository is pinned only by a full commit SHA (go-git resolves no
 * shorter one), and its `include`s must be pinned too; an OCIRepository only by `spec.ref.digest`; a Bucket
 * never (it changes in place). A source not among the resources judged is not known to be pinned.
 */
import { Obj, Plain, UNKNOWN, get, isObject, list, str } from "./values";
import { ResourceLike } from "./stack";

export const FLUX_SOURCE_TYPE =
    /^kubernetes:source\.toolkit\.fluxcd\.io\/[^:]+:(GitRepository|OCIRepository|Bucket|HelmChart|HelmRepository)$/;

/** The Flux sources of a program by `Kind/namespace/name` (namespace `default` when unset), their props. */
export type FluxSources = Map<string, Plain>;

export function fluxSourceKey(kind: string, namespace: string, name: string): string {
    return `${kind}/${namespace}/${name}`;
}

/** Indexes the program's Flux sources (the first of an identity wins, as the first definition read). */
export function fluxSourcesOf(resources: ResourceLike[], props: (r: ResourceLike) => Plain): FluxSources {
    const out: FluxSources = new Map();
    for (const r of resources) {
        const m = FLUX_SOURCE_TYPE.exec(String(r.type ?? ""));
        if (!m) continue;
        const p = props(r);
        const name = str(get(p, "metadata", "name"));
        const ns = str(get(p, "metadata", "namespace"));
        if (typeof name !== "string" || ns === UNKNOWN) continue;
        const key = fluxSourceKey(m[1], ns || "default", name);
        if (!out.has(key)) out.set(key, p);
    }
    return out;
}

/** Why a Stack's Flux source is not pinned (after "its source ..."), or undefined when it is; `unknown` when undecided. */
export interface SourcePin {
    problem?: string;
    unknown?: boolean;
}

const FULL_SHA = /^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The fields of a GitRepository's `spec.ref` in the order source-controller's Git client reads them (fluxcd/pkg/git
 * `Client.clone`: commit, then name, tag, semver, else the branch; docs/contributing/verified-facts.md). The one
 * definition: check's fetch of a GitRepository (gitops/flux/flux-sources.ts) reads the same.
 */
export const GIT_REF_FIELDS = ["commit", "name", "tag", "semver", "branch"] as const;

/** The first ref field source-controller's Git client reads, in its order, and its value (set: non-empty or unknown). */
export function gitRef(ref: Plain): { field: (typeof GIT_REF_FIELDS)[number]; value: Plain } | undefined {
    for (const field of GIT_REF_FIELDS) {
        const v = get(ref, field);
        if (v === UNKNOWN || (typeof v === "string" && v !== "")) return { field, value: v };
    }
    return undefined;
}

/** Whether the source `kind` `name` (in `namespace`) is pinned; `depth` bounds `include` chains. */
export function sourcePin(sources: FluxSources, kind: string, namespace: string, name: string, depth = 0): SourcePin {
    const shown = `${kind} ${JSON.stringify(`${namespace}/${name}`)}`;
    const source = sources.get(fluxSourceKey(kind, namespace, name));
    if (source === undefined)
        return {
            problem: `it names ${shown}, which is not among the objects judged, so whether it is pinned is not known`,
        };
    const ref = get(source, "spec", "ref");
    if (ref === UNKNOWN) return { problem: `the spec.ref of ${shown} is unknown during preview`, unknown: true };
    if (kind === "GitRepository") {
        const decided = gitRef(ref);
        if (!decided) return { problem: `${shown} sets no spec.ref, so it tracks the master branch, a movable ref` };
        if (decided.value === UNKNOWN)
            return { problem: `spec.ref.${decided.field} of ${shown} is unknown during preview`, unknown: true };
        if (decided.field !== "commit")
            return {
                problem: `${shown} checks out spec.ref.${decided.field} ${JSON.stringify(decided.value)}, a movable ref (only spec.ref.commit pins it)`,
            };
        if (!FULL_SHA.test(String(decided.value)))
            return { problem: `spec.ref.commit of ${shown} is not a full commit SHA` };
        const includes = list(get(source, "spec", "include"));
        for (const [i, inc] of includes.entries()) {
            const incName = str(get(inc, "repository", "name"));
            if (typeof incName !== "string")
                return {
                    problem: `spec.include[${i}] of ${shown} names no GitRepository`,
                    unknown: incName === UNKNOWN,
                };
            if (depth >= 5) return { problem: `spec.include of ${shown} nests too deep to judge` };
            const inner = sourcePin(sources, "GitRepository", namespace, incName, depth + 1);
            if (inner.problem)
                return { problem: `spec.include[${i}] of ${shown}: ${inner.problem}`, unknown: inner.unknown };
        }
        return {};
    }
    if (kind === "OCIRepository") {
        const digest = get(ref, "digest");
        if (digest === UNKNOWN)
            return { problem: `spec.ref.digest of ${shown} is unknown during preview`, unknown: true };
        if (typeof digest === "string" && DIGEST.test(digest)) return {};
        const moving = ["semver", "tag"].find((f) => typeof get(ref, f) === "string" && get(ref, f) !== "");
        return {
            problem:
                typeof digest === "string" && digest !== ""
                    ? `spec.ref.digest of ${shown} is not a sha256 digest`
                    : `${shown} pulls ${moving ? `spec.ref.${moving} ${JSON.stringify(get(ref, moving))}` : "the latest tag"}, a movable ref (only spec.ref.digest pins it)`,
        };
    }
    if (kind === "Bucket")
        return { problem: `${shown} is a bucket, whose objects change in place: it cannot be pinned` };
    return { problem: `${shown} is not a source PKO deploys from (GitRepository, OCIRepository, Bucket)` };
}

/** The source a Stack's `spec.fluxSource` names: its kind and name (undefined parts when not set). */
export function fluxSourceRef(fluxSource: Plain): { kind: Plain; name: Plain } {
    const ref: Obj | undefined = isObject(get(fluxSource, "sourceRef"))
        ? (get(fluxSource, "sourceRef") as Obj)
        : undefined;
    return { kind: ref?.kind, name: ref?.name };
}
