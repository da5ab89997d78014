/**
 * An ApplicationSet's generators expanded into parameter sets, as Argo CD expands them: `list` (`elements`,
 * `elementsYaml`), git `directories` and `files` (./git-generator.ts), and `matrix` and `merge` of those (one
 * nesting level). A generator check does not expand, or one Argo CD would fail, gives the reason instead.
 */
import { BadInputError } from "../../support/errors";
import { firstKubeYamlValue } from "../decode/kube-yaml";
import { RenderContext } from "../render/render";
import { executeGoTemplates, substitute } from "./appset-templates";
import { flatElement, goString, mergeOverride } from "./generator-params";
import { gitDirectoryParams, gitFilesParams } from "./git-generator";
import { otherRepository } from "../render/repo-url";
import { gitRequest } from "./remote-sources";
import { fetchedContext, fetchedOrNoted } from "../render/fetched-sources";
import { extended } from "../../support/shapes";
import { list, record, str } from "../../support/records";

type Obj = Record<string, unknown>;

/** At most this many Applications from one ApplicationSet: a larger set is bad input (exit 2), never half-judged. */
export const MAX_APPLICATIONS = 10_000;

/** What an ApplicationSet's expansion needs besides the generator at hand. */
export interface GenEnv {
    spec: Obj;
    goTemplate: boolean;
    ctx: RenderContext;
    who: string;
}

/** A generator's parameter sets (with the git generator's `values`, applied with the template), or why check cannot compute them. */
export type Generated = { params: Obj[]; values?: Record<string, string> } | { reason: string };

/** The generators check expands (matrix and merge nest them one level, as Argo CD allows). */
const NESTING = new Set(["matrix", "merge"]);

/** Every string (and map key) of `value` rendered with each parameter set: Go templates by the toolchain's helper, else Argo CD's default syntax. */
function interpolate(value: Obj, sets: Obj[], env: GenEnv): ({ value: Obj } | { error: string })[] {
    if (!env.goTemplate) return sets.map((p) => ({ value: substitute(value, p) as Obj }));
    if (sets.length === 0) return [];
    const results = executeGoTemplates(value, sets, env.spec, undefined, env.ctx, env.who);
    return results.map((r) => (record(r.app) ? { value: r.app! } : { error: r.error ?? "template error" }));
}

/** The parameter sets of generator `g` (at `field`, nested `depth` levels deep), or why check cannot compute them. */
export function generatorParams(g: Obj | undefined, field: string, depth: number, env: GenEnv): Generated {
    if (!g) return { reason: `${field} is not an object` };
    const kinds = Object.keys(g).filter((k) => k !== "selector" && k !== "values");
    const kind = kinds[0] ?? "(empty)";
    if (g.selector !== undefined)
        return { reason: `${field}.selector is not applied by check, so the generator is not expanded` };
    if (kinds.length !== 1)
        return {
            reason: `${field} names ${kinds.length === 0 ? "no generator" : "more than one generator"}, which Argo CD refuses`,
        };
    if (kind === "list" && record(g.list)?.template === undefined)
        return listParams(record(g.list) ?? {}, field, env.goTemplate);
    if (
        kind === "git" &&
        record(g.git)?.template === undefined &&
        (list(record(g.git)?.directories).length > 0 || list(record(g.git)?.files).length > 0)
    )
        return gitParams(record(g.git)!, field, depth, env);
    if (NESTING.has(kind)) {
        // Argo CD nests matrix and merge one level: a second level holds only terminal generators.
        if (depth >= 2) return { reason: `${field} nests ${kind} deeper than Argo CD allows (it fails the generator)` };
        const children = list(record(g[kind])?.generators);
        return kind === "matrix"
            ? matrixParams(children, field, depth, env)
            : mergeParams(record(g.merge), children, field, depth, env);
    }
    const what = kind === "list" || kind === "git" ? " with its own template, or without directories and files" : "";
    return { reason: `${field} (${JSON.stringify(kind)} generator${what}) is not expanded by check` };
}

/** A list generator's parameter sets: its elements, then its `elementsYaml`'s. */
function listParams(l: Obj, field: string, goTemplate: boolean): Generated {
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
        const elements = yaml?.ok && (yaml.value === null || Array.isArray(yaml.value)) ? list(yaml.value) : undefined;
        if (!elements || !elements.every((e) => e === null || record(e)))
            return {
                reason: `${field}.list.elementsYaml is not a YAML list of maps, which fails the generator in Argo CD`,
            };
        params.push(...elements.map((e) => record(e) ?? {}));
    }
    return { params };
}

/** A git generator's parameter sets (directories, else files) and its `values`. */
function gitParams(git: Obj, field: string, depth: number, env: GenEnv): Generated {
    // The folders and files are this repository's when the generator names it (as an Application source); another
    // repository's are fetched at the generator's `revision`, as the applicationset controller asks the repo
    // server for them, and listed in that repository's tree.
    let ctx = env.ctx;
    const other = otherRepository(git.repoURL, `${field}.git`, env.ctx.repository);
    if (other !== undefined) {
        const req = gitRequest({ repoURL: git.repoURL, targetRevision: git.revision });
        const notes: string[] = [];
        const got = req && fetchedOrNoted(req, `${field}.git`, env.ctx, notes);
        if (got === "failed") return { reason: notes[0] };
        if (!got) return { reason: other };
        ctx = fetchedContext(env.ctx, got, String(git.repoURL));
    }
    const prefix = str(git.pathParamPrefix) ?? "";
    let params: Obj[];
    // Directories take precedence over files when both are set, as in Argo CD.
    if (list(git.directories).length > 0) params = gitDirectoryParams(git, ctx, env.goTemplate, prefix);
    else {
        const files = gitFilesParams(git, ctx, env.goTemplate, prefix, field);
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

/** A matrix generator's parameter sets: each set of its first generator combined with each of its second's. */
function matrixParams(children: unknown[], field: string, depth: number, env: GenEnv): Generated {
    if (children.length !== 2)
        return {
            reason: `${field}.matrix has ${children.length} generators; Argo CD requires exactly two (it fails the generator)`,
        };
    const first = generatorParams(record(children[0]), `${field}.matrix.generators[0]`, depth + 1, env);
    if ("reason" in first) return first;
    const seconds = secondParams(record(children[1]), `${field}.matrix.generators[1]`, first.params, depth, env);
    if ("reason" in seconds) return seconds;
    const out: Obj[] = [];
    for (const [i, a] of first.params.entries()) {
        const bs = seconds.each[i];
        if (out.length + bs.length > MAX_APPLICATIONS)
            throw new BadInputError(
                `${env.who}: ${field} generates more than ${MAX_APPLICATIONS} Applications (check's limit)`,
            );
        for (const b of bs) {
            if (env.goTemplate) {
                out.push(mergeOverride(mergeOverride({}, b), a));
                continue;
            }
            const combined = combineFlat(a, b);
            if (typeof combined === "string")
                return {
                    reason: `${field}.matrix: both generators set the parameter ${JSON.stringify(combined)} to different values, which fails the generator in Argo CD`,
                };
            out.push(combined);
        }
    }
    return { params: out };
}

/**
 * The second generator of a matrix: its parameter sets for each set of the first (`firsts`). A second generator
 * that uses templates sees each parameter set of the first, as in Argo CD; otherwise it is expanded once.
 */
function secondParams(
    second: Obj | undefined,
    field: string,
    firsts: Obj[],
    depth: number,
    env: GenEnv,
): { each: Obj[][] } | { reason: string } {
    const templated = JSON.stringify(second ?? null).includes("{{");
    if (!templated || firsts.length === 0) {
        const once = generatorParams(second, field, depth + 1, env);
        if ("reason" in once) return once;
        return { each: firsts.map(() => once.params) };
    }
    const each: Obj[][] = [];
    for (const r of interpolate(second ?? {}, firsts, env)) {
        if ("error" in r)
            return {
                reason: `${field} does not render with the first generator's parameters (${r.error}), which fails the generator in Argo CD`,
            };
        const one = generatorParams(r.value, field, depth + 1, env);
        if ("reason" in one) return one;
        each.push(one.params);
    }
    return { each };
}

/** Two parameter sets combined in the default syntax (each value as Go's `%v`), or the key they set differently. */
function combineFlat(a: Obj, b: Obj): Obj | string {
    const combined: Obj = {};
    for (const [k, v] of Object.entries(a)) combined[k] = goString(v);
    for (const [k, v] of Object.entries(b)) {
        if (k in combined && combined[k] !== goString(v)) return k;
        combined[k] = goString(v);
    }
    return combined;
}

/** Parameter sets by their merge-key values; undefined when two sets have the same values. */
function byMergeKey(sets: Obj[], keys: string[]): Map<string, Obj> | undefined {
    const m = new Map<string, Obj>();
    for (const set of sets) {
        const k = JSON.stringify(Object.fromEntries(keys.map((key) => [key, set[key] ?? null])));
        if (m.has(k)) return undefined;
        m.set(k, set);
    }
    return m;
}

/** A merge generator's parameter sets: the first generator's sets, each overridden by the set of every later generator with the same merge-key values. */
function mergeParams(
    merge: Obj | undefined,
    children: unknown[],
    field: string,
    depth: number,
    env: GenEnv,
): Generated {
    if (children.length < 2)
        return { reason: `${field}.merge has fewer than two generators, which fails the generator in Argo CD` };
    const keys = [...new Set(list(merge?.mergeKeys).filter((k): k is string => typeof k === "string"))].sort();
    if (keys.length === 0) return { reason: `${field}.merge has no mergeKeys, which fails the generator in Argo CD` };
    const all: Obj[][] = [];
    for (const [i, c] of children.entries()) {
        const r = generatorParams(record(c), `${field}.merge.generators[${i}]`, depth + 1, env);
        if ("reason" in r) return r;
        all.push(r.params);
    }
    const base = byMergeKey(all[0], keys);
    if (!base)
        return {
            reason: `${field}.merge: two parameter sets of generators[0] have the same merge-key values, which fails the generator in Argo CD`,
        };
    for (const [i, sets] of all.slice(1).entries()) {
        const other = byMergeKey(sets, keys);
        if (!other)
            return {
                reason: `${field}.merge: two parameter sets of generators[${i + 1}] have the same merge-key values, which fails the generator in Argo CD`,
            };
        for (const [k, set] of base) {
            const o = other.get(k);
            if (o) base.set(k, env.goTemplate ? mergeOverride(set, o) : extended(set, o));
        }
    }
    return { params: [...base.values()] };
}
