/**
 * Argo CD's view of a repository: which objects an `Application` syncs, rendered as its repo server renders
 * them, and the Applications an `ApplicationSet` would create.
 *
 * - Sources: `spec.source` and `spec.sources[]` whose `path` is a folder of the checked repository. The type
 *   is the one the source names (`kustomize`, `helm`, `directory`, `plugin`), else discovered as Argo CD does
 *   at the folder's root: a kustomization, else `Chart.yaml`, else a directory of manifests.
 *   - directory: `.yaml`/`.yml`/`.json` files (and `.jsonnet`, evaluated), `recurse`, `include`/`exclude` globs
 *     matched against the path relative to the source folder (`*` crosses `/`, `{a,b}` alternatives), files
 *     holding `+argocd:skip-file-rendering` left out; `directory.jsonnet` ext vars, TLAs and libs;
 *   - kustomize: `kustomize build` with the Application's `namePrefix`, `nameSuffix`, `namespace`, `images`,
 *     `commonLabels`, `commonAnnotations`, `patches`, `components` and `replicas` applied first;
 *   - helm: `helm template` with `releaseName` (default: the Application's name), the destination namespace,
 *     `valueFiles` (relative to the chart; `$<ref>/...` from a `ref` source), `values`/`valuesObject`,
 *     `parameters`, `fileParameters`, `ignoreMissingValueFiles`, `skipCrds`, and the cluster's version and APIs
 *     (`kubeVersion`/`apiVersions`, else the run's: core/render/capabilities.ts).
 *   Sources that cannot be rendered here are named, never guessed: a chart from a Helm repository (`chart`),
 *   a path that is not in this repository, a config management plugin.
 * - Destination: a namespaced object without `metadata.namespace` lands in `spec.destination.namespace`.
 * - ApplicationSets: the `list` and git `directories` generators (`pathParamPrefix`, `values`), in the default
 *   template syntax or, with `goTemplate`, executed as Go templates with Argo CD's functions by the toolchain's
 *   appset-template (toolchain/appset-template); other generators, `elementsYaml` and `templatePatch` are
 *   reported as not expanded.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../errors";
import { compilePathPattern } from "../path-match";
import { normalizeKubeVersion } from "./capabilities";
import { RenderContext, RenderedStream, isChart, kustomizationFile, renderHelm, renderJsonnet, renderKustomize, repoFolders, runTool } from "./render";

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}
function str(v: unknown): string | undefined {
    return typeof v === "string" ? v : undefined;
}
function list(v: unknown): unknown[] {
    return Array.isArray(v) ? v : [];
}

export function isApplication(o: Obj): boolean {
    return o.kind === "Application" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}
export function isApplicationSet(o: Obj): boolean {
    return o.kind === "ApplicationSet" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}

/** Kinds that are cluster-scoped (no destination namespace applies); custom resources are taken as namespaced. */
export const CLUSTER_SCOPED = new Set([
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
    "PriorityClass",
    "RuntimeClass",
    "IngressClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "PodSecurityPolicy",
    "FlowSchema",
    "PriorityLevelConfiguration",
    "CertificateSigningRequest",
    "ComponentStatus",
    "ClusterIssuer",
]);

/** What one Application syncs. */
export interface ApplicationOutput {
    /** Files of directory sources (absolute): their objects are the Application's, read as manifests. */
    files: string[];
    /** Rendered streams (kustomize, Helm, jsonnet). */
    streams: RenderedStream[];
    /** Folders of its sources (absolute), so they are not rendered again with defaults. */
    rendered: string[];
    /** Renders run: kustomize builds, Helm templates, jsonnet evaluations. */
    renders: number;
    /** Sources not rendered here, each one line. */
    notes: string[];
    /** The destination namespace, when set. */
    namespace?: string;
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
        for (const e of fs.readdirSync(cur, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
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
    const o = obj(v);
    if (!o) return undefined;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, String(x)]));
}

function jsonnetVars(v: unknown): { name: string; value: string; code?: boolean }[] {
    return list(v)
        .map(obj)
        .filter((x): x is Obj => !!x && typeof x.name === "string")
        .map((x) => ({ name: String(x.name), value: String(x.value ?? ""), code: x.code === true }));
}

/** Renders (or lists) what an Application syncs. `appName` for messages and the default release name. */
export function applicationOutput(app: Obj, ctx: RenderContext): ApplicationOutput {
    const meta = obj(app.metadata) ?? {};
    const spec = obj(app.spec) ?? {};
    const appName = str(meta.name) ?? "(unnamed)";
    const namespace = str(obj(spec.destination)?.namespace) || undefined;
    const out: ApplicationOutput = { files: [], streams: [], rendered: [], renders: 0, notes: [], namespace };
    const sources = spec.sources !== undefined ? list(spec.sources).map(obj) : [obj(spec.source)];
    const refs = new Map<string, string>();
    for (const s of sources) if (s && typeof s.ref === "string") refs.set(s.ref, ctx.repoRoot);
    const who = `Application ${JSON.stringify(appName)}`;
    for (const source of sources) {
        if (!source) continue;
        if (typeof source.chart === "string") {
            out.notes.push(`${who}: not rendered: chart ${JSON.stringify(source.chart)} comes from a Helm repository (check uses no network)`);
            continue;
        }
        if (typeof source.path !== "string") continue; // a `ref` source of value files only
        const dir = path.resolve(ctx.repoRoot, source.path);
        const rel = path.relative(ctx.repoRoot, dir);
        if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
            out.notes.push(`${who}: not rendered: source path ${JSON.stringify(source.path)} is not a folder of this repository`);
            continue;
        }
        const explicit = ["helm", "kustomize", "directory", "plugin"].filter((t) => obj(source[t]) !== undefined);
        if (explicit.length > 1) throw new BadInputError(`${who}: its source sets more than one of ${explicit.join(", ")} (Argo CD refuses it)`);
        const type = explicit[0] ?? (kustomizationFile(dir) ? "kustomize" : isChart(dir) ? "helm" : "directory");
        if (type === "plugin") {
            out.notes.push(`${who}: not rendered: a config management plugin renders ${JSON.stringify(source.path)}`);
            continue;
        }
        out.rendered.push(dir);
        if (type === "kustomize") {
            out.renders++;
            const k = obj(source.kustomize) ?? {};
            out.streams.push(
                ...renderKustomize(dir, ctx, {
                    namePrefix: str(k.namePrefix),
                    nameSuffix: str(k.nameSuffix),
                    namespace: str(k.namespace),
                    images: list(k.images).filter((x): x is string => typeof x === "string"),
                    commonLabels: pairs(k.commonLabels),
                    commonAnnotations: pairs(k.commonAnnotations),
                    patches: list(k.patches),
                    components: list(k.components).filter((x): x is string => typeof x === "string"),
                    replicas: list(k.replicas),
                }),
            );
        } else if (type === "helm") {
            out.renders++;
            const h = obj(source.helm) ?? {};
            const valueFiles = list(h.valueFiles)
                .filter((x): x is string => typeof x === "string")
                .map((f) => {
                    const m = /^\$([^/]+)\/(.*)$/.exec(f);
                    if (m) {
                        const root = refs.get(m[1]);
                        if (!root) throw new BadInputError(`${who}: value file ${JSON.stringify(f)} names a ref source the Application does not have`);
                        return path.resolve(root, m[2]);
                    }
                    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(f)) throw new BadInputError(`${who}: value file ${JSON.stringify(f)} is fetched over the network, which check does not use`);
                    return path.resolve(dir, f);
                });
            const fileParameters = list(h.fileParameters)
                .map(obj)
                .filter((x): x is Obj => !!x && typeof x.name === "string" && typeof x.path === "string")
                .map((x) => ({ name: String(x.name), path: path.resolve(dir, String(x.path)) }));
            // Argo CD confines value files and file parameters to the repository; so does check.
            for (const f of [...valueFiles, ...fileParameters.map((p) => p.path)]) {
                const r = path.relative(ctx.repoRoot, f);
                if (r.startsWith("..") || path.isAbsolute(r)) throw new BadInputError(`${who}: a value file or file parameter is outside the repository`);
            }
            const valuesObject = obj(h.valuesObject);
            const values = valuesObject ? JSON.stringify(valuesObject) : (str(h.values) ?? (obj(h.values) ? JSON.stringify(h.values) : undefined));
            out.streams.push(
                ...renderHelm(dir, ctx, {
                    releaseName: str(h.releaseName) || appName,
                    namespace,
                    valueFiles,
                    values,
                    parameters: list(h.parameters)
                        .map(obj)
                        .filter((x): x is Obj => !!x && typeof x.name === "string")
                        .map((x) => ({ name: String(x.name), value: String(x.value ?? ""), forceString: x.forceString === true })),
                    fileParameters,
                    ignoreMissingValueFiles: h.ignoreMissingValueFiles === true,
                    skipCrds: h.skipCrds === true,
                    kubeVersion: str(h.kubeVersion) ? normalizeKubeVersion(str(h.kubeVersion)!, `${who}: helm.kubeVersion`) : undefined,
                    apiVersions: list(h.apiVersions).filter((x): x is string => typeof x === "string"),
                }),
            );
        } else {
            const d = obj(source.directory) ?? {};
            const j = obj(d.jsonnet) ?? {};
            for (const f of directoryFiles(dir, d)) {
                if (f.endsWith(".jsonnet")) {
                    out.renders++;
                    out.streams.push(
                        ...renderJsonnet(f, dir, ctx, {
                            libs: list(j.libs)
                                .filter((x): x is string => typeof x === "string")
                                .map((l) => path.resolve(ctx.repoRoot, l)),
                            extVars: jsonnetVars(j.extVars),
                            tlas: jsonnetVars(j.tlas),
                        }),
                    );
                } else out.files.push(f);
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------
// ApplicationSets

/** Argo CD's default template syntax: `{{ key }}` replaced in every string and map key; unknown keys stay as written. */
function substitute(v: unknown, params: Obj): unknown {
    if (typeof v === "string") {
        return v.replace(/\{\{([^{}]*)\}\}/g, (all, expr: string) => {
            const value = params[expr.trim()];
            return typeof value === "string" ? value : all; // fasttemplate leaves unknown keys as they are
        });
    }
    if (Array.isArray(v)) return v.map((x) => substitute(x, params));
    const o = obj(v);
    if (o) return Object.fromEntries(Object.entries(o).map(([k, x]) => [substitute(k, params) as string, substitute(x, params)]));
    return v;
}

/**
 * `goTemplate: true`: every string of the template executed as a Go template by the toolchain's
 * appset-template (text/template with sprig and Argo CD's functions, `goTemplateOptions` applied), one run for
 * all parameter sets of a generator. A set whose template does not execute is named, never guessed.
 */
function goTemplates(template: Obj, params: Obj[], spec: Obj, values: Record<string, string> | undefined, ctx: RenderContext, who: string): { apps: Obj[]; failed: number; reason?: string } {
    if (params.length === 0) return { apps: [], failed: 0 };
    const options = list(spec.goTemplateOptions).filter((x): x is string => typeof x === "string");
    const input = JSON.stringify({ template, params, options, ...(values ? { values } : {}) });
    const out = runTool("appset-template", [], `${who} (goTemplate)`, ctx, { cwd: ctx.repoRoot, input });
    const results = (JSON.parse(out) as { results: { app?: Obj; error?: string }[] }).results;
    const apps = results.map((r) => r.app).filter((a): a is Obj => !!obj(a));
    const firstError = results.find((r) => typeof r.error === "string")?.error;
    return { apps, failed: results.length - apps.length, reason: firstError };
}

/** Argo CD's `normalize` (SanitizeName): lower case, [^-a-z0-9.] as '-', at most 253 characters, no '-' or '.' at either end. */
function sanitizeName(name: string): string {
    return name
        .toLowerCase()
        .replace(/[^-a-z0-9.]/g, "-")
        .slice(0, 253)
        .replace(/^[-.]+|[-.]+$/g, "");
}

/** A list element as the default syntax sees it: string values, a `values` map as `values.<key>`; undefined when Argo CD refuses it. */
function flatElement(e: Obj): Obj | undefined {
    const out: Obj = {};
    for (const [k, v] of Object.entries(e)) {
        if (k === "values") {
            const m = obj(v);
            if (!m) return undefined;
            for (const [vk, vv] of Object.entries(m)) {
                if (typeof vv !== "string") return undefined;
                out[`values.${vk}`] = vv;
            }
        } else if (typeof v === "string") out[k] = v;
        else return undefined;
    }
    return out;
}

/** A git directories generator's parameters for one folder (with `pathParamPrefix`, as Argo CD names them). */
function pathParams(p: string, goTemplate: boolean, prefix: string): Obj {
    const segments = p.split("/");
    const basename = segments[segments.length - 1];
    const normalized = sanitizeName(basename);
    if (goTemplate) {
        const params = { path: p, basename, basenameNormalized: normalized, segments };
        return prefix ? { [prefix]: { path: params } } : { path: params };
    }
    const name = prefix ? `${prefix}.path` : "path";
    const out: Obj = { [name]: p, [`${name}.basename`]: basename, [`${name}.basenameNormalized`]: normalized };
    segments.forEach((s, i) => {
        if (s !== "") out[`${name}[${i}]`] = s;
    });
    return out;
}

export interface AppSetExpansion {
    applications: Obj[];
    /** Generators not expanded, one line each. */
    notExpanded: string[];
}

/** The Applications an ApplicationSet creates from its list and git-directory generators. */
export function expandApplicationSet(appset: Obj, ctx: RenderContext): AppSetExpansion {
    const meta = obj(appset.metadata) ?? {};
    const spec = obj(appset.spec) ?? {};
    const name = str(meta.name) ?? "(unnamed)";
    const goTemplate = spec.goTemplate === true;
    const template = obj(spec.template) ?? {};
    const result: AppSetExpansion = { applications: [], notExpanded: [] };
    const dirs = () => repoFolders(ctx);
    for (const g of list(spec.generators).map(obj)) {
        if (!g) continue;
        const kinds = Object.keys(g).filter((k) => k !== "selector" && k !== "values");
        const kind = kinds[0] ?? "(empty)";
        let params: Obj[] | undefined;
        let values: Record<string, string> | undefined;
        if (kind === "list" && kinds.length === 1) {
            const l = obj(g.list) ?? {};
            if (l.elementsYaml !== undefined || l.template !== undefined) params = undefined;
            else if (goTemplate) params = list(l.elements).map((e) => obj(e) ?? {});
            else {
                // The default syntax takes string values only (a `values` map as `values.<key>`); Argo CD fails the generator otherwise.
                const flat = list(l.elements).map((e) => flatElement(obj(e) ?? {}));
                if (flat.some((x) => x === undefined)) {
                    result.notExpanded.push(`ApplicationSet ${JSON.stringify(name)}: a list element has a value that is not a string, which Argo CD refuses without goTemplate; it creates no Application from it`);
                    continue;
                }
                params = flat as Obj[];
            }
        } else if (kind === "git" && kinds.length === 1 && obj(g.git)?.directories !== undefined && obj(g.git)?.files === undefined) {
            const git = obj(g.git)!;
            const entries = list(git.directories)
                .map(obj)
                .filter((x): x is Obj => !!x && typeof x.path === "string");
            const all = dirs();
            const chosen = new Set<string>();
            for (const e of entries.filter((x) => x.exclude !== true)) for (const d of all) if (globDir(String(e.path)).test(d)) chosen.add(d);
            for (const e of entries.filter((x) => x.exclude === true)) for (const d of [...chosen]) if (globDir(String(e.path)).test(d)) chosen.delete(d);
            const prefix = str(git.pathParamPrefix) ?? "";
            params = [...chosen].sort().map((d) => pathParams(d, goTemplate, prefix));
            const v = obj(git.values);
            if (v) values = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x ?? "")]));
        }
        if (!params) {
            result.notExpanded.push(`ApplicationSet ${JSON.stringify(name)}: the ${kind} generator is not expanded (check expands list and git directories generators)`);
            continue;
        }
        if (spec.templatePatch !== undefined) {
            result.notExpanded.push(`ApplicationSet ${JSON.stringify(name)}: templatePatch is not applied, so its Applications are not expanded`);
            break;
        }
        let apps: Obj[];
        if (goTemplate) {
            const r = goTemplates(template, params, spec, values, ctx, `ApplicationSet ${JSON.stringify(name)}`);
            if (r.failed > 0)
                result.notExpanded.push(`ApplicationSet ${JSON.stringify(name)}: ${r.failed} of its ${kind} generator's Applications do not render (${r.reason ?? "template error"}); Argo CD creates none of them either`);
            apps = r.apps;
        } else {
            apps = params.map((p) => {
                const flat = { ...p };
                // Flat values: rendered with the generator's parameters, then offered as `values.<key>`.
                for (const [k, v] of Object.entries(values ?? {})) flat[`values.${k}`] = substitute(v, p);
                return substitute(template, flat) as Obj;
            });
        }
        for (const app of apps) {
            const m = obj(app.metadata) ?? {};
            result.applications.push({ apiVersion: "argoproj.io/v1alpha1", kind: "Application", ...app, metadata: { ...m, namespace: str(m.namespace) ?? str(meta.namespace) } });
        }
    }
    return result;
}

/** A git directories `path` glob: Go's path.Match, as Argo CD filters the folders; a malformed one matches nothing (Argo CD logs it and skips it). */
function globDir(pattern: string): { test(dir: string): boolean } {
    const compiled = compilePathPattern(pattern);
    return { test: (dir) => compiled?.matches(dir) ?? false };
}
