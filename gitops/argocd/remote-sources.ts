/**
 * What an Application source of another place asks Argo CD's repo server to fetch: a chart from a Helm repository or
 * OCI registry, or another git repository's `path` or `ref` files, at `targetRevision`. Fetched and rendered as this
 * repository's would be by gitops/render/fetched-sources.ts, as Flux's sources are.
 */
import * as fs from "fs";
import * as path from "path";
import { FetchError, FetchRequest, FetchedSource } from "../fetch/fetch";
import { RenderContext } from "../render/render";
import { shownUrl } from "../fetch/network-policy";
import { str } from "../../support/records";
import { fetched } from "../render/fetched-sources";
import { SourceNotRendered } from "./application-sources";

type Obj = Record<string, unknown>;

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
