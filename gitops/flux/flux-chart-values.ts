/**
 * A HelmChart's `valuesFiles` (`spec.chart.spec.valuesFiles` of a HelmRelease, or the HelmChart its `chartRef`
 * names), as source-controller builds the chart (internal/helm/chart builder_local.go `mergeFileValues`,
 * builder_remote.go `mergeChartValues`): the files merged in order, the last winning, and the result replaces the
 * chart's own `values.yaml` (which counts only when listed). A chart of a source's artifact reads them from the
 * artifact's root; a chart of a chart repository from the chart. A single `values.yaml` changes nothing. A file
 * that is missing (unless `ignoreMissingValuesFiles`) or is not a mapping fails the build: check fails closed.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { list, record, str } from "../../support/records";
import { decodeKubeYaml } from "../decode/kube-yaml";
import { RenderedStream } from "../render/render";
import { extended } from "../../support/shapes";
import { confined } from "./flux-artifact";

type Obj = Record<string, unknown>;

/** The most a values file may hold. */
const MAX_VALUES_FILE = 16 * 1024 * 1024;

/** Deep merge as Flux's transform.MergeMaps (and Helm's): `over` wins, maps merge key by key. */
export function mergeMaps(base: Obj, over: Obj): Obj {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(over)) {
        const b = record(out[k]);
        const o = record(v);
        out[k] = b && o ? mergeMaps(b, o) : v;
    }
    return out;
}

/**
 * The chart's values as source-controller builds them from `chartSpec.valuesFiles` (at `field`), or undefined when
 * it lists none (the chart's own values.yaml stands). `root`: where the paths are read (the artifact's root, or the
 * chart for a chart of a repository, `remote`). Why not, in `notes`.
 */
export function chartValues(
    chartSpec: Obj,
    field: string,
    root: string,
    chartDir: string,
    remote: boolean,
    notes: string[],
): Obj | undefined {
    const files = list(chartSpec.valuesFiles).filter((f): f is string => typeof f === "string");
    if (files.length === 0 || (files.length === 1 && path.normalize(files[0]) === "values.yaml")) return undefined;
    const ignoreMissing = chartSpec.ignoreMissingValuesFiles === true;
    let merged: Obj = {};
    for (const [i, f] of files.entries()) {
        // securejoin.SecureJoin: `..` never leaves the root; a repository chart's `values.yaml` is its own values.
        const rel = confined(f);
        const file = remote && rel === "values.yaml" ? path.join(chartDir, rel) : path.join(root, rel);
        const at = `${field}.valuesFiles[${i}] ${JSON.stringify(f)}`;
        if (!fs.existsSync(file) || !fs.statSync(file).isFile()) {
            if (ignoreMissing) continue;
            notes.push(`${at} is not in the chart's source, so source-controller cannot build the chart`);
            return undefined;
        }
        if (fs.statSync(file).size > MAX_VALUES_FILE) {
            notes.push(`${at} is larger than ${MAX_VALUES_FILE} bytes, which check does not read`);
            return undefined;
        }
        let value: unknown;
        try {
            value = decodeKubeYaml(fs.readFileSync(file, "utf8")).find((d) => d.value !== null)?.value ?? {};
        } catch {
            value = undefined;
        }
        const m = record(value);
        if (!m) {
            notes.push(`${at} is not a mapping of values, so source-controller cannot build the chart`);
            return undefined;
        }
        merged = mergeMaps(merged, m);
    }
    // metadata.go OverwriteChartDefaultValues: the chart's values.yaml is replaced, and one without it fails.
    if (!fs.existsSync(path.join(chartDir, "values.yaml"))) {
        notes.push(
            `${field}.valuesFiles: the chart has no values.yaml to replace, so source-controller cannot build it`,
        );
        return undefined;
    }
    return merged;
}

/**
 * Renders a chart whose default values are `values` instead of its values.yaml: from a copy beside it (so its
 * relative `file://` dependencies resolve alike; `inPlace` false: a folder of its own, for a chart that is not
 * check's to write beside, as the cache's), the streams attributed to the chart's own files.
 */
export function withChartValues(
    chartDir: string,
    values: Obj,
    inPlace: boolean,
    render: (dir: string) => RenderedStream[],
): RenderedStream[] {
    const parent = inPlace ? path.dirname(chartDir) : os.tmpdir();
    const copy = fs.mkdtempSync(path.join(parent, ".pko-guard-values-"));
    try {
        fs.cpSync(chartDir, copy, { recursive: true, verbatimSymlinks: true });
        fs.writeFileSync(path.join(copy, "values.yaml"), JSON.stringify(values));
        return render(copy).map((s) => {
            const rel = path.relative(copy, s.from);
            return rel.startsWith("..") || path.isAbsolute(rel) ? s : extended(s, { from: path.join(chartDir, rel) });
        });
    } finally {
        fs.rmSync(copy, { recursive: true, force: true });
    }
}

/** The HelmChart spec a HelmRelease's chart comes from: `spec.chart.spec`, or the HelmChart `found` for its chartRef. */
export function chartSpecOf(hr: Obj, found: (namespace: string, name: string) => Obj | undefined): Obj | undefined {
    const spec = record(hr.spec) ?? {};
    const ref = record(spec.chartRef);
    if (!ref) return record(record(spec.chart)?.spec);
    if (str(ref.kind) !== "HelmChart") return undefined;
    const ns = str(ref.namespace) || str(record(hr.metadata)?.namespace) || "default";
    return record(found(ns, str(ref.name) ?? "")?.spec);
}
