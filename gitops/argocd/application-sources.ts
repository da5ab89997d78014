/**
 * One source of an Argo CD Application rendered as its repo server renders it (gitops/argocd/applications.ts
 * dispatches each source here by type): a directory of manifests (and jsonnet files), a kustomization with the
 * Application's kustomize options, a local Helm chart with its value files and parameters; and the type a source
 * that names none gets, as Argo CD discovers it.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { normalizeKubeVersion } from "../render/capabilities";
import { RenderContext, ToolFailed } from "../render/render";
import { repoFolders, rootInUse } from "../render/repo-tree";
import { KUSTOMIZATION_FILES, renderKustomize } from "../render/kustomize";
import { renderHelm } from "../render/helm";
import { ChartNotHad } from "../render/kustomize-helm";
import { JsonnetRefused, renderJsonnet } from "../render/jsonnet";
import { list, record, str } from "../../support/records";
import { BuildEnv, envsubst } from "./build-env";
import { SourceOutput } from "../render/fetched-sources";
import { RenderedStream } from "../render/render";

type Obj = Record<string, unknown>;

/** What rendering a source needs of its Application. */
export interface SourceOwner {
    /** The Application's name (Helm's default release name). */
    name: string;
    /** The Application as named in messages. */
    who: string;
    /** The destination namespace, when set. */
    namespace?: string;
    /** The folder of each `ref` source (value files named `$<ref>/...`). */
    refs: Map<string, string>;
    /** The build environment of the source being rendered (./build-env.ts); unset: nothing is substituted. */
    env?: BuildEnv;
    /**
     * An `http(s)://` value file as Argo CD's repo server reads it (fetched under the network policy): the local
     * file; throws SourceNotRendered when it cannot be had. Unset: the run fetches nothing.
     */
    remoteFile?: (url: string) => string;
}

/**
 * Why a source cannot be rendered as Argo CD renders it, or what it needs cannot be had in this run: the
 * message continues the source's field (`.helm.valueFiles: ...`), and the Application fails closed on it
 * (gitops/argocd/applications.ts), instead of stopping the run.
 */
export class SourceNotRendered extends Error {}

/** A URL as a message shows it: no user information, query or fragment (either can hold a token). */
function shownFileUrl(url: string): string {
    try {
        const u = new URL(url);
        return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
        return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1").replace(/[?#].*$/, "");
    }
}

/** gobwas/glob without separators, as Argo CD's glob.Match: `*` and `?` cross `/`, `{a,b}`, `[...]`. */
export function argoGlob(pattern: string): RegExp {
    let re = "";
    let depth = 0;
    for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === "\\" && i + 1 < pattern.length) re += "\\" + pattern[++i];
        else if (c === "*") re += ".*";
        else if (c === "?") re += ".";
        else if (c === "{") {
            re += "(?:";
            depth++;
        } else if (c === "}" && depth > 0) {
            re += ")";
            depth--;
        } else if (c === "," && depth > 0) re += "|";
        else if (c === "[") {
            const end = pattern.indexOf("]", i + 1);
            if (end < 0) re += "\\[";
            else {
                re += "[" + pattern.slice(i + 1, end).replace(/^!/, "^") + "]";
                i = end;
            }
        } else re += c.replace(/[.+^$()|\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}

const MANIFEST_FILE = /\.(yaml|yml|json|jsonnet)$/;

function directoryFiles(dir: string, d: Obj): string[] {
    const recurse = d.recurse === true;
    const include = str(d.include) ?? "";
    const exclude = str(d.exclude) ?? "";
    const inc = include ? argoGlob(include) : undefined;
    const exc = exclude ? argoGlob(exclude) : undefined;
    const out: string[] = [];
    const walk = (cur: string) => {
        for (const e of fs
            .readdirSync(cur, { withFileTypes: true })
            .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
            const p = path.join(cur, e.name);
            if (e.isDirectory()) {
                if (recurse) walk(p);
                continue;
            }
            if (!MANIFEST_FILE.test(e.name)) continue;
            const rel = path.relative(dir, p).split(path.sep).join("/");
            if (exc && exc.test(rel)) continue;
            if (inc && !inc.test(rel)) continue;
            let text = "";
            try {
                text = fs.readFileSync(p, "utf8");
            } catch {
                continue;
            }
            if (text.includes("+argocd:skip-file-rendering")) continue;
            out.push(p);
        }
    };
    walk(dir);
    return out;
}

function pairs(v: unknown): Record<string, string> | undefined {
    const o = record(v);
    if (!o) return undefined;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, String(x)]));
}

/** Jsonnet TLAs or ext vars, their values substituted (argo-cd repository.go `makeJsonnetVM`). */
function jsonnetVars(v: unknown, env: BuildEnv | undefined): { name: string; value: string; code?: boolean }[] {
    return list(v)
        .map(record)
        .filter((x): x is Obj => !!x && typeof x.name === "string")
        .map((x) => ({ name: String(x.name), value: subst(String(x.value ?? ""), env), code: x.code === true }));
}

/**
 * A source's type as Argo CD discovers it (util/app/discovery, v3.6.1): from the files at the folder's root only
 * (never below it), in name order, a name ending in `Chart.yaml` says Helm and a kustomization file says
 * kustomize, the last one found winning; neither: a directory of manifests.
 */
export function discoveredType(dir: string): "kustomize" | "helm" | "directory" {
    let type: "kustomize" | "helm" | "directory" = "directory";
    const names = fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => !e.isDirectory())
        .map((e) => e.name)
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))); // filepath.Walk's byte order
    for (const name of names) {
        if (name.endsWith("Chart.yaml")) type = "helm";
        if (KUSTOMIZATION_FILES.includes(name)) type = "kustomize";
    }
    return type;
}

/** A string substituted with the build environment as Argo CD does (./build-env.ts), when there is one. */
function subst(s: string, env: BuildEnv | undefined): string {
    return env ? envsubst(s, env) : s;
}

function substValues(m: Record<string, string> | undefined, env: BuildEnv | undefined) {
    return m && Object.fromEntries(Object.entries(m).map(([k, v]) => [k, subst(v, env)]));
}

/**
 * A kustomize source: `kustomize build` with the Application's kustomize options; `images`, `commonLabels` and
 * (with `commonAnnotationsEnvsubst`) `commonAnnotations` values substituted (argo-cd util/kustomize/kustomize.go).
 */
export function kustomizeSource(source: Obj, dir: string, ctx: RenderContext, out: SourceOutput, env?: BuildEnv) {
    out.renders++;
    const k = record(source.kustomize) ?? {};
    const annotations = pairs(k.commonAnnotations);
    out.streams.push(
        ...helmChartsRefused(() =>
            renderKustomize(dir, ctx, {
                namePrefix: str(k.namePrefix),
                nameSuffix: str(k.nameSuffix),
                namespace: str(k.namespace),
                images: list(k.images)
                    .filter((x): x is string => typeof x === "string")
                    .map((x) => subst(x, env)),
                commonLabels: substValues(pairs(k.commonLabels), env),
                commonAnnotations: k.commonAnnotationsEnvsubst === true ? substValues(annotations, env) : annotations,
                patches: list(k.patches),
                components: list(k.components).filter((x): x is string => typeof x === "string"),
                replicas: list(k.replicas),
                enableHelm: ctx.kustomizeHelm === true,
            }),
        ),
    );
}

/**
 * kustomize's Helm chart generator (`helmCharts:`, or a HelmChartInflationGenerator in `generators:`, here or in a
 * base) that this run cannot render, as the source's fail-closed reason: refused without `--enable-helm` (Argo CD
 * passes it only when argocd-cm's `kustomize.buildOptions` carries it; an Application cannot ask for it), or with
 * it, a chart that cannot be had (gitops/render/kustomize-helm.ts).
 */
function helmChartsRefused(build: () => RenderedStream[]): RenderedStream[] {
    try {
        return build();
    } catch (e) {
        if (e instanceof ChartNotHad) throw new SourceNotRendered(e.message);
        if (e instanceof ToolFailed && /must specify --enable-helm/.test(e.message))
            throw new SourceNotRendered(
                ": the kustomization inflates Helm charts (helmCharts), which Argo CD builds only when argocd-cm's kustomize.buildOptions carries --enable-helm; check renders them when the repository holds that argocd-cm ConfigMap or the run says so (--kustomize-enable-helm), and does not guess this instance's setting",
            );
        if (e instanceof ToolFailed && /HelmChartInflationGenerator|helm pull|chart repository/.test(e.message))
            throw new SourceNotRendered(
                `: the kustomization's Helm chart generator failed: ${e.message.replace(/^[^:]*: /, "")}`,
            );
        throw e;
    }
}

/**
 * A Helm source's value files, absolute: relative to the chart, `$<ref>/...` in a `ref` source's folder, or an
 * `http(s)://` file fetched as Argo CD fetches it (its default `helm.valuesFileSchemes`), each added to `remote`.
 */
function valueFilesOf(h: Obj, dir: string, owner: SourceOwner, remote: Set<string>): string[] {
    return list(h.valueFiles)
        .filter((x): x is string => typeof x === "string")
        .map((raw) => {
            // A `$<ref>/...` file is substituted after its ref is resolved, any other before (argo-cd
            // reposerver/repository/repository.go `getResolvedValueFiles`).
            const m = /^\$([^/]+)\/(.*)$/.exec(raw);
            if (m && owner.refs.has(m[1])) return path.resolve(owner.refs.get(m[1])!, subst(m[2], owner.env));
            if (m && !owner.env?.has(m[1].replace(/^\{(.*)\}$/, "$1")))
                throw new BadInputError(
                    `${owner.who}: value file ${JSON.stringify(raw)} names a ref source the Application does not have`,
                );
            const f = subst(raw, owner.env);
            const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(f)?.[1].toLowerCase();
            // Argo CD reads a value file with a URL scheme (util/io/path ResolveValueFilePathOrUrl) only when the
            // scheme is allowed (argocd-cm `helm.valuesFileSchemes`, default https and http): those it fetches,
            // others only a Helm plugin of the repo server reads.
            if (scheme === "https" || scheme === "http") {
                if (!owner.remoteFile)
                    throw new SourceNotRendered(
                        `.helm.valueFiles: ${JSON.stringify(shownFileUrl(f))} is fetched over the network, which check does not do in this run (--offline, nothing cached)`,
                    );
                const local = owner.remoteFile(f);
                remote.add(local);
                return local;
            }
            if (scheme !== undefined && scheme.length > 1)
                throw new SourceNotRendered(
                    `.helm.valueFiles: ${JSON.stringify(shownFileUrl(f))} is read through the URL scheme "${scheme}", which only a Helm plugin of Argo CD's repo server reads (helm.valuesFileSchemes); check runs none`,
                );
            return path.resolve(dir, f);
        });
}

/** A Helm source: `helm template` of the chart with the Application's value files, values and parameters. */
export function helmSource(source: Obj, dir: string, owner: SourceOwner, ctx: RenderContext, out: SourceOutput): void {
    out.renders++;
    const h = record(source.helm) ?? {};
    const remote = new Set<string>();
    const valueFiles = valueFilesOf(h, dir, owner, remote);
    const fileParameters = list(h.fileParameters)
        .map(record)
        .filter((x): x is Obj => !!x && typeof x.name === "string" && typeof x.path === "string")
        .map((x) => ({ name: String(x.name), path: path.resolve(dir, subst(String(x.path), owner.env)) }));
    // Argo CD confines value files and file parameters to the repository (the chart's, or a `ref` source's); so
    // does check.
    const roots = [ctx.repoRoot, ...owner.refs.values()];
    for (const f of [...valueFiles.filter((v) => !remote.has(v)), ...fileParameters.map((p) => p.path)]) {
        const inside = (root: string) => {
            const r = path.relative(root, f);
            return !(r.startsWith("..") || path.isAbsolute(r));
        };
        if (!roots.some(inside))
            throw new BadInputError(
                `${owner.who}: a value file or file parameter is outside the repository (${rootInUse(ctx)})`,
            );
    }
    const valuesObject = record(h.valuesObject);
    const values = valuesObject
        ? JSON.stringify(valuesObject)
        : (str(h.values) ?? (record(h.values) ? JSON.stringify(h.values) : undefined));
    out.streams.push(
        ...renderHelm(dir, ctx, {
            releaseName: str(h.releaseName) || owner.name,
            // helm.namespace overrides the destination's (argo-cd GetNamespaceOrDefault).
            namespace: str(h.namespace) || owner.namespace,
            valueFiles,
            values,
            parameters: list(h.parameters)
                .map(record)
                .filter((x): x is Obj => !!x && typeof x.name === "string")
                .map((x) => ({
                    name: String(x.name),
                    // Substituted here, its commas escaped after (util/helm/cmd.go), as Argo CD does.
                    value: subst(String(x.value ?? ""), owner.env),
                    forceString: x.forceString === true,
                })),
            fileParameters,
            ignoreMissingValueFiles: h.ignoreMissingValueFiles === true,
            skipCrds: h.skipCrds === true,
            skipTests: h.skipTests === true,
            kubeVersion: str(h.kubeVersion)
                ? normalizeKubeVersion(str(h.kubeVersion)!, `${owner.who}: helm.kubeVersion`)
                : undefined,
            apiVersions: list(h.apiVersions).filter((x): x is string => typeof x === "string"),
        }),
    );
}

/** A directory source: its manifest files, its jsonnet files evaluated. */
export function directorySource(source: Obj, dir: string, ctx: RenderContext, out: SourceOutput, env?: BuildEnv) {
    const d = record(source.directory) ?? {};
    const j = record(d.jsonnet) ?? {};
    // A recursive directory source reads its subfolders as plain manifests, kustomizations and charts
    // included (Argo CD decides the type at the source's root only): none is rendered again with defaults.
    if (d.recurse === true) {
        const relDir = path.relative(ctx.repoRoot, dir).split(path.sep).join("/");
        for (const f of repoFolders(ctx))
            if (relDir === "" || f.startsWith(`${relDir}/`)) out.rendered.push(path.resolve(ctx.repoRoot, f));
    }
    const libs = list(j.libs).filter((x): x is string => typeof x === "string");
    for (const l of libs) {
        // Argo CD's jsonnet libs are folders of the repository (repository.go `makeJsonnetVM`: a path below the
        // repository root, read by go-jsonnet's FileImporter), never fetched; one outside it is refused.
        if (/^[a-z][a-z0-9+.-]*:\/\//i.test(l))
            throw new SourceNotRendered(
                `.directory.jsonnet.libs: ${JSON.stringify(shownFileUrl(l))} is a URL; Argo CD's jsonnet libs are folders of the repository, never fetched`,
            );
        const rel = path.relative(ctx.repoRoot, path.resolve(ctx.repoRoot, l));
        if (rel.startsWith("..") || path.isAbsolute(rel))
            throw new SourceNotRendered(
                `.directory.jsonnet.libs: ${JSON.stringify(l)} is outside the repository, which Argo CD refuses`,
            );
    }
    for (const f of directoryFiles(dir, d)) {
        if (f.endsWith(".jsonnet")) {
            out.renders++;
            let streams: RenderedStream[];
            try {
                streams = renderJsonnet(f, dir, ctx, {
                    libs: libs.map((l) => path.resolve(ctx.repoRoot, l)),
                    extVars: jsonnetVars(j.extVars, env),
                    tlas: jsonnetVars(j.tlas, env),
                });
            } catch (e) {
                // Argo CD fails to render the source too: the Application applies none of it, and fails closed.
                if (e instanceof JsonnetRefused)
                    throw new SourceNotRendered(`: jsonnet file ${JSON.stringify(ctx.show(f))}: ${e.reason}`);
                throw e;
            }
            if (streams.length === 0) (out.empty ??= []).push(f);
            out.streams.push(...streams);
        } else out.files.push(f);
    }
}
