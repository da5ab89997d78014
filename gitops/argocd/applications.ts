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
 *     (`kubeVersion`/`apiVersions`, else the run's: gitops/render/capabilities.ts).
 *   Sources that cannot be rendered here are named (`notes`), never guessed: a chart from a Helm repository
 *   (`chart`), a path that is not in this repository, a config management plugin; the Application then fails
 *   closed (policies/argocd-app-rendered.ts).
 * - Destination: a namespaced object without `metadata.namespace` lands in `spec.destination.namespace`.
 * - ApplicationSets: the `list` (`elements`, `elementsYaml`) and git `directories` and `files` generators
 *   (`pathParamPrefix`, `values`), `matrix` and `merge` of those (one nesting level; at most MAX_APPLICATIONS
 *   Applications a set), in the default
 *   template syntax or, with `goTemplate`, executed as Go templates with Argo CD's functions by the toolchain's
 *   appset-template (toolchain/appset-template); what is not expanded (other generators, a failing template)
 *   is named (`notExpanded`) and the set fails closed (policies/argocd-app-rendered.ts).
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { firstKubeYamlValue } from "../decode/kube-yaml";
import { compilePathPattern } from "./path-match";
import { normalizeKubeVersion } from "../render/capabilities";
import { RenderContext, RenderedStream, runTool } from "../render/render";
import { repoFiles, repoFolders } from "../render/repo-tree";
import { KUSTOMIZATION_FILES, renderKustomize } from "../render/kustomize";
import { renderHelm } from "../render/helm";
import { renderJsonnet } from "../render/jsonnet";
import { extended } from "../../support/shapes";
import { list, record, str } from "../../support/records";

type Obj = Record<string, unknown>;

export function isApplication(o: Obj): boolean {
    return o.kind === "Application" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}
export function isApplicationSet(o: Obj): boolean {
    return o.kind === "ApplicationSet" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("argoproj.io/");
}

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
    /**
     * Why some of what it applies could not be computed here, one line each, naming the source's field
     * (`spec.source`, `spec.sources[1]`) and quoting (JSON) every value it shows: the Application fails closed
     * (argocd-app-rendered).
     */
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

function jsonnetVars(v: unknown): { name: string; value: string; code?: boolean }[] {
    return list(v)
        .map(record)
        .filter((x): x is Obj => !!x && typeof x.name === "string")
        .map((x) => ({ name: String(x.name), value: String(x.value ?? ""), code: x.code === true }));
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

/** Renders (or lists) what an Application syncs. `appName` for messages and the default release name. */
export function applicationOutput(app: Obj, ctx: RenderContext): ApplicationOutput {
    const meta = record(app.metadata) ?? {};
    const spec = record(app.spec) ?? {};
    const appName = str(meta.name) ?? "(unnamed)";
    const namespace = str(record(spec.destination)?.namespace) || undefined;
    const out: ApplicationOutput = { files: [], streams: [], rendered: [], renders: 0, notes: [], namespace };
    const sources = spec.sources !== undefined ? list(spec.sources).map(record) : [record(spec.source)];
    const refs = new Map<string, string>();
    for (const s of sources) if (s && typeof s.ref === "string") refs.set(s.ref, ctx.repoRoot);
    const who = `Application ${JSON.stringify(appName)}`;
    for (const [i, source] of sources.entries()) {
        const field = spec.sources !== undefined ? `spec.sources[${i}]` : "spec.source";
        if (!source) {
            if (spec.sources !== undefined || spec.source !== undefined)
                out.notes.push(`${field} is not an object, so what it applies is not known`);
            continue;
        }
        if (typeof source.chart === "string") {
            out.notes.push(
                `${field} is chart ${JSON.stringify(source.chart)} from a Helm repository, which check does not read (it uses no network)`,
            );
            continue;
        }
        if (typeof source.path !== "string") continue; // a `ref` source of value files only
        const dir = path.resolve(ctx.repoRoot, source.path);
        const rel = path.relative(ctx.repoRoot, dir);
        if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
            out.notes.push(
                `${field}.path ${JSON.stringify(source.path)} is not a folder of this repository (another repository's path is not read)`,
            );
            continue;
        }
        const explicit = ["helm", "kustomize", "directory", "plugin"].filter((t) => record(source[t]) !== undefined);
        if (explicit.length > 1)
            throw new BadInputError(
                `${who}: its source sets more than one of ${explicit.join(", ")} (Argo CD refuses it)`,
            );
        const type = explicit[0] ?? discoveredType(dir);
        if (type === "plugin") {
            out.notes.push(
                `${field}.plugin: a config management plugin renders ${JSON.stringify(source.path)}, which check does not run`,
            );
            continue;
        }
        out.rendered.push(dir);
        if (type === "kustomize") {
            out.renders++;
            const k = record(source.kustomize) ?? {};
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
            const h = record(source.helm) ?? {};
            const valueFiles = list(h.valueFiles)
                .filter((x): x is string => typeof x === "string")
                .map((f) => {
                    const m = /^\$([^/]+)\/(.*)$/.exec(f);
                    if (m) {
                        const root = refs.get(m[1]);
                        if (!root)
                            throw new BadInputError(
                                `${who}: value file ${JSON.stringify(f)} names a ref source the Application does not have`,
                            );
                        return path.resolve(root, m[2]);
                    }
                    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(f))
                        throw new BadInputError(
                            `${who}: value file ${JSON.stringify(f)} is fetched over the network, which check does not use`,
                        );
                    return path.resolve(dir, f);
                });
            const fileParameters = list(h.fileParameters)
                .map(record)
                .filter((x): x is Obj => !!x && typeof x.name === "string" && typeof x.path === "string")
                .map((x) => ({ name: String(x.name), path: path.resolve(dir, String(x.path)) }));
            // Argo CD confines value files and file parameters to the repository; so does check.
            for (const f of [...valueFiles, ...fileParameters.map((p) => p.path)]) {
                const r = path.relative(ctx.repoRoot, f);
                if (r.startsWith("..") || path.isAbsolute(r))
                    throw new BadInputError(`${who}: a value file or file parameter is outside the repository`);
            }
            const valuesObject = record(h.valuesObject);
            const values = valuesObject
                ? JSON.stringify(valuesObject)
                : (str(h.values) ?? (record(h.values) ? JSON.stringify(h.values) : undefined));
            out.streams.push(
                ...renderHelm(dir, ctx, {
                    releaseName: str(h.releaseName) || appName,
                    namespace,
                    valueFiles,
                    values,
                    parameters: list(h.parameters)
                        .map(record)
                        .filter((x): x is Obj => !!x && typeof x.name === "string")
                        .map((x) => ({
                            name: String(x.name),
                            value: String(x.value ?? ""),
                            forceString: x.forceString === true,
                        })),
                    fileParameters,
                    ignoreMissingValueFiles: h.ignoreMissingValueFiles === true,
                    skipCrds: h.skipCrds === true,
                    kubeVersion: str(h.kubeVersion)
                        ? normalizeKubeVersion(str(h.kubeVersion)!, `${who}: helm.kubeVersion`)
                        : undefined,
                    apiVersions: list(h.apiVersions).filter((x): x is string => typeof x === "string"),
                }),
            );
        } else {
            const d = record(source.directory) ?? {};
            const j = record(d.jsonnet) ?? {};
            // A recursive directory source reads its subfolders as plain manifests, kustomizations and charts
            // included (Argo CD decides the type at the source's root only): none is rendered again with defaults.
            if (d.recurse === true) {
                const relDir = path.relative(ctx.repoRoot, dir).split(path.sep).join("/");
                for (const f of repoFolders(ctx))
                    if (relDir === "" || f.startsWith(`${relDir}/`)) out.rendered.push(path.resolve(ctx.repoRoot, f));
            }
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
    const o = record(v);
    if (o)
        return Object.fromEntries(
            Object.entries(o).map(([k, x]) => [substitute(k, params) as string, substitute(x, params)]),
        );
    return v;
}

/**
 * `goTemplate: true`: every string of the template executed as a Go template by the toolchain's
 * appset-template (text/template with sprig and Argo CD's functions, `goTemplateOptions` applied), one run for
 * all parameter sets of a generator. A set whose template does not execute is named, never guessed.
 */
function goTemplates(
    template: Obj,
    params: Obj[],
    spec: Obj,
    values: Record<string, string> | undefined,
    ctx: RenderContext,
    who: string,
): { apps: Obj[]; failed: number; reason?: string } {
    if (params.length === 0) return { apps: [], failed: 0 };
    const options = list(spec.goTemplateOptions).filter((x): x is string => typeof x === "string");
    const input = JSON.stringify({ template, params, options, ...(values ? { values } : {}) });
    const out = runTool("appset-template", [], `${who} (goTemplate)`, ctx, { cwd: ctx.repoRoot, input });
    const results = (JSON.parse(out) as { results: { app?: Obj; error?: string }[] }).results;
    const apps = results.map((r) => r.app).filter((a): a is Obj => !!record(a));
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
            const m = record(v);
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
    /**
     * Why some of its Applications could not be computed here (a generator or feature check does not expand,
     * a template that does not execute), one line each naming the field (`spec.generators[1]`): the set fails
     * closed (argocd-app-rendered).
     */
    notExpanded: string[];
}

/** What an ApplicationSet's expansion needs besides the generator at hand. */
interface GenEnv {
    spec: Obj;
    goTemplate: boolean;
    ctx: RenderContext;
    who: string;
}

/** A generator's parameter sets (with the git generator's `values`, applied with the template), or why check cannot compute them. */
type Generated = { params: Obj[]; values?: Record<string, string> } | { reason: string };

/** The generators check expands (matrix and merge nest them one level, as Argo CD allows). */
const NESTING = new Set(["matrix", "merge"]);

/** Argo CD's `%v` of a parameter value (non-goTemplate matrix combination): strings as they are, numbers as Go prints them. */
function goString(v: unknown): string {
    return typeof v === "string"
        ? v
        : typeof v === "number"
          ? goFloat(v)
          : v === null || v === undefined
            ? "<nil>"
            : typeof v === "object"
              ? JSON.stringify(v)
              : String(v);
}

/** mergo.Merge(dst, src, WithOverride) on parameter maps: maps merged key by key, a non-empty src value overrides. */
function mergeOverride(dst: Obj, src: Obj): Obj {
    const out: Obj = { ...dst };
    for (const [k, v] of Object.entries(src)) {
        const d = out[k];
        if (record(d) && record(v)) out[k] = mergeOverride(record(d)!, record(v)!);
        else if (
            !(k in out) ||
            !(
                v === "" ||
                v === 0 ||
                v === false ||
                v === null ||
                v === undefined ||
                (Array.isArray(v) && v.length === 0) ||
                (record(v) && Object.keys(v as Obj).length === 0)
            )
        )
            out[k] = v;
    }
    return out;
}

/** Every string (and map key) of `value` rendered with each parameter set: Go templates by the toolchain's helper, else Argo CD's default syntax. */
function interpolate(value: Obj, sets: Obj[], env: GenEnv): ({ value: Obj } | { error: string })[] {
    if (!env.goTemplate) return sets.map((p) => ({ value: substitute(value, p) as Obj }));
    if (sets.length === 0) return [];
    const options = list(env.spec.goTemplateOptions).filter((x): x is string => typeof x === "string");
    const out = runTool("appset-template", [], `${env.who} (goTemplate)`, env.ctx, {
        cwd: env.ctx.repoRoot,
        input: JSON.stringify({ template: value, params: sets, options }),
    });
    const results = (JSON.parse(out) as { results: { app?: Obj; error?: string }[] }).results;
    return results.map((r) => (record(r.app) ? { value: r.app! } : { error: r.error ?? "template error" }));
}

function generatorParams(g: Obj | undefined, field: string, depth: number, env: GenEnv): Generated {
    const { goTemplate, ctx } = env;
    if (!g) return { reason: `${field} is not an object` };
    const kinds = Object.keys(g).filter((k) => k !== "selector" && k !== "values");
    const kind = kinds[0] ?? "(empty)";
    if (g.selector !== undefined)
        return { reason: `${field}.selector is not applied by check, so the generator is not expanded` };
    if (kinds.length !== 1)
        return {
            reason: `${field} names ${kinds.length === 0 ? "no generator" : "more than one generator"}, which Argo CD refuses`,
        };
    if (kind === "list" && record(g.list)?.template === undefined) {
        const l = record(g.list) ?? {};
        let params: Obj[];
        if (goTemplate) params = list(l.elements).map((e) => record(e) ?? {});
        else {
            // The default syntax takes string values only (a `values` map as `values.<key>`); Argo CD fails the generator otherwise.
            const flat = list(l.elements).map((e) => flatElement(record(e) ?? {}));
            if (flat.some((x) => x === undefined))
                return {
                    reason: `${field}.list has an element with a value that is not a string, which Argo CD refuses without goTemplate (the generator fails)`,
                };
            params = flat as Obj[];
        }
        // elementsYaml: a YAML list of maps, appended as they are (in either syntax), as Argo CD does.
        if (l.elementsYaml !== undefined) {
            const yaml = typeof l.elementsYaml === "string" ? firstKubeYamlValue(l.elementsYaml) : undefined;
            const elements =
                yaml?.ok && (yaml.value === null || Array.isArray(yaml.value)) ? list(yaml.value) : undefined;
            if (!elements || !elements.every((e) => e === null || record(e)))
                return {
                    reason: `${field}.list.elementsYaml is not a YAML list of maps, which fails the generator in Argo CD`,
                };
            params.push(...elements.map((e) => record(e) ?? {}));
        }
        return { params };
    }
    if (
        kind === "git" &&
        record(g.git)?.template === undefined &&
        (list(record(g.git)?.directories).length > 0 || list(record(g.git)?.files).length > 0)
    ) {
        const git = record(g.git)!;
        const prefix = str(git.pathParamPrefix) ?? "";
        let params: Obj[];
        // Directories take precedence over files when both are set, as in Argo CD.
        if (list(git.directories).length > 0) {
            const entries = list(git.directories)
                .map(record)
                .filter((x): x is Obj => !!x && typeof x.path === "string");
            const all = repoFolders(ctx);
            const chosen = new Set<string>();
            for (const e of entries.filter((x) => x.exclude !== true))
                for (const d of all) if (globDir(String(e.path)).test(d)) chosen.add(d);
            for (const e of entries.filter((x) => x.exclude === true))
                for (const d of [...chosen]) if (globDir(String(e.path)).test(d)) chosen.delete(d);
            params = [...chosen].sort().map((d) => pathParams(d, goTemplate, prefix));
        } else {
            const files = gitFilesParams(git, ctx, goTemplate, prefix, field);
            if (typeof files === "string") return { reason: files };
            params = files;
        }
        const v = record(git.values);
        if (v && depth > 0)
            return { reason: `${field}.git.values inside a matrix or merge generator are not applied by check` };
        return {
            params,
            ...(v ? { values: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x ?? "")])) } : {}),
        };
    }
    if (NESTING.has(kind)) {
        // Argo CD nests matrix and merge one level: a second level holds only terminal generators.
        if (depth >= 2) return { reason: `${field} nests ${kind} deeper than Argo CD allows (it fails the generator)` };
        const children = list(record(g[kind])?.generators);
        if (kind === "matrix") {
            if (children.length !== 2)
                return {
                    reason: `${field}.matrix has ${children.length} generators; Argo CD requires exactly two (it fails the generator)`,
                };
            const first = generatorParams(record(children[0]), `${field}.matrix.generators[0]`, depth + 1, env);
            if ("reason" in first) return first;
            const second = record(children[1]);
            const secondField = `${field}.matrix.generators[1]`;
            // The second generator sees each parameter set of the first when it uses templates, as in Argo CD.
            const templated = JSON.stringify(second ?? null).includes("{{");
            const seconds: Generated[] = [];
            if (!templated || first.params.length === 0) {
                const once = generatorParams(second, secondField, depth + 1, env);
                for (let i = 0; i < first.params.length; i++) seconds.push(once);
                if ("reason" in once) return once;
            } else {
                const rendered = interpolate(second ?? {}, first.params, env);
                for (const r of rendered) {
                    if ("error" in r)
                        return {
                            reason: `${secondField} does not render with the first generator's parameters (${r.error}), which fails the generator in Argo CD`,
                        };
                    const one = generatorParams(r.value, secondField, depth + 1, env);
                    if ("reason" in one) return one;
                    seconds.push(one);
                }
            }
            const out: Obj[] = [];
            for (const [i, a] of first.params.entries()) {
                const bs = (seconds[i] as { params: Obj[] }).params;
                if (out.length + bs.length > MAX_APPLICATIONS)
                    throw new BadInputError(
                        `${env.who}: ${field} generates more than ${MAX_APPLICATIONS} Applications (check's limit)`,
                    );
                for (const b of bs) {
                    if (goTemplate) out.push(mergeOverride(mergeOverride({}, b), a));
                    else {
                        const combined: Obj = {};
                        for (const [k, v] of Object.entries(a)) combined[k] = goString(v);
                        for (const [k, v] of Object.entries(b)) {
                            if (k in combined && combined[k] !== goString(v))
                                return {
                                    reason: `${field}.matrix: both generators set the parameter ${JSON.stringify(k)} to different values, which fails the generator in Argo CD`,
                                };
                            combined[k] = goString(v);
                        }
                        out.push(combined);
                    }
                }
            }
            return { params: out };
        }
        // merge: the first generator's sets, each overridden by the set of every later generator with the same merge-key values.
        if (children.length < 2)
            return { reason: `${field}.merge has fewer than two generators, which fails the generator in Argo CD` };
        const keys = [
            ...new Set(list(record(g.merge)?.mergeKeys).filter((k): k is string => typeof k === "string")),
        ].sort();
        if (keys.length === 0)
            return { reason: `${field}.merge has no mergeKeys, which fails the generator in Argo CD` };
        const byKey = (sets: Obj[]): Map<string, Obj> | undefined => {
            const m = new Map<string, Obj>();
            for (const set of sets) {
                const k = JSON.stringify(Object.fromEntries(keys.map((key) => [key, set[key] ?? null])));
                if (m.has(k)) return undefined;
                m.set(k, set);
            }
            return m;
        };
        const all: Obj[][] = [];
        for (const [i, c] of children.entries()) {
            const r = generatorParams(record(c), `${field}.merge.generators[${i}]`, depth + 1, env);
            if ("reason" in r) return r;
            all.push(r.params);
        }
        const base = byKey(all[0]);
        if (!base)
            return {
                reason: `${field}.merge: two parameter sets of generators[0] have the same merge-key values, which fails the generator in Argo CD`,
            };
        for (const [i, sets] of all.slice(1).entries()) {
            const other = byKey(sets);
            if (!other)
                return {
                    reason: `${field}.merge: two parameter sets of generators[${i + 1}] have the same merge-key values, which fails the generator in Argo CD`,
                };
            for (const [k, set] of base) {
                const o = other.get(k);
                if (o) base.set(k, goTemplate ? mergeOverride(set, o) : extended(set, o));
            }
        }
        return { params: [...base.values()] };
    }
    const what = kind === "list" || kind === "git" ? " with its own template, or without directories and files" : "";
    return { reason: `${field} (${JSON.stringify(kind)} generator${what}) is not expanded by check` };
}

/** The Applications an ApplicationSet creates from its list, git (directories, files), matrix and merge generators. */
export function expandApplicationSet(appset: Obj, ctx: RenderContext): AppSetExpansion {
    const meta = record(appset.metadata) ?? {};
    const spec = record(appset.spec) ?? {};
    const name = str(meta.name) ?? "(unnamed)";
    const goTemplate = spec.goTemplate === true;
    const template = record(spec.template) ?? {};
    const result: AppSetExpansion = { applications: [], notExpanded: [] };
    if (spec.templatePatch !== undefined) {
        result.notExpanded.push("spec.templatePatch is not applied by check, so none of its Applications is expanded");
        return result;
    }
    const env: GenEnv = { spec, goTemplate, ctx, who: `ApplicationSet ${JSON.stringify(name)}` };
    let generated = 0;
    for (const [i, g] of list(spec.generators).entries()) {
        const field = `spec.generators[${i}]`;
        const r = generatorParams(record(g), field, 0, env);
        if ("reason" in r) {
            result.notExpanded.push(r.reason);
            continue;
        }
        const { params, values } = r;
        if (params.length > MAX_APPLICATIONS)
            throw new BadInputError(
                `${env.who}: ${field} generates more than ${MAX_APPLICATIONS} Applications (check's limit)`,
            );
        generated += params.length;
        if (generated > MAX_APPLICATIONS)
            throw new BadInputError(
                `${env.who}: its generators create more than ${MAX_APPLICATIONS} Applications (check's limit)`,
            );
        let apps: Obj[];
        if (goTemplate) {
            const t = goTemplates(template, params, spec, values, ctx, env.who);
            if (t.failed > 0)
                result.notExpanded.push(
                    `spec.template: ${t.failed} of the Applications of ${field} do not render (${t.reason ?? "template error"}), so Argo CD creates none of them`,
                );
            apps = t.apps;
        } else {
            apps = params.map((p) => {
                const flat = { ...p };
                // Flat values: rendered with the generator's parameters, then offered as `values.<key>`.
                for (const [k, v] of Object.entries(values ?? {})) flat[`values.${k}`] = substitute(v, p);
                return substitute(template, flat) as Obj;
            });
        }
        for (const app of apps) {
            const m = record(app.metadata) ?? {};
            // Argo CD creates every Application in the ApplicationSet's namespace, whatever the template says.
            result.applications.push({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Application",
                ...app,
                metadata: extended(m, { namespace: str(meta.namespace) }),
            });
        }
    }
    return result;
}

/** At most this many Applications from one ApplicationSet: a larger set is bad input (exit 2), never half-judged. */
export const MAX_APPLICATIONS = 10_000;

/** At most this many bytes of one git files generator file (Argo CD reads small JSON/YAML files). */
const MAX_PARAM_FILE_BYTES = 1 << 20;
/** At most this many bytes of all the files one git files generator matches (a bad input beyond: exit 2). */
const MAX_PARAM_FILES_BYTES = 64 << 20;

/**
 * A git files `path` as Argo CD's repo server matches it (`git ls-files -- <pattern>`, a git pathspec): without
 * wildcards, the file itself or every file below that folder; with them, `*` and `?` also cross `/`, `[...]`
 * a class.
 */
function gitPathspec(pattern: string): RegExp {
    const p = pattern.replace(/^\.\//, "");
    if (!/[*?[]/.test(p)) {
        const lit = p.replace(/\/+$/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        return new RegExp(`^${lit}(?:/.*)?$`);
    }
    let re = "";
    for (let i = 0; i < p.length; i++) {
        const c = p[i];
        if (c === "*") re += ".*";
        else if (c === "?") re += ".";
        else if (c === "[") {
            const end = p.indexOf("]", i + 2);
            if (end < 0) re += "\\[";
            else {
                re +=
                    "[" +
                    p
                        .slice(i + 1, end)
                        .replace(/^!/, "^")
                        .replace(/\\/g, "\\\\") +
                    "]";
                i = end;
            }
        } else if (c === "\\" && i + 1 < p.length) re += "\\" + p[++i];
        else re += c.replace(/[.+^${}()|\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}

/** Go's `%v` of a float64 (numbers in Argo CD's flattened parameters): shortest digits, `%e` form below 1e-4 and from 1e6 (`1e+06`). */
export function goFloat(n: number): string {
    if (!Number.isFinite(n)) return n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN";
    if (n === 0) return Object.is(n, -0) ? "-0" : "0";
    const [mant, ex] = n.toExponential().split("e"); // shortest round-trip digits, as Go's shortest formatting
    const x = Number(ex);
    if (x < -4 || x >= 6) return `${mant}e${x < 0 ? "-" : "+"}${String(Math.abs(x)).padStart(2, "0")}`;
    return String(n);
}

/** jeremywohl/flatten (DotStyle) then `%v`, as Argo CD flattens a git file's object for the default syntax. */
function flattenParams(v: unknown, prefix: string, out: Obj): void {
    if (Array.isArray(v)) v.forEach((x, i) => flattenParams(x, prefix === "" ? String(i) : `${prefix}.${i}`, out));
    else if (record(v))
        for (const [k, x] of Object.entries(record(v)!)) flattenParams(x, prefix === "" ? k : `${prefix}.${k}`, out);
    else out[prefix] = v === null ? "<nil>" : typeof v === "number" ? goFloat(v) : String(v);
}

/** A file's parameters (Argo CD's git files generator): its object, or each object of its list, with the path parameters. */
function gitFilesParams(
    git: Obj,
    ctx: RenderContext,
    goTemplate: boolean,
    prefix: string,
    field: string,
): Obj[] | string {
    const entries = list(git.files)
        .map(record)
        .filter((x): x is Obj => !!x && typeof x.path === "string");
    const root = ctx.repoRoot;
    const all = repoFiles(ctx);
    const chosen = new Set<string>();
    for (const e of entries.filter((x) => x.exclude !== true))
        for (const f of all) if (gitPathspec(String(e.path)).test(f)) chosen.add(f);
    for (const e of entries.filter((x) => x.exclude === true))
        for (const f of [...chosen]) if (gitPathspec(String(e.path)).test(f)) chosen.delete(f);
    const out: Obj[] = [];
    let total = 0;
    for (const file of [...chosen].sort()) {
        let text: string;
        const fd = fs.openSync(path.join(root, file), fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
        try {
            const buf = Buffer.alloc(MAX_PARAM_FILE_BYTES + 1);
            let n = 0;
            for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
            if (n > MAX_PARAM_FILE_BYTES)
                return `${field}.git.files: ${JSON.stringify(file)} is larger than ${MAX_PARAM_FILE_BYTES} bytes, which check does not read`;
            total += n;
            if (total > MAX_PARAM_FILES_BYTES)
                throw new BadInputError(
                    `${ctx.show(path.resolve(root))}: ${field}.git.files matches more than ${MAX_PARAM_FILES_BYTES} bytes of files (check's limit)`,
                );
            text = buf.subarray(0, n).toString("utf8");
        } finally {
            fs.closeSync(fd);
        }
        const yaml = firstKubeYamlValue(text);
        const objects = !yaml.ok
            ? undefined
            : yaml.value === null
              ? [{}]
              : record(yaml.value)
                ? [yaml.value as Obj]
                : Array.isArray(yaml.value) && yaml.value.every((x) => x === null || record(x))
                  ? yaml.value.map((x) => record(x) ?? {})
                  : undefined;
        if (!objects)
            return `${field}.git.files: ${JSON.stringify(file)} is not a YAML or JSON map or list of maps, which fails the generator in Argo CD`;
        const dir = path.posix.dirname(file);
        const base = path.posix.basename(dir);
        const filename = path.posix.basename(file);
        for (const o of objects) {
            if (goTemplate) {
                const p = {
                    path: dir,
                    basename: base,
                    filename,
                    basenameNormalized: sanitizeName(base),
                    filenameNormalized: sanitizeName(filename),
                    segments: dir.split("/"),
                };
                out.push(extended(o, prefix ? { [prefix]: { path: p } } : { path: p }));
            } else {
                const flat: Obj = {};
                flattenParams(o, "", flat);
                const name = prefix ? `${prefix}.path` : "path";
                Object.assign(flat, {
                    [name]: dir,
                    [`${name}.basename`]: base,
                    [`${name}.filename`]: filename,
                    [`${name}.basenameNormalized`]: sanitizeName(base),
                    [`${name}.filenameNormalized`]: sanitizeName(filename),
                });
                dir.split("/").forEach((seg, i) => {
                    if (seg !== "") flat[`${name}[${i}]`] = seg;
                });
                out.push(flat);
            }
        }
    }
    return out;
}

/** A git directories `path` glob: Go's path.Match, as Argo CD filters the folders; a malformed one matches nothing (Argo CD logs it and skips it). */
function globDir(pattern: string): { test(dir: string): boolean } {
    const compiled = compilePathPattern(pattern);
    return { test: (dir) => compiled?.matches(dir) ?? false };
}
