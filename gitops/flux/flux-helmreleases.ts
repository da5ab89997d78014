/**
 * What a Flux `HelmRelease` (helm.toolkit.fluxcd.io/v2) applies, rendered as helm-controller renders it, with the real
 * helm (gitops/render/helm.ts).
 * Each step follows helm-controller's source (internal/reconcile, internal/action, internal/chartutil,
 * internal/postrender): chart, `valuesFrom` merge order, release name and namespace, CRDs, post-renderers. A chart or
 * values source this repository does not hold, or a SOPS-encrypted one, fails closed rather than being guessed.
 * Behaviour for users: docs/check.md, "Flux".
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { list, record, str } from "../../support/records";
import { extended } from "../../support/shapes";
import { RenderContext, RenderedStream, runTool } from "../render/render";
import { isChart, remoteDependency, renderHelm } from "../render/helm";
import { rootInUse } from "../render/repo-tree";
import { decodeKubeYaml } from "../decode/kube-yaml";
import { ManifestObject } from "../manifests/manifest-objects";
import { SourceLookup, resolveSource } from "./flux-sources";
import { FluxOutput, sopsEncrypted } from "./flux-kustomizations";
import { fluxName } from "./flux-kinds";

type Obj = Record<string, unknown>;

/** Deep merge as Helm merges value maps (chartutil.MergeTables: `over` wins, maps merge key by key). */
function mergeValues(base: Obj, over: Obj): Obj {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(over)) {
        const b = record(out[k]);
        const o = record(v);
        out[k] = b && o ? mergeValues(b, o) : v;
    }
    return out;
}

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
        const ref = record(entry);
        const kind = str(ref?.kind);
        const name = str(ref?.name);
        const field = `spec.valuesFrom[${i}]`;
        if (!ref || (kind !== "ConfigMap" && kind !== "Secret") || !name) {
            notes.push(`${field} does not name a ConfigMap or Secret`);
            continue;
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
                    `${field} names ${shown}, which is not in this repository, so the values it gives are not known`,
                );
            continue;
        }
        if (sopsEncrypted(match.object)) {
            notes.push(`${field} names ${shown}, which is SOPS-encrypted: the values it gives cannot be read here`);
            continue;
        }
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
        values = mergeValues(values, m);
    }
    const own = record(spec.values);
    return own ? mergeValues(values, own) : values;
}

/** The chart folder of a HelmRelease (`spec.chart.spec` from a repository source, or `spec.chartRef`), or why not. */
function chartFolder(
    hr: Obj,
    ctx: RenderContext,
    lookup: SourceLookup,
    scope: string,
    near: string | undefined,
): { dir: string } | { reason: string } {
    const spec = record(hr.spec) ?? {};
    const { namespace } = fluxName(hr);
    let chartPath: string | undefined;
    let source;
    let field: string;
    const chartRef = record(spec.chartRef);
    if (chartRef) {
        field = "spec.chartRef";
        const kind = str(chartRef.kind);
        if (kind === "OCIRepository")
            return {
                reason: `spec.chartRef names an OCIRepository, a chart in an OCI registry, which check does not pull`,
            };
        if (kind !== "HelmChart") return { reason: `spec.chartRef does not name a HelmChart or OCIRepository` };
        const ns = str(chartRef.namespace) || namespace;
        const chart = lookup("HelmChart", ns, str(chartRef.name) ?? "", scope, near);
        if (!chart)
            return {
                reason: `spec.chartRef names HelmChart ${JSON.stringify(`${ns}/${str(chartRef.name) ?? ""}`)}, which is not among the objects check read, so what it applies is not known`,
            };
        const chartSpec = record(chart.spec) ?? {};
        chartPath = str(chartSpec.chart);
        source = resolveSource(
            chartSpec.sourceRef,
            `spec.chartRef (HelmChart ${fluxName(chart).shown}) sourceRef`,
            ns,
            scope,
            near,
            lookup,
            ctx,
        );
    } else {
        field = "spec.chart.spec";
        const chartSpec = record(record(spec.chart)?.spec);
        if (!chartSpec) return { reason: "it names no chart (spec.chart or spec.chartRef)" };
        chartPath = str(chartSpec.chart);
        source = resolveSource(chartSpec.sourceRef, "spec.chart.spec.sourceRef", namespace, scope, near, lookup, ctx);
    }
    if ("reason" in source) return source;
    const dir = path.resolve(source.dir, (chartPath ?? "").replace(/^\/+/, ""));
    const rel = path.relative(source.dir, dir);
    if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(dir) || !isChart(dir))
        return {
            reason: `${field}.chart ${JSON.stringify(chartPath ?? "")} is not a chart folder of this repository (${rootInUse(ctx)})`,
        };
    const remote = remoteDependency(dir);
    if (remote !== undefined)
        return {
            reason: `${field}.chart is a chart whose dependency ${JSON.stringify(remote)} comes from a chart repository, which check does not read (it uses no network)`,
        };
    return { dir };
}

/** Renders what a HelmRelease applies. */
export function helmReleaseOutput(
    hr: Obj,
    ctx: RenderContext,
    lookup: SourceLookup,
    objects: ManifestObject[],
    scope: string,
    near: string | undefined,
): FluxOutput {
    const out: FluxOutput = { streams: [], notes: [], rendered: [] };
    const spec = record(hr.spec) ?? {};
    const { namespace, name } = fluxName(hr);
    const chart = chartFolder(hr, ctx, lookup, scope, near);
    if ("reason" in chart) {
        out.notes.push(chart.reason);
        return out;
    }
    out.rendered.push(chart.dir);
    const values = releaseValues(hr, objects, out.notes);
    if (out.notes.length > 0) return out;
    const targetNamespace = str(spec.targetNamespace) || namespace;
    // helm-controller's default release name (api/v2 HelmRelease.GetReleaseName): `<targetNamespace>-<name>` when a
    // target namespace is set, else the name.
    const target = str(spec.targetNamespace);
    const releaseName = str(spec.releaseName) || (target ? `${target}-${name}` : name);
    const crds = str(record(spec.install)?.crds) ?? "Create";
    const streams = renderHelm(chart.dir, ctx, {
        releaseName,
        namespace: targetNamespace,
        values: JSON.stringify(values),
        skipCrds: crds === "Skip",
        skipTests: true,
    });
    out.streams.push(...postRender(hr, streams, ctx));
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
