/**
 * Application sources of other places, fetched as Argo CD's repo server fetches them (gitops/fetch/), when the run
 * fetches (`RenderContext.fetch`): a chart from a Helm repository or OCI registry, or another git repository's
 * `path` or `ref` files, at `targetRevision`. What is fetched is rendered as this repository's would be, its files
 * named `<url>@<resolved>/<path>`. Not fetched, or a fetch that fails, is the fail-closed finding.
 */
import * as fs from "fs";
import * as path from "path";
import { FetchError, FetchRequest, FetchedSource, fetchForRun, floatingNote, fromCache } from "../fetch/fetch";
import { RenderContext } from "../render/render";
import { shownUrl, withinDeadline } from "../fetch/network-policy";
import { str } from "../../support/records";
import { extended } from "../../support/shapes";
import { SourceNotRendered, SourceOutput } from "./application-sources";

type Obj = Record<string, unknown>;

/** The most a fetched directory source's manifest file may hold (as a file of the repository). */
const MAX_FILE = 16 * 1024 * 1024;

/** The request for an Application source's chart (`chart` set), from a Helm repository or an OCI registry. */
export function chartRequest(source: Obj): FetchRequest | undefined {
    const repo = str(source.repoURL)?.trim();
    const chart = str(source.chart)?.trim();
    if (!repo || !chart) return undefined;
    const version = (str(source.targetRevision) ?? "").trim();
    const v = version === "*" ? "" : version;
    if (/^https?:\/\//i.test(repo)) return { kind: "helm", url: repo, chart, version: v };
    const registry = repo.replace(/^oci:\/\//i, "").replace(/\/+$/, "");
    return { kind: "oci", url: `oci://${registry}/${chart}`, version: v };
}

/** The request for another git repository at the source's `targetRevision` (default `HEAD`). */
export function gitRequest(source: Obj): FetchRequest | undefined {
    const repo = str(source.repoURL)?.trim();
    if (!repo) return undefined;
    return { kind: "git", url: repo, ref: (str(source.targetRevision) ?? "").trim() || "HEAD" };
}

/**
 * The fetched source for a request, when the run fetches (and, `--offline`, when the cache holds it); undefined
 * when it does not (the caller then says, as before, that the source is not read). A fetch that fails throws
 * FetchError (one line).
 */
export function fetched(req: FetchRequest, ctx: RenderContext): FetchedSource | undefined {
    if (!ctx.fetch) return undefined;
    if (ctx.fetch.offline && !fromCache(req, ctx.fetch)) return undefined;
    return fetchForRun(req, withinDeadline(ctx.fetch, ctx.deadline), (ctx.fetched ??= []));
}

/** `fetched`, a failure noted (for the fail-closed finding) as `<field> could not be fetched: <why>`. */
export function fetchedOrNoted(
    req: FetchRequest,
    field: string,
    ctx: RenderContext,
    notes: string[],
): FetchedSource | "failed" | undefined {
    try {
        return fetched(req, ctx);
    } catch (e) {
        if (!(e instanceof FetchError)) throw e;
        notes.push(`${field} could not be fetched: ${e.message}`);
        return "failed";
    }
}

/**
 * How an Application's `http(s)://` value files are read in this run (SourceOwner.remoteFile): fetched under the
 * network policy (a file, always resolved again unless --offline), the local copy's path; undefined when the run
 * fetches nothing. One that cannot be had throws SourceNotRendered (the Application fails closed, one line).
 */
export function remoteValueFile(ctx: RenderContext): ((url: string) => string) | undefined {
    if (!ctx.fetch) return undefined;
    return (url) => {
        let got: FetchedSource | undefined;
        try {
            got = fetched({ kind: "file", url }, ctx);
        } catch (e) {
            if (!(e instanceof FetchError)) throw e;
            throw new SourceNotRendered(`.helm.valueFiles: a value file could not be fetched: ${e.message}`);
        }
        if (!got)
            throw new SourceNotRendered(
                `.helm.valueFiles: ${JSON.stringify(shownUrl(url))} is fetched over the network, which check does not do in this run (--offline, nothing cached)`,
            );
        const [file] = fs.readdirSync(got.path);
        return path.join(got.path, file);
    };
}

/**
 * A render context for a fetched tree: its root is the tree (files are confined to it, as to a repository), it is
 * the repository its sources name, at the resolved revision; the run's deadline, cluster, policy and record.
 */
export function fetchedContext(ctx: RenderContext, got: FetchedSource, repoURL: string): RenderContext {
    const root = got.path;
    const name = (abs: string) => {
        const rel = path.relative(root, abs).split(path.sep).join("/");
        return `${got.url}@${got.resolved}${rel === "" ? "" : `/${rel}`}`;
    };
    return {
        deadline: ctx.deadline,
        repoRoot: root,
        show: (abs) => (path.relative(root, abs).startsWith("..") ? ctx.show(abs) : name(abs)),
        cluster: ctx.cluster,
        repository: {
            urls: [{ url: repoURL, from: "fetched" }],
            revision: got.kind === "git" ? got.resolved : undefined,
        },
        fetch: ctx.fetch,
        fetched: ctx.fetched,
    };
}

/**
 * What a fetched source's render gave, moved into the Application's output: its files read as streams and every
 * stream named by the fetched source (`<url>@<resolved>/<path>`), so no cache path is ever shown.
 */
export function mergeFetched(from: SourceOutput, got: FetchedSource, into: SourceOutput): void {
    const named = (abs: string) => {
        const rel = path.relative(got.path, abs).split(path.sep).join("/");
        return rel.startsWith("..") ? undefined : `${got.url}@${got.resolved}${rel === "" ? "" : `/${rel}`}`;
    };
    const floating = floatingNote(got);
    for (const f of from.files) {
        const size = fs.statSync(f).size;
        if (size > MAX_FILE) throw new FetchError(`${named(f) ?? got.url}: larger than ${MAX_FILE} bytes`);
        into.streams.push({ text: fs.readFileSync(f, "utf8"), from: f, shown: named(f), floating });
    }
    for (const s of from.streams)
        into.streams.push(extended(s, { shown: s.shown ?? named(s.from), floating: s.floating ?? floating }));
    into.renders += from.renders;
    if (from.empty) (into.empty ??= []).push(...from.empty);
}
