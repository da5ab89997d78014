/**
 * kustomize's Helm chart generator (`helmCharts:`) as Argo CD's repo server runs it when argocd-cm's
 * `kustomize.buildOptions` carries `--enable-helm`: `kustomize build --enable-helm`, with the toolchain's helm
 * (`--helm-command`) and the cluster's version and APIs (`--helm-kube-version`, `--helm-api-versions`, as Argo CD
 * adds them for kustomize 5.3 and later). kustomize would pull each chart itself with `helm pull`; here every chart
 * of the kustomization's `helmCharts` that its chart home does not hold is fetched first under the run's network
 * policy (gitops/fetch/, the cache with `--offline`) and placed where the generator looks before it pulls, in the
 * scratch copy the build uses: `<chartHome>/<name>-<version>/<name>` (`<chartHome>/<name>` without a version), for
 * the kustomization and each local base and component it builds.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { FetchError, FetchRequest } from "../fetch/fetch";
import { shownUrl } from "../fetch/network-policy";
import { list, record, str } from "../../support/records";
import { DEFAULT_CAPABILITIES } from "./capabilities";
import { fetched } from "./fetched-sources";
import { RenderContext, mappingOf } from "./render";
import { INSTALL_HINT, findTool } from "./tools";

/** A chart the generator needs that this run cannot have: the reason continues the source's field. */
export class ChartNotHad extends Error {}

/** The chart a `helmCharts` entry names from a repository (`repo` set), as a fetch request; else undefined. */
export function helmChartRequest(entry: Record<string, unknown>): FetchRequest | undefined {
    const repo = str(entry.repo)?.trim();
    const name = str(entry.name)?.trim();
    if (!repo || !name) return undefined;
    const version = (str(entry.version) ?? "").trim();
    if (/^oci:\/\//i.test(repo)) return { kind: "oci", url: `${repo.replace(/\/+$/, "")}/${name}`, version };
    return { kind: "helm", url: repo, chart: name, version };
}

/** Where the generator looks for an entry's chart before it pulls it (kustomize v5's chart home layout). */
function chartFolder(chartHome: string, name: string, version: string): string {
    return version === "" ? path.join(chartHome, name) : path.join(chartHome, `${name}-${version}`, name);
}

/** A chart's name as Helm takes it: one path segment, never `.` or `..`. */
const CHART_NAME = /^(?!\.\.?$)[A-Za-z0-9_.-]+$/;

/**
 * Places the charts the kustomization `k` (in `appDir`, a folder of the scratch copy `copy`) and its local bases and
 * components name from repositories into their chart homes, fetched under the run's policy; returns the folders it
 * made (removed after the build). A chart that cannot be had throws ChartNotHad. `kustomizationFile` finds a
 * folder's kustomization (./kustomize.ts, passed in: it imports this module).
 */
export function placeHelmCharts(
    k: Record<string, unknown>,
    appDir: string,
    copy: string,
    ctx: RenderContext,
    kustomizationFile: (dir: string) => string | undefined,
): string[] {
    const made: string[] = [];
    const seen = new Set<string>();
    const visit = (kz: Record<string, unknown>, dir: string) => {
        if (seen.has(dir)) return;
        seen.add(dir);
        made.push(...placeOwn(kz, dir, copy, ctx));
        for (const field of ["resources", "bases", "components"])
            for (const e of list(kz[field])) {
                if (typeof e !== "string" || /:\/\/|^[a-z][a-z0-9+.-]*::|\?/i.test(e)) continue;
                const sub = path.resolve(dir, e);
                const rel = path.relative(copy, sub);
                if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(sub)) continue;
                if (!fs.statSync(sub).isDirectory()) continue;
                const kfile = kustomizationFile(sub);
                if (kfile) visit(mappingOf(fs.readFileSync(kfile, "utf8")), sub);
            }
    };
    visit(k, appDir);
    return made;
}

/** placeHelmCharts for one kustomization's own `helmCharts`. */
function placeOwn(k: Record<string, unknown>, appDir: string, copy: string, ctx: RenderContext): string[] {
    const home = path.resolve(appDir, str(record(k.helmGlobals)?.chartHome) ?? "charts");
    const rel = path.relative(copy, home);
    const made: string[] = [];
    for (const entry of list(k.helmCharts).map(record)) {
        if (!entry) continue;
        const req = helmChartRequest(entry);
        if (!req) continue;
        if (rel.startsWith("..") || path.isAbsolute(rel))
            throw new ChartNotHad(": helmGlobals.chartHome is outside the repository, which check does not write to");
        const name = String(entry.name).trim();
        const version = (str(entry.version) ?? "").trim();
        const dest = chartFolder(home, name, version);
        if (!CHART_NAME.test(name) || /[/\\]/.test(version) || path.relative(home, dest).startsWith(".."))
            throw new ChartNotHad(`: helmCharts: ${JSON.stringify(name)} is not a chart name`);
        if (fs.existsSync(dest)) continue; // vendored: the generator reads it as it is
        const shown = `chart ${JSON.stringify(name)} from ${JSON.stringify(shownUrl(String(entry.repo)))}`;
        let got;
        try {
            got = fetched(req, ctx);
        } catch (e) {
            if (!(e instanceof FetchError)) throw e;
            throw new ChartNotHad(`: helmCharts: ${shown} could not be fetched: ${e.message}`);
        }
        if (!got)
            throw new ChartNotHad(
                `: helmCharts: ${shown} is fetched over the network, which check does not do in this run (--offline, nothing cached); vendor it into ${JSON.stringify(path.relative(copy, dest).split(path.sep).join("/"))}`,
            );
        const top = version === "" ? dest : path.dirname(dest);
        if (!fs.existsSync(top)) made.push(top);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        fs.cpSync(got.path, dest, { recursive: true, dereference: false });
    }
    return made;
}

/** The arguments `kustomize build` gets beyond `build .` when the generator is enabled. */
export function enableHelmArgs(ctx: RenderContext, what: string): string[] {
    const helm = findTool("helm");
    if (!helm) throw new BadInputError(`${what} needs helm, which is not installed: ${INSTALL_HINT.helm}`);
    const cluster = ctx.cluster ?? DEFAULT_CAPABILITIES;
    const args = ["--enable-helm", "--helm-command", helm.path];
    if (cluster.kubeVersion) args.push("--helm-kube-version", cluster.kubeVersion);
    for (const v of cluster.apiVersions) args.push("--helm-api-versions", v);
    return args;
}
