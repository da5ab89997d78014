/**
 * What an Application source of another place asks Argo CD's repo server to fetch: a chart from a Helm repository or
 * OCI registry, or another git repository's `path` or `ref` files, at `targetRevision`. Fetched and rendered as this
 * repository's would be by gitops/render/fetched-sources.ts, as Flux's sources are.
 */
import { FetchRequest } from "../fetch/fetch";
import { str } from "../../support/records";

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
