/**
 * The decoder's fast path (gitops/decode/kube-yaml.ts): js-yaml with a schema whose only implicit type is go-yaml's
 * resolver, for the documents it can reproduce exactly; anything else is left to the exact path.
 */
import * as jsyaml from "js-yaml";
import { ParseLog } from "./yaml-positions";
import { BOOL, FLOAT, INT, NULL, Resolved, STR, TIMESTAMP, formatFloat32g, resolveImplicit } from "./go-yaml-scalars";

/** js-yaml could not reproduce go-yaml here: the document goes to the exact path. */
class Fallback extends Error {}

/** A float from the fast path: a number, written as a map key the way sigs.k8s.io/yaml writes it. */
class GoFloat {
    constructor(readonly value: number) {}
    get [Symbol.toStringTag]() {
        return "GoFloat";
    }
    toString(): string {
        return formatFloat32g(this.value);
    }
}
/** null from the fast path, so that a null map key is seen (go: an error) instead of becoming "null". */
const GO_NULL = {
    get [Symbol.toStringTag]() {
        return "GoNull";
    },
    toString: () => "\u0000null",
};

/**
 * go-yaml's reading of a plain scalar, for the fast path's type: js-yaml asks `resolve` and then `construct` for
 * the same scalar, so the last answer is kept (one string and its answer; every plain scalar of a document
 * passes here, and resolving it three times was most of the type's cost).
 */
let lastScalar: string | undefined;
let lastResolved: Resolved | undefined;
function resolvePlain(data: string): Resolved {
    if (lastResolved === undefined || lastScalar !== data) {
        lastResolved = resolveImplicit("", data);
        lastScalar = data;
    }
    return lastResolved;
}

const GO_SCALAR = new jsyaml.Type("tag:yaml.org,2002:go", {
    kind: "scalar",
    resolve: (data: string) => {
        const tag = resolvePlain(data).tag;
        return tag !== STR && tag !== TIMESTAMP;
    },
    construct: (data: string) => {
        const r = resolvePlain(data);
        switch (r.tag) {
            case BOOL:
                return r.value;
            case NULL:
                return GO_NULL;
            case INT:
                if (
                    r.unsigned ||
                    r.value > BigInt(Number.MAX_SAFE_INTEGER) ||
                    r.value < BigInt(Number.MIN_SAFE_INTEGER)
                )
                    throw new Fallback();
                return Number(r.value);
            case FLOAT:
                if (!Number.isFinite(r.value)) throw new Fallback();
                return new GoFloat(r.value);
            default:
                throw new Fallback(); // `<<`
        }
    },
});
const FAST_SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [GO_SCALAR] });
export const FAST_SCHEMA_OPTIONS: jsyaml.LoadOptions = { schema: FAST_SCHEMA, json: true };

/**
 * Constructs js-yaml cannot be trusted with (textual, conservative: a false alarm only costs the exact path).
 * Among them, every way a collection can become a mapping key, which go-yaml refuses ("invalid map key") and
 * js-yaml turns into a string ("[object Object]", or an array's items joined): a collection before `:`, one
 * right after a flow mapping's `{` or a `,` (a flow entry with no value; in a sequence a false alarm), and an
 * alias before `:` (it may name a collection). `unbox` refuses "[object Object]" keys as a second guard.
 */
const NEEDS_EXACT =
    /<<|\\\/|^[ \t-]*\?(?:[ \t]|$)|^[ \t-]*:(?:[ \t]|$)|[{,[][ \t]*:(?:[ \t]|$)|[\]}][ \t]*:(?:[ \t]|$)|^[ \t]*%|[{,](?:\s|#[^\n]*\n)*[{[]|\*[\w-]+[ \t]*:/m;

/** Replaces the fast path's boxes by plain values; a null key or a collection turned key sends the document to the exact path. */
function unbox(v: unknown): unknown {
    if (v === GO_NULL) return null;
    if (v instanceof GoFloat) return v.value;
    if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
            const x: unknown = v[i];
            if (x !== null && typeof x === "object") v[i] = unbox(x);
        }
        return v;
    }
    if (v !== null && typeof v === "object") {
        const o = v as Record<string, unknown>;
        for (const k of Object.keys(o)) {
            if (k.charCodeAt(0) === 0 || k === "[object Object]") throw new Fallback();
            const x = o[k];
            if (x !== null && typeof x === "object") o[k] = unbox(x);
        }
    }
    return v;
}

/**
 * The fast path for one chunk; undefined when the exact path must decide. Its parse events go to `log` (the
 * document's positions, built when asked for), under the mark returned with the value.
 */
export function fastDecode(
    chunk: string,
    log: ParseLog,
    options: jsyaml.LoadOptions,
): { value: unknown; mark: number } | undefined {
    if (NEEDS_EXACT.test(chunk)) return undefined;
    const mark = log.begin(chunk);
    try {
        const value = jsyaml.load(chunk, options);
        return { value: value === undefined ? null : unbox(value), mark };
    } catch {
        log.drop(mark);
        return undefined;
    }
}
