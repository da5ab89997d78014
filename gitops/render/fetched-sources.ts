/**
 * Sources of other places as both engines render them, when the run fetches (`RenderContext.fetch`): the fetch of a
 * request (gitops/fetch/), the render context of a fetched tree (its own root, named `<url>@<resolved>/<path>`),
 * and what its render gave, moved into the output of the Application or Flux object that reads it. Not fetched,
 * or a fetch that fails, is the caller's fail-closed finding.
 */
import * as fs from "fs";
import * as path from "path";
import {
    FetchError,
    FetchRequest,
    FetchedSource,
    fetchForRun,
    fetchedFileName,
    floatingNote,
    fromCache,
} from "../fetch/fetch";
import { withinDeadline } from "../fetch/network-policy";
import { extended } from "../../support/shapes";
import { RenderContext, RenderedStream, treeContext } from "./render";

/** The most a fetched directory source's manifest file may hold (as a file of the repository). */
const MAX_FILE = 16 * 1024 * 1024;

/** What rendering a source gave: files read as written, rendered streams, folders rendered, renders run. */
export interface SourceOutput {
    /** Files of directory sources (absolute): their objects are the owner's, read as manifests. */
    files: string[];
    /** Rendered streams (kustomize, Helm, jsonnet). */
    streams: RenderedStream[];
    /** Folders of its sources (absolute), so they are not rendered again with defaults. */
    rendered: string[];
    /** Renders run: kustomize builds, Helm templates, jsonnet evaluations. */
    renders: number;
    /** Jsonnet files (absolute) of directory sources that yield no object (Argo CD applies nothing of them). */
    empty?: string[];
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
 * A render context for a fetched tree: its root is the tree (files are confined to it, as to a repository), it is
 * the repository its sources name, at the resolved revision; the run's deadline, cluster, policy and record.
 */
export function fetchedContext(ctx: RenderContext, got: FetchedSource, repoURL: string): RenderContext {
    const root = got.path;
    const show = (abs: string) => {
        const rel = path.relative(root, abs);
        return rel.startsWith("..") ? ctx.show(abs) : fetchedFileName(got, rel);
    };
    return treeContext(ctx, root, show, {
        urls: [{ url: repoURL, from: "fetched" }],
        revision: got.kind === "git" ? got.resolved : undefined,
    });
}

/**
 * What a fetched source's render gave, moved into the Application's output: its files read as streams and every
 * stream named by the fetched source (`<url>@<resolved>/<path>`), so no cache path is ever shown.
 */
export function mergeFetched(from: SourceOutput, got: FetchedSource, into: SourceOutput): void {
    const named = (abs: string) => {
        const rel = path.relative(got.path, abs);
        return rel.startsWith("..") ? undefined : fetchedFileName(got, rel);
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
