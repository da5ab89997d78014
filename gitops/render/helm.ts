/** `helm template` of a local chart as Argo CD's repo server runs it: no chart repository, the cluster's APIs. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { DEFAULT_CAPABILITIES } from "./capabilities";
import { RenderContext, RenderedStream, mappingOf, runTool } from "./render";
import { confineLinks } from "./repo-tree";

export function isChart(dir: string): boolean {
    return fs.existsSync(path.join(dir, "Chart.yaml"));
}

/** Helm options of an Application source (spec.source.helm), value files already resolved to absolute paths. */
export interface HelmOptions {
    releaseName: string;
    namespace?: string;
    valueFiles?: string[];
    /** `values` (YAML text) and `valuesObject`, written to a file passed after the value files. */
    values?: string;
    parameters?: { name: string; value: string; forceString?: boolean }[];
    fileParameters?: { name: string; path: string }[];
    ignoreMissingValueFiles?: boolean;
    skipCrds?: boolean;
    /** The Application's own `helm.kubeVersion` / `helm.apiVersions`: they replace the cluster's (as in Argo CD). */
    kubeVersion?: string;
    apiVersions?: string[];
}

/** `helm template` of a local chart; objects attributed to their template through `# Source:` comments. */
export function renderHelm(dir: string, ctx: RenderContext, opts: HelmOptions): RenderedStream[] {
    const what = `${ctx.show(dir)} (helm chart)`;
    confineLinks(ctx);
    // A Chart.yaml that does not decode is left to helm, which says why.
    const chart = mappingOf(fs.readFileSync(path.join(dir, "Chart.yaml"), "utf8"));
    const deps: unknown[] = Array.isArray(chart.dependencies) ? chart.dependencies : [];
    for (const entry of deps) {
        // An entry that is not a mapping is helm's to refuse.
        const d = (entry !== null && typeof entry === "object" ? entry : {}) as Record<string, unknown>;
        const repo = typeof d.repository === "string" ? d.repository : "";
        const local = repo === "" || repo.startsWith("file://");
        const vendored =
            fs.existsSync(path.join(dir, "charts")) &&
            fs.readdirSync(path.join(dir, "charts")).some((f) => f.startsWith(String(d.name)));
        if (!local && !vendored)
            throw new BadInputError(
                `${what}: dependency ${JSON.stringify(String(d.name))} comes from a chart repository (helm dependency build needs the network, which check does not use); vendor it into charts/`,
            );
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-helm-"));
    try {
        const args = ["template", opts.releaseName, dir];
        if (opts.namespace) args.push("--namespace", opts.namespace);
        if (!opts.skipCrds) args.push("--include-crds");
        const cluster = ctx.cluster ?? DEFAULT_CAPABILITIES;
        const kubeVersion = opts.kubeVersion || cluster.kubeVersion;
        if (kubeVersion) args.push("--kube-version", kubeVersion);
        for (const v of opts.apiVersions?.length ? opts.apiVersions : cluster.apiVersions)
            args.push("--api-versions", v);
        for (const f of opts.valueFiles ?? []) {
            if (!fs.existsSync(f)) {
                if (opts.ignoreMissingValueFiles) continue;
                throw new BadInputError(`${what}: value file ${ctx.show(f)} does not exist`);
            }
            args.push("--values", f);
        }
        if (opts.values !== undefined && opts.values.trim() !== "") {
            const vf = path.join(tmp, "values.yaml");
            fs.writeFileSync(vf, opts.values);
            args.push("--values", vf);
        }
        for (const p of opts.parameters ?? [])
            args.push(p.forceString ? "--set-string" : "--set", `${p.name}=${p.value}`);
        for (const p of opts.fileParameters ?? []) args.push("--set-file", `${p.name}=${p.path}`);
        const out = runTool("helm", args, what, ctx, { cwd: dir });
        const chartName = typeof chart.name === "string" ? chart.name : path.basename(dir);
        const streams: RenderedStream[] = [];
        for (const chunk of out.split(/^---\s*$/m)) {
            if (chunk.trim() === "") continue;
            const m = /^# Source: (.+)$/m.exec(chunk);
            let from = dir;
            if (m) {
                // `<chart>/templates/x.yaml`, or `<chart>/charts/<sub>/templates/x.yaml`
                const rel = m[1].trim().split("/").slice(1).join("/");
                const candidate = path.join(dir, rel);
                if (m[1].startsWith(chartName + "/") && fs.existsSync(candidate)) from = candidate;
            }
            streams.push({ text: chunk, from });
        }
        return streams;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
