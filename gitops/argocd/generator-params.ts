/**
 * The parameter values of an ApplicationSet's generators as Argo CD writes them: a folder's path parameters, a
 * list element or a git file's object flattened for the default template syntax (Go's `%v` of each value),
 * names sanitized, and parameter maps merged as mergo merges them.
 */
import { record } from "../../support/records";

type Obj = Record<string, unknown>;

/** Argo CD's `normalize` (SanitizeName): lower case, [^-a-z0-9.] as '-', at most 253 characters, no '-' or '.' at either end. */
export function sanitizeName(name: string): string {
    return name
        .toLowerCase()
        .replace(/[^-a-z0-9.]/g, "-")
        .slice(0, 253)
        .replace(/^[-.]+|[-.]+$/g, "");
}

/** A list element as the default syntax sees it: string values, a `values` map as `values.<key>`; undefined when Argo CD refuses it. */
export function flatElement(e: Obj): Obj | undefined {
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
export function pathParams(p: string, goTemplate: boolean, prefix: string): Obj {
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

/** Argo CD's `%v` of a parameter value (non-goTemplate matrix combination): strings as they are, numbers as Go prints them. */
export function goString(v: unknown): string {
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
export function mergeOverride(dst: Obj, src: Obj): Obj {
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
                (record(v) && Object.keys(v).length === 0)
            )
        )
            out[k] = v;
    }
    return out;
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
export function flattenParams(v: unknown, prefix: string, out: Obj): void {
    if (Array.isArray(v)) v.forEach((x, i) => flattenParams(x, prefix === "" ? String(i) : `${prefix}.${i}`, out));
    else if (record(v))
        for (const [k, x] of Object.entries(record(v)!)) flattenParams(x, prefix === "" ? k : `${prefix}.${k}`, out);
    else out[prefix] = v === null ? "<nil>" : typeof v === "number" ? goFloat(v) : String(v);
}
