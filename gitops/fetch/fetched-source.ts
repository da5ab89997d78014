/** What a fetch asks for and what it gives (./fetch.ts): the types every caller and the cache share. */
import * as path from "path";

/** A commit named by its full hash: a revision that cannot move. */
export function isCommit(ref: string): boolean {
    return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(ref);
}

export type SourceKind = "git" | "helm" | "oci" | "file";

/** A fetched source: where it is on this machine, and what it was resolved to. */
export interface FetchedSource {
    kind: SourceKind;
    /** The URL as shown anywhere (no credentials); for a Helm repository chart, `<repository>#<chart>`. */
    url: string;
    /** The reference as written (a branch, tag, commit, chart version or constraint; "" for the default). */
    ref: string;
    /** What it resolved to: a commit hash, a chart version (OCI: `version@sha256:...`). */
    resolved: string;
    /** The content's digest: `sha256:...` of a chart archive, `git-tree:<id>` of a checkout. */
    digest: string;
    /** Whether the reference can resolve to something else later (a branch, a tag, a version range). */
    floating: boolean;
    /** The local folder: a checkout's root, or the chart's folder. */
    path: string;
    /** Whether the cache answered without fetching. */
    fromCache: boolean;
}

/** What to fetch. */
export type FetchRequest =
    /** `semver`: `ref` is a range of tags (a Flux GitRepository's `spec.ref.semver`), resolved to the highest match. */
    | { kind: "git"; url: string; ref: string; semver?: boolean }
    | { kind: "helm"; url: string; chart: string; version: string }
    /** `digest`: the manifest's `sha256:...` digest, pulled by it whatever `version` says (a Flux OCIRepository's `ref.digest`). */
    /**
     * `artifact`: a Flux OCI artifact (./oci-artifact.ts), not a chart: `version` is its tag (or range, with
     * `fluxSemver`); `mediaType` selects its layer.
     */
    | {
          kind: "oci";
          url: string;
          version: string;
          digest?: string;
          /** `version` is a Flux OCIRepository's `spec.ref.semver`: the tag is chosen as source-controller does. */
          fluxSemver?: { filter?: string };
          artifact?: { mediaType?: string };
      }
    /** One file over HTTP(S) (a kustomization's remote resource). */
    | { kind: "file"; url: string };

/** Whether a reference can move: anything but a full commit hash (git) or an exact version (charts). */
export function isFloating(req: FetchRequest): boolean {
    if (req.kind === "git") return !isCommit(req.ref);
    if (req.kind === "file") return true;
    if (req.kind === "oci" && req.digest !== undefined) return false;
    // An artifact's tag can be pushed again: only its digest pins it.
    if (req.kind === "oci" && req.artifact !== undefined) return true;
    return !/^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(req.version.trim());
}

/**
 * How a file of a fetched source is named in findings and messages: `<url>@<resolved>/<path>` (`rel`: the file's
 * path in the source's tree, OS-separated; "" names the tree itself, `<url>@<resolved>`). Never a cache path.
 */
export function fetchedFileName(s: Pick<FetchedSource, "url" | "resolved">, rel: string): string {
    const slashed = rel.split(path.sep).join("/");
    return `${s.url}@${s.resolved}${slashed === "" ? "" : `/${slashed}`}`;
}

/** How an object from a floating source says where it came from: `<url> at <ref>, resolved to <x>`; else undefined. */
export function floatingNote(s: FetchedSource): string | undefined {
    return s.floating
        ? `${s.url} at ${s.ref === "" ? "its default" : JSON.stringify(s.ref)}, resolved to ${s.resolved}`
        : undefined;
}
