/**
 * What a Flux `HelmRelease` (helm.toolkit.fluxcd.io/v2) applies, rendered as helm-controller renders it, with the real
 * helm (gitops/render/helm.ts).
 * Each step follows helm-controller's source (internal/reconcile, internal/action, internal/chartutil,
 * internal/postrender): chart, `valuesFrom` merge order, release name and namespace, CRDs, post-renderers. A chart of
 * another place (a HelmRepository, an OCIRepository, another repository) is fetched when the run fetches; one not
 * fetched, a values source this repository does not hold, or a SOPS-encrypted one, fails closed, never guessed.
 * Behaviour for users: docs/check.md, "Flux".
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { list, record, str } from "../../support/records";
import { extended } from "../../support/shapes";
import { RenderContext, RenderedStream, runTool } from "../render/render";
import { isChart, remoteDependency, renderHelm } from "../render/helm";
import { confineLinks, rootInUse } from "../render/repo-tree";
import { decodeKubeYaml } from "../decode/kube-yaml";
import { ManifestObject } from "../manifests/manifest-objects";
import { SourceLookup, artifactOf, namedByFetched, resolveSource } from "./flux-sources";
import { FetchRequest, FetchedSource } from "../fetch/fetch";
import { fetchedContext, fetchedOrNoted } from "../render/fetched-sources";
import { FluxOutput, dataSource } from "./flux-kustomizations";
import { fluxName } from "./flux-kinds";
import { Artifact, fromArtifact } from "./flux-artifact";
import { chartSpecOf, chartValues, mergeMaps, withChartValues } from "./flux-chart-values";

type Obj = Record<string, unknown>;

/** Sets `value` at a `--set` style path (`a.b.c`; `a[0]` for list items), as strvals.ParseInto does for one key. */
function setAtPath(target: Obj, dotted: string, value: unknown): void {
    const parts = dotted.split(".");
    let cur: Obj = target;
    for (const [i, part] of parts.entries()) {
        if (i === parts.length - 1) {
            cur[part] = value;
            return;
        }
        const next = record(cur[part]);
        cur[part] = next ? { ...next } : {};
        cur = cur[part] as Obj;
    }
}

/** The values `valuesFrom` and `values` give the chart, in helm-controller's order; notes for what cannot be read. */
function releaseValues(hr: Obj, objects: ManifestObject[], notes: string[]): Obj {
    const spec = record(hr.spec) ?? {};
    const { namespace } = fluxName(hr);
    let values: Obj = {};
    for (const [i, entry] of list(spec.valuesFrom).entries()) {
        const field = `spec.valuesFrom[${i}]`;
        const source = dataSource(entry, field, namespace, objects, notes, "gives");
        if (!source) continue;
        const { ref, kind, shown, match } = source;
        const key = str(ref.valuesKey) || "values.yaml";
        const data = record(match.object.data) ?? {};
        const stringData = record(match.object.stringData) ?? {};
        let text: string | undefined;
        if (typeof stringData[key] === "string") text = stringData[key];
        else if (typeof data[key] === "string")
            text = kind === "Secret" ? Buffer.from(data[key], "base64").toString("utf8") : data[key];
        if (text === undefined) {
            if (ref.optional !== true) notes.push(`${field}: ${shown} has no key ${JSON.stringify(key)}`);
            continue;
        }
        const targetPath = str(ref.targetPath);
        if (targetPath) {
            setAtPath(values, targetPath, text);
            continue;
        }
        let parsed: unknown;
        try {
            parsed = decodeKubeYaml(text).find((d) => d.value !== null)?.value ?? {};
        } catch {
            notes.push(`${field}: the ${JSON.stringify(key)} of ${shown} is not valid YAML`);
            continue;
        }
        const m = record(parsed);
        if (!m) {
            notes.push(`${field}: the ${JSON.stringify(key)} of ${shown} is not a mapping of values`);
            continue;
        }
        values = mergeMaps(values, m);
    }
    const own = record(spec.values);
    return own ? mergeMaps(values, own) : values;
}

/** The chart folder of a HelmRelease (`spec.chart.spec` from a repository source, or `spec.chartRef`), or why not. */
function chartFolder(
    hr: Obj,
    ctx: RenderContext,
    lookup: SourceLookup,
    scope: string,
    near: string | undefined,
): { dir: string; got?: FetchedSource; url?: string; art?: Artifact } | { reason: string } {
    const spec = record(hr.spec) ?? {};
    const { namespace } = fluxName(hr);
    const find: Find = (kind, ns, name) => lookup(kind, ns, name, scope, near);
    let chartPath: string | undefined;
    let source;
    let field: string;
    let sourceField: string;
    const chartRef = record(spec.chartRef);
    if (chartRef) {
        field = "spec.chartRef";
        const kind = str(chartRef.kind);
        if (kind === "OCIRepository") return ociRepositoryChart(chartRef, namespace, find, ctx);
        if (kind !== "HelmChart") return { reason: `spec.chartRef does not name a HelmChart or OCIRepository` };
        const ns = str(chartRef.namespace) || namespace;
        const chart = lookup("HelmChart", ns, str(chartRef.name) ?? "", scope, near);
        if (!chart)
            return {
                reason: `spec.chartRef names HelmChart ${JSON.stringify(`${ns}/${str(chartRef.name) ?? ""}`)}, which is not among the objects check read, so what it applies is not known`,
            };
        const chartSpec = record(chart.spec) ?? {};
        chartPath = str(chartSpec.chart);
        const fromRepo = helmRepositoryChart(
            chartSpec,
            `spec.chartRef (HelmChart ${fluxName(chart).shown})`,
            ns,
            find,
            ctx,
        );
        if (fromRepo) return fromRepo;
        sourceField = `spec.chartRef (HelmChart ${fluxName(chart).shown}) sourceRef`;
        source = resolveSource(chartSpec.sourceRef, sourceField, ns, scope, near, lookup, ctx);
    } else {
        field = "spec.chart.spec";
        const chartSpec = record(record(spec.chart)?.spec);
        if (!chartSpec) return { reason: "it names no chart (spec.chart or spec.chartRef)" };
        chartPath = str(chartSpec.chart);
        const fromRepo = helmRepositoryChart(chartSpec, "spec.chart.spec", namespace, find, ctx);
        if (fromRepo) return fromRepo;
        sourceField = "spec.chart.spec.sourceRef";
        source = resolveSource(chartSpec.sourceRef, sourceField, namespace, scope, near, lookup, ctx);
    }
    if ("reason" in source) return source;
    const run = ctx;
    if (source.got) ctx = fetchedContext(ctx, source.got, source.url ?? "");
    const rel = path.relative(source.dir, path.resolve(source.dir, (chartPath ?? "").replace(/^\/+/, "")));
    const notChart = `${field}.chart ${JSON.stringify(chartPath ?? "")} is not a chart folder of this repository (${rootInUse(ctx)})`;
    if (rel.startsWith("..") || path.isAbsolute(rel)) return { reason: notChart };
    // source-controller builds the HelmChart from the source's artifact (its .sourceignore files and spec.ignore,
    // else Flux's default excludes; what spec.include copies in): a file it leaves out is not in the chart.
    confineLinks(ctx);
    const art = artifactOf(source, sourceField, scope, near, lookup, run);
    if ("reason" in art) return art;
    const dir = path.join(art.dir, rel);
    if (!fs.existsSync(dir) || !isChart(dir)) {
        const written = art.origin(dir).from;
        if (!fs.existsSync(written) || !isChart(written)) return { reason: notChart };
        return {
            reason: `${field}.chart ${JSON.stringify(chartPath ?? "")} is not a chart in the source's artifact (its Chart.yaml is ignored by the source's .sourceignore or spec.ignore)`,
        };
    }
    const remote = remoteDependency(dir);
    if (remote !== undefined)
        return {
            reason: `${field}.chart is a chart whose dependency ${JSON.stringify(remote)} comes from a chart repository, which check does not read (it uses no network)`,
        };
    return { dir, art };
}

/** A Flux object of `kind` by namespace and name, near the HelmRelease. */
type Find = (kind: string, namespace: string, name: string) => Obj | undefined;

/** A chart of a HelmRepository (`spec.sourceRef` kind HelmRepository): fetched, or why not; else undefined. */
function helmRepositoryChart(chartSpec: Obj, at: string, ns: string, find: Find, ctx: RenderContext) {
    const ref = record(chartSpec.sourceRef);
    if (str(ref?.kind) !== "HelmRepository") return undefined;
    const rns = str(ref?.namespace) || ns;
    const named = `HelmRepository ${JSON.stringify(`${rns}/${str(ref?.name) ?? ""}`)}`;
    const repo = find("HelmRepository", rns, str(ref?.name) ?? "");
    if (!repo)
        return {
            reason: `${at}.sourceRef names ${named}, which is not among the objects check read, so what it applies is not known`,
        };
    const rs = record(repo.spec) ?? {};
    const url = (str(rs.url) ?? "").trim().replace(/\/+$/, "");
    const chart = (str(chartSpec.chart) ?? "").trim();
    // helm-controller's default version is `*`, the newest.
    const v = (str(chartSpec.version) ?? "").trim();
    const version = v === "*" ? "" : v;
    const req: FetchRequest =
        str(rs.type) === "oci"
            ? { kind: "oci", url: `oci://${url.replace(/^oci:\/\//i, "")}/${chart}`, version }
            : { kind: "helm", url, chart, version };
    return fetchedChart(req, `${at}.sourceRef (${named})`, ctx);
}

/**
 * A HelmRelease's `chartRef` to an OCIRepository: its chart by `spec.ref.digest`, else at `semver` or `tag`,
 * fetched, or why not.
 */
function ociRepositoryChart(chartRef: Obj, namespace: string, find: Find, ctx: RenderContext) {
    const ns = str(chartRef.namespace) || namespace;
    const repo = find("OCIRepository", ns, str(chartRef.name) ?? "");
    const named = `OCIRepository ${JSON.stringify(`${ns}/${str(chartRef.name) ?? ""}`)}`;
    if (!repo)
        return {
            reason: `spec.chartRef names ${named}, which is not among the objects check read, so what it applies is not known`,
        };
    const rs = record(repo.spec) ?? {};
    const ref = record(rs.ref) ?? {};
    const field = `spec.chartRef (${named})`;
    // source-controller pulls by spec.ref.digest first, then semver, then tag, the `latest` tag when none is set.
    const digest = str(ref.digest)?.trim();
    if (digest) {
        if (!/^sha256:[0-9a-f]{64}$/.test(digest))
            return { reason: `spec.chartRef names ${named}, whose spec.ref.digest is not a sha256 digest` };
        return fetchedChart({ kind: "oci", url: str(rs.url) ?? "", version: "", digest }, field, ctx);
    }
    const semver = str(ref.semver);
    if (semver)
        return fetchedChart(
            {
                kind: "oci",
                url: str(rs.url) ?? "",
                version: semver,
                fluxSemver: { filter: str(ref.semverFilter) || undefined },
            },
            field,
            ctx,
        );
    return fetchedChart({ kind: "oci", url: str(rs.url) ?? "", version: str(ref.tag) || "latest" }, field, ctx);
}

/** A chart fetched from a chart repository or registry, or why it is not read (not fetched, or the fetch failed). */
function fetchedChart(
    req: FetchRequest,
    field: string,
    ctx: RenderContext,
): { dir: string; got: FetchedSource; url: string } | { reason: string } {
    const notes: string[] = [];
    const got = fetchedOrNoted(req, field, ctx, notes);
    if (got === "failed") return { reason: notes[0] };
    if (!got)
        return {
            reason: `${field} is a chart ${req.kind === "oci" ? "in an OCI registry" : "of a Helm repository"}, which check does not fetch in this run (--offline or no network policy)`,
        };
    return { dir: got.path, got, url: req.url };
}

/** Renders what a HelmRelease applies. */
export function helmReleaseOutput(
    hr: Obj,
    run: RenderContext,
    lookup: SourceLookup,
    objects: ManifestObject[],
    scope: string,
    near: string | undefined,
): FluxOutput {
    const out: FluxOutput = { streams: [], notes: [], rendered: [] };
    const spec = record(hr.spec) ?? {};
    const { namespace, name } = fluxName(hr);
    const chart = chartFolder(hr, run, lookup, scope, near);
    if ("reason" in chart) {
        out.notes.push(chart.reason);
        return out;
    }
    out.rendered.push(chart.art ? chart.art.origin(chart.dir).from : chart.dir);
    const ctx = chart.art ? chart.art.ctx : chart.got ? fetchedContext(run, chart.got, chart.url ?? "") : run;
    const values = releaseValues(hr, objects, out.notes);
    // The chart's default values as source-controller builds the HelmChart (its valuesFiles), when it lists any.
    const chartSpec = chartSpecOf(hr, (ns, n) => lookup("HelmChart", ns, n, scope, near));
    const defaults = chartSpec
        ? chartValues(
              chartSpec,
              record(spec.chartRef) ? "spec.chartRef (HelmChart)" : "spec.chart.spec",
              chart.art ? chart.art.dir : chart.dir,
              chart.dir,
              !chart.art,
              out.notes,
          )
        : undefined;
    if (out.notes.length > 0) return out;
    const targetNamespace = str(spec.targetNamespace) || namespace;
    // helm-controller's default release name (api/v2 HelmRelease.GetReleaseName): `<targetNamespace>-<name>` when a
    // target namespace is set, else the name.
    const target = str(spec.targetNamespace);
    const releaseName = str(spec.releaseName) || (target ? `${target}-${name}` : name);
    const crds = str(record(spec.install)?.crds) ?? "Create";
    const render = (dir: string) =>
        renderHelm(dir, ctx, {
            releaseName,
            namespace: targetNamespace,
            values: JSON.stringify(values),
            skipCrds: crds === "Skip",
            skipTests: true,
        });
    const streams = defaults
        ? withChartValues(chart.dir, defaults, chart.art !== undefined, render)
        : render(chart.dir);
    const rendered = postRender(hr, chart.art ? fromArtifact(streams, chart.art) : streams, ctx);
    out.streams.push(...(chart.got ? namedByFetched(rendered, chart.got) : rendered));
    return out;
}

/** `spec.postRenderers[].kustomize` patches and images applied to the rendered objects, in order, with kustomize. */
function postRender(hr: Obj, streams: RenderedStream[], ctx: RenderContext): RenderedStream[] {
    const renderers = list(record(hr.spec)?.postRenderers).map((r) => record(record(r)?.kustomize) ?? {});
    const patches = renderers.flatMap((k) => list(k.patches));
    const images = renderers.flatMap((k) => list(k.images));
    if (patches.length === 0 && images.length === 0) return streams;
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-postrender-"));
    try {
        const files: string[] = [];
        streams.forEach((s, i) => {
            const f = `o${i}.yaml`;
            // The source file rides along in an annotation, to be read back after the patches.
            const objs = decodeKubeYaml(s.text)
                .map((d) => d.value)
                .filter((v) => record(v));
            const text = objs
                .map((v) => {
                    const o = v as Obj;
                    const meta = record(o.metadata) ?? {};
                    const ann = extended(record(meta.annotations) ?? {}, { "pko-guard/rendered-from": s.from });
                    return JSON.stringify(extended(o, { metadata: extended(meta, { annotations: ann }) }));
                })
                .join("\n---\n");
            fs.writeFileSync(path.join(tmp, f), text);
            files.push(f);
        });
        fs.writeFileSync(path.join(tmp, "kustomization.yaml"), JSON.stringify({ resources: files, patches, images }));
        const built = runTool(
            "kustomize",
            ["build", "."],
            `HelmRelease ${JSON.stringify(fluxName(hr).shown)} (postRenderers)`,
            ctx,
            {
                cwd: tmp,
            },
        );
        const out: RenderedStream[] = [];
        for (const chunk of built.split(/^---$/m)) {
            if (chunk.trim() === "") continue;
            const m = /^\s*pko-guard\/rendered-from: (.*)$/m.exec(chunk);
            const from = m ? m[1].trim().replace(/^"|"$/g, "") : path.dirname(streams[0].from);
            out.push({ text: m ? chunk.slice(0, m.index) + chunk.slice(m.index + m[0].length) : chunk, from });
        }
        return out;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
