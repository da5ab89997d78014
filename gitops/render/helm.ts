/** `helm template` of a local chart as Argo CD's repo server runs it: no chart repository, the cluster's APIs. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { DEFAULT_CAPABILITIES } from "./capabilities";
import { RenderContext, RenderedStream, mappingOf, runTool } from "./render";
import { confineLinks } from "./repo-tree";
import { buildDependencies, dependenciesFetchable } from "./chart-dependencies";
import { fetchedFileName, floatingNote } from "../fetch/fetched-source";
import { isChart } from "./folders";

export { isChart };

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
    /** `helm.skipTests`: `--skip-tests` (Argo CD never applies a test hook either way). */
    skipTests?: boolean;
    /** The Application's own `helm.kubeVersion` / `helm.apiVersions`: they replace the cluster's (as in Argo CD). */
    kubeVersion?: string;
    apiVersions?: string[];
}

/**
 * A parameter value as Argo CD escapes it for Helm's command line (argo-cd util/helm/cmd.go
 * `cleanSetParameters`): every comma not already preceded by a backslash gets one, so that Helm reads the
 * value as one string (`a,destroyOnFinalize=true` sets the parameter, nothing else); a value written as a
 * Helm list (`{a,b}`) is passed as it is. Backslashes are not escaped otherwise.
 */
export function cleanSetParameter(value: string): string {
    if (value.startsWith("{") && value.endsWith("}")) return value;
    let out = "";
    let prev = "";
    for (const c of value) {
        out += c === "," && prev !== "\\" ? "\\," : c;
        prev = c;
    }
    return out;
}

/**
 * The `--set`, `--set-string` and `--set-file` arguments as Argo CD builds them (argo-cd
 * reposerver/repository/repository.go `helmTemplate`, util/helm/cmd.go `template`): parameters go into maps by
 * name (the last of a repeated name wins), `forceString` ones to `--set-string`, every value escaped.
 */
export function setArgs(opts: Pick<HelmOptions, "parameters" | "fileParameters">): string[] {
    const set = new Map<string, string>();
    const setString = new Map<string, string>();
    const setFile = new Map<string, string>();
    for (const p of opts.parameters ?? []) (p.forceString ? setString : set).set(p.name, p.value);
    for (const p of opts.fileParameters ?? []) setFile.set(p.name, p.path);
    const args: string[] = [];
    for (const [flag, m] of [
        ["--set", set],
        ["--set-string", setString],
        ["--set-file", setFile],
    ] as const)
        for (const [k, v] of m) args.push(flag, `${k}=${cleanSetParameter(v)}`);
    return args;
}

/**
 * The first dependency of a chart that comes from a chart repository and is not vendored into `charts/` (Argo
 * CD's repo server runs `helm dependency build` for it, which needs the network); undefined when there is none.
 */
export function remoteDependency(dir: string): string | undefined {
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
        if (!local && !vendored) return String(d.name);
    }
    return undefined;
}

/** `helm template` of a local chart; objects attributed to their template through `# Source:` comments. */
export function renderHelm(dir: string, ctx: RenderContext, opts: HelmOptions): RenderedStream[] {
    const what = `${ctx.show(dir)} (helm chart)`;
    confineLinks(ctx);
    const chart = mappingOf(fs.readFileSync(path.join(dir, "Chart.yaml"), "utf8"));
    const remote = remoteDependency(dir);
    if (remote !== undefined && !dependenciesFetchable(dir, ctx))
        throw new BadInputError(
            `${what}: dependency ${JSON.stringify(remote)} comes from a chart repository (helm dependency build needs the network, which check does not use); vendor it into charts/`,
        );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-helm-"));
    try {
        // Dependencies from chart repositories: fetched into a copy of the chart, as `helm dependency build` would.
        const chartDir = remote === undefined ? dir : path.join(tmp, "chart");
        const deps = remote === undefined ? [] : buildDependencies(dir, chartDir, ctx, what);
        const args = ["template", opts.releaseName, chartDir];
        if (opts.namespace) args.push("--namespace", opts.namespace);
        if (!opts.skipCrds) args.push("--include-crds");
        if (opts.skipTests) args.push("--skip-tests");
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
        args.push(...setArgs(opts));
        const out = runTool("helm", args, what, ctx, { cwd: chartDir });
        const chartName = typeof chart.name === "string" ? chart.name : path.basename(dir);
        const streams: RenderedStream[] = [];
        for (const chunk of out.split(/^---\s*$/m)) {
            if (chunk.trim() === "") continue;
            const m = /^# Source: (.+)$/m.exec(chunk);
            let from = dir;
            let shown: string | undefined;
            let floating: string | undefined;
            if (m) {
                // `<chart>/templates/x.yaml`, or `<chart>/charts/<sub>/templates/x.yaml`
                const rel = m[1].trim().split("/").slice(1).join("/");
                const candidate = path.join(chartDir, rel);
                if (m[1].startsWith(chartName + "/") && fs.existsSync(candidate)) {
                    from = path.join(dir, rel);
                    // A fetched dependency's template: the file in the cache, named by where it came from.
                    for (const d of deps) {
                        const inDep = path.relative(d.dir, candidate);
                        if (inDep.startsWith("..") || path.isAbsolute(inDep)) continue;
                        from = path.join(d.source.path, inDep);
                        shown = fetchedFileName(d.source, inDep);
                        floating = floatingNote(d.source);
                    }
                }
            }
            streams.push(shown === undefined ? { text: chunk, from } : { text: chunk, from, shown, floating });
        }
        return streams;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
