/**
 * Kubernetes' YAML decoding, reproduced: what `kubectl`, Argo CD's repo server and the Kubernetes provider get
 * from a manifest stream. They read it with k8s.io/apimachinery's YAMLOrJSONDecoder (a stream whose first
 * non-space character is `{` is JSON; otherwise it is split into documents at lines starting with `---`) and
 * convert each document with sigs.k8s.io/yaml, which decodes with go-yaml v2 and turns the result into JSON.
 * So, unlike YAML 1.2 (the `yaml` package's default, js-yaml's core schema):
 *
 * - plain `y`/`Y`/`yes`/`Yes`/`YES`/`on`/`On`/`ON`/`true`/`True`/`TRUE` are true, and the `n`/`no`/`off`/
 *   `false` forms false; `~`, `null`, `Null`, `NULL` and empty are null;
 * - integers as Go's strconv.ParseInt(s, 0, 64) reads them once every `_` is removed (`0x1F`, `0o17`, `0b101`,
 *   `017` octal, `+1`), then unsigned 64-bit, then floats matching go-yaml's pattern (`1.`, `.5`, `1e3`,
 *   `08`); `.inf`/`.nan` are floats that JSON cannot hold, so a document with one as a value does not decode;
 *   timestamps stay strings; a float out of range stays a string;
 * - `<<` merge keys are expanded in order: a merge overwrites keys set before it and is overwritten by keys
 *   after it (go-yaml v2, not the YAML 1.1 spec's "explicit keys win"); a sequence of maps merges last to first;
 * - a repeated key keeps its last value; map keys become strings (`true`, `80`, floats in Go's float32 `%g`),
 *   and a null, collection or 64-bit unsigned key is an error;
 * - explicit tags: `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!binary` (base64-decoded) as go-yaml
 *   applies them (a mismatch is an error); any other tag reads as the plain value.
 *
 * Two paths give the same values. The exact path is the `yaml` package's parser (YAML 1.1 mode, failsafe
 * schema: every scalar arrives as its source text, with its style and explicit tag) and go-yaml's rules applied
 * to its nodes here; it keeps each document's node tree with exact offsets. The fast path (most documents:
 * several times faster) is js-yaml with a schema whose only implicit type is go-yaml's resolver above; a
 * document with anything it cannot reproduce (merge keys, explicit tags, null, empty or collection keys,
 * floats and integers js-yaml would write differently as keys, `\/` escapes, anything js-yaml rejects) is
 * decoded by the exact path instead. Where a fast-path document's fields are (positions) is built on demand from
 * js-yaml's parse events, recorded while it decodes (gitops/decode/yaml-positions.ts ParseLog); node trees, and the
 * positions of what those events do not answer for, are parsed on demand by the exact path.
 * test/integration/gitops/decode/kube-yaml.spec.ts decodes a corpus with both paths and with the real Go decoder
 * (toolchain/kube-yaml) and requires identical JSON.
 */
import * as jsyaml from "js-yaml";
import * as YAML from "yaml";
import { ParseLog, PosNode, fromYamlNode } from "./yaml-positions";
import { extended } from "../../support/shapes";

/** A decoding error: the reason (never the document's text) and the offset in the stream it points at. */
export class KubeYamlError extends Error {
    constructor(
        readonly reason: string,
        readonly offset: number,
    ) {
        super(reason);
    }
}

export interface KubeDocument {
    /** The decoded value (plain JSON); null for an empty document. */
    value: unknown;
    /** Offset of the document's root node in the stream (of the chunk when the document is empty). */
    readonly start: number;
    /** The document's root node, ranges in stream offsets (undefined for an empty document); parsed on demand. */
    readonly node?: YAML.Node;
    /** Where its fields are (stream offsets; ./yaml-positions.ts), found on demand: what locating a finding reads. */
    readonly positions?: PosNode;
}

/** Set to force the exact path (tests compare both paths with the Go decoder). */
export const decodeOptions = { fastPath: true };

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
const FAST_SCHEMA_OPTIONS: jsyaml.LoadOptions = { schema: FAST_SCHEMA, json: true };

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
            const x = v[i];
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
function fastDecode(
    chunk: string,
    log: ParseLog,
    options: jsyaml.LoadOptions,
): { value: unknown; mark: number } | undefined {
    if (!decodeOptions.fastPath || NEEDS_EXACT.test(chunk)) return undefined;
    const mark = log.begin(chunk);
    try {
        const value = jsyaml.load(chunk, options);
        return { value: value === undefined ? null : unbox(value), mark };
    } catch {
        log.drop(mark);
        return undefined;
    }
}

const TAG = "tag:yaml.org,2002:";
const STR = `${TAG}str`;
const BOOL = `${TAG}bool`;
const INT = `${TAG}int`;
const FLOAT = `${TAG}float`;
const NULL = `${TAG}null`;
const TIMESTAMP = `${TAG}timestamp`;
const BINARY = `${TAG}binary`;
const MERGE = `${TAG}merge`;

type Resolved =
    | { tag: typeof STR | typeof TIMESTAMP | typeof BINARY | "other"; value: string }
    | { tag: typeof BOOL; value: boolean }
    | { tag: typeof NULL; value: null }
    | { tag: typeof INT; value: bigint; unsigned?: boolean }
    | { tag: typeof FLOAT; value: number }
    | { tag: typeof MERGE; value: "<<" };

/** go-yaml v2's resolve table: plain scalars with a fixed meaning. */
const MAP = new Map<string, Resolved>();
for (const s of ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"])
    MAP.set(s, { tag: BOOL, value: true });
for (const s of ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"])
    MAP.set(s, { tag: BOOL, value: false });
for (const s of ["", "~", "null", "Null", "NULL"]) MAP.set(s, { tag: NULL, value: null });
for (const s of [".nan", ".NaN", ".NAN"]) MAP.set(s, { tag: FLOAT, value: NaN });
for (const s of [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"]) MAP.set(s, { tag: FLOAT, value: Infinity });
for (const s of ["-.inf", "-.Inf", "-.INF"]) MAP.set(s, { tag: FLOAT, value: -Infinity });
MAP.set("<<", { tag: MERGE, value: "<<" });

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64) syntax (after go-yaml removed every `_`). */
function goParseInt(s: string, signed: boolean): bigint | undefined {
    const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
    if (!m || (!signed && m[1] !== "")) return undefined;
    let digits = m[2];
    if (/^0[0-7]+$/.test(digits)) digits = "0o" + digits.slice(1);
    const v = (m[1] === "-" ? -1n : 1n) * BigInt(digits.toLowerCase());
    return signed ? (v >= INT64_MIN && v <= INT64_MAX ? v : undefined) : v <= UINT64_MAX ? v : undefined;
}

/** Go's strconv.ParseFloat(s, 64) for the syntax go-yaml hands it; undefined where Go returns an error. */
function goParseFloat(s: string): number | undefined {
    const v = Number(s);
    return Number.isFinite(v) ? v : undefined;
}

/** go-yaml v2's parseTimestamp: whether a plain scalar reads as a timestamp (it then stays a string). */
function isTimestamp(s: string): boolean {
    if (!/^[0-9]{4}-/.test(s)) return false;
    const d = "([0-9]{1,2})";
    const frac = "(\\.[0-9]+)?";
    return (
        new RegExp(`^[0-9]{4}-${d}-${d}$`).test(s) ||
        new RegExp(`^[0-9]{4}-${d}-${d} ${d}:${d}:${d}${frac}$`).test(s) ||
        new RegExp(`^[0-9]{4}-${d}-${d}[Tt]${d}:${d}:${d}${frac}(Z|[+-][0-9]{2}:[0-9]{2})$`).test(s)
    );
}

/** go-yaml v2's resolve(tag, in): the tag and value a scalar gets ("" tag: a plain scalar without one). */
function resolve(tag: string, s: string): Resolved {
    const resolvable =
        tag === "" || tag === STR || tag === BOOL || tag === INT || tag === FLOAT || tag === NULL || tag === TIMESTAMP;
    if (!resolvable) return { tag: tag === BINARY ? BINARY : "other", value: s };
    const r = resolveImplicit(tag, s);
    if (tag === "" || tag === r.tag || tag === STR) return r;
    if (tag === FLOAT && r.tag === INT) return { tag: FLOAT, value: Number(r.value) };
    throw new Error(`cannot decode a ${short(r.tag)} value as a ${short(tag)}`);
}

function short(tag: string): string {
    return tag.startsWith(TAG) ? "!!" + tag.slice(TAG.length) : tag;
}

function resolveImplicit(tag: string, s: string): Resolved {
    const c = s === "" ? "" : s[0];
    const hint =
        s === ""
            ? "N"
            : /[0-9]/.test(c)
              ? "D"
              : c === "+" || c === "-"
                ? "S"
                : "yYnNtTfFoO~".includes(c)
                  ? "M"
                  : c === "."
                    ? "."
                    : "";
    if (hint === "" || tag === STR) return { tag: STR, value: s };
    const known = MAP.get(s);
    if (known) return known;
    if (hint === ".") {
        if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s)) {
            const f = goParseFloat(s);
            if (f !== undefined) return { tag: FLOAT, value: f };
        }
    } else if (hint === "D" || hint === "S") {
        if ((tag === "" || tag === TIMESTAMP) && isTimestamp(s)) return { tag: TIMESTAMP, value: s };
        const plain = s.replace(/_/g, "");
        const i = goParseInt(plain, true);
        if (i !== undefined) return { tag: INT, value: i };
        const u = goParseInt(plain, false);
        if (u !== undefined) return { tag: INT, value: u, unsigned: true };
        if (YAML_STYLE_FLOAT.test(plain)) {
            const f = goParseFloat(plain);
            if (f !== undefined) return { tag: FLOAT, value: f };
        }
        if (plain.startsWith("0b") && /^[01]+$/.test(plain.slice(2))) {
            const v = BigInt("0b" + plain.slice(2));
            if (v <= INT64_MAX) return { tag: INT, value: v };
            if (v <= UINT64_MAX) return { tag: INT, value: v, unsigned: true };
        } else if (plain.startsWith("-0b") && /^[01]+$/.test(plain.slice(3))) {
            const v = -BigInt("0b" + plain.slice(3));
            if (v >= INT64_MIN) return { tag: INT, value: v };
        }
    }
    return { tag: STR, value: s };
}

/** Go's strconv.FormatFloat(f, 'g', -1, 32): how sigs.k8s.io/yaml writes a float map key. */
function formatFloat32g(f: number): string {
    if (Number.isNaN(f)) return ".nan";
    if (f === Infinity) return ".inf";
    if (f === -Infinity) return "-.inf";
    const x = Math.fround(f);
    if (x === Infinity) return ".inf"; // Go: +Inf, which sigs.k8s.io/yaml writes as .inf
    if (x === -Infinity) return "-.inf";
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    let exp = "";
    for (let p = 1; p <= 9; p++) {
        exp = x.toExponential(p - 1);
        if (Math.fround(Number(exp)) === x) break;
    }
    // exp is d[.ddd]e±N: the shortest digits that read back as the same float32. Go's %g for the shortest
    // precision switches to the exponent form below 1e-4 and from 1e6.
    const [mant, e] = exp.split("e");
    const neg = mant.startsWith("-");
    const digits = mant.replace("-", "").replace(".", "");
    const e10 = Number(e);
    if (e10 >= -4 && e10 < 6) return formatFixed(neg, digits, e10);
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ee = Math.abs(e10) < 10 ? `0${Math.abs(e10)}` : String(Math.abs(e10));
    return `${neg ? "-" : ""}${m}e${e10 < 0 ? "-" : "+"}${ee}`;
}

function formatFixed(neg: boolean, digits: string, e10: number): string {
    let s: string;
    if (e10 < 0) s = "0." + "0".repeat(-e10 - 1) + digits;
    else if (digits.length <= e10 + 1) s = digits + "0".repeat(e10 + 1 - digits.length);
    else s = digits.slice(0, e10 + 1) + "." + digits.slice(e10 + 1);
    return (neg ? "-" : "") + s;
}

interface Ctx {
    doc: YAML.Document.Parsed;
    /** Aliases being expanded (go-yaml: "anchor ... value contains itself"). */
    active: Set<YAML.Node>;
    /** Converted anchored nodes, shared by their aliases (the expansion bound is the caller's). */
    memo: Map<YAML.Node, unknown>;
}

function fail(node: YAML.Node | undefined, reason: string): never {
    throw new KubeYamlError(reason, node?.range?.[0] ?? 0);
}

function scalarOf(node: YAML.Scalar): Resolved {
    const raw = String((node as { source?: unknown }).source ?? node.value ?? "");
    const src = raw === FLOW_DASH ? "-" : raw;
    const tag = node.tag ?? "";
    const implicit = node.type === "PLAIN" || node.type === undefined;
    if (tag === "" && !implicit) return { tag: STR, value: src };
    try {
        return resolve(tag, src);
    } catch (e) {
        return fail(node, (e as Error).message);
    }
}

/**
 * What go-yaml decodes but sigs.k8s.io/yaml's conversion to JSON refuses: a `.inf` or `.nan` value (held in the
 * value as this object) and a null or uint64 key (held for its mapping in UNCONVERTIBLE_KEYS). The conversion
 * runs on what decoding left, after a repeated key or a merge may have dropped them, so a document fails only
 * when one is left in its value (`refuseUnconvertible`).
 */
class Unconvertible {
    constructor(
        readonly node: YAML.Node | undefined,
        readonly message: string,
    ) {}
}

/** The first unconvertible key of each converted mapping that has one. */
const UNCONVERTIBLE_KEYS = new WeakMap<object, Unconvertible>();

/**
 * Fails on the first `Unconvertible` left in a converted value, as JSON conversion does. Aliased values are
 * shared objects: each is walked once (`seen`), so an alias bomb costs its written size here, not its expansion.
 */
function refuseUnconvertible(v: unknown, seen = new Set<object>()): void {
    if (v === null || typeof v !== "object" || seen.has(v)) return;
    const bad = v instanceof Unconvertible ? v : UNCONVERTIBLE_KEYS.get(v);
    if (bad) fail(bad.node, bad.message);
    seen.add(v);
    for (const x of Array.isArray(v) ? v : Object.values(v)) refuseUnconvertible(x, seen);
}

function scalarValue(node: YAML.Scalar): unknown {
    const r = scalarOf(node);
    switch (r.tag) {
        case BINARY: {
            const b64 = r.value.replace(/\s/g, "");
            if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64))
                fail(node, "!!binary value contains invalid base64 data");
            return Buffer.from(b64, "base64").toString("utf8");
        }
        case INT:
            return Number(r.value);
        case FLOAT:
            return Number.isFinite(r.value)
                ? r.value
                : new Unconvertible(
                      node,
                      `json: unsupported value: ${Number.isNaN(r.value) ? "NaN" : r.value > 0 ? "+Inf" : "-Inf"}`,
                  );
        case MERGE:
            return "<<";
        default:
            return r.value;
    }
}

function target(node: YAML.Node | null | undefined, ctx: Ctx): YAML.Node | null | undefined {
    if (!YAML.isAlias(node)) return node;
    const t = node.resolve(ctx.doc);
    if (!t) fail(node, "an alias refers to an anchor not defined before it");
    return t as YAML.Node;
}

/** A key go-yaml decodes but JSON conversion refuses (null, uint64): see `Unconvertible`. */
class UnconvertibleKey {
    constructor(readonly error: Unconvertible) {}
}

function keyString(node: YAML.Node | null | undefined, ctx: Ctx): string | UnconvertibleKey {
    const t = target(node, ctx);
    const unconvertible = (type: string) =>
        new UnconvertibleKey(new Unconvertible(node ?? undefined, `unsupported map key of type: ${type}`));
    if (t === null || t === undefined) return unconvertible("<nil>");
    if (!YAML.isScalar(t)) fail(node ?? undefined, "invalid map key: a mapping or sequence");
    const r = scalarOf(t);
    switch (r.tag) {
        case NULL:
            return unconvertible("<nil>");
        case BOOL:
            return r.value ? "true" : "false";
        case INT:
            if (r.unsigned) return unconvertible("uint64");
            return r.value.toString();
        case FLOAT:
            return formatFloat32g(r.value);
        default:
            return String(scalarValue(t));
    }
}

function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
    if (key === "__proto__")
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
}

function isMergeKey(key: unknown): boolean {
    if (!YAML.isScalar(key)) return false;
    const src = String((key as { source?: unknown }).source ?? key.value);
    if (src !== "<<") return false;
    return key.tag === MERGE || (!key.tag && key.type === "PLAIN");
}

/** go-yaml v2's mapping(): the pairs assigned into `out` in order, merges included. */
function applyMapping(map: YAML.YAMLMap, out: Record<string, unknown>, ctx: Ctx): void {
    for (const pair of map.items) {
        if (isMergeKey(pair.key)) {
            merge(pair.value as YAML.Node | null, out, ctx);
            continue;
        }
        const key = keyString(pair.key as YAML.Node | null, ctx);
        const value = convert(pair.value as YAML.Node | null, ctx);
        if (key instanceof UnconvertibleKey) {
            if (!UNCONVERTIBLE_KEYS.has(out)) UNCONVERTIBLE_KEYS.set(out, key.error);
        } else {
            setKey(out, key, value);
        }
    }
}

const WANT_MAP = "map merge requires map or sequence of maps as the value";

/** Copies a merged mapping's entries into `out`, with an unconvertible key it holds (go-yaml copies that key too). */
function mergeInto(out: Record<string, unknown>, from: unknown): void {
    Object.assign(out, from);
    const bad = UNCONVERTIBLE_KEYS.get(from as object);
    if (bad && !UNCONVERTIBLE_KEYS.has(out)) UNCONVERTIBLE_KEYS.set(out, bad);
}

function merge(node: YAML.Node | null, out: Record<string, unknown>, ctx: Ctx): void {
    if (YAML.isMap(node)) return mergeInto(out, convert(node, ctx));
    if (YAML.isAlias(node)) {
        if (!YAML.isMap(target(node, ctx))) fail(node, WANT_MAP);
        return mergeInto(out, convert(node, ctx));
    }
    if (YAML.isSeq(node)) {
        for (let i = node.items.length - 1; i >= 0; i--) {
            const item = node.items[i] as YAML.Node;
            if (!YAML.isMap(target(item, ctx))) fail(item ?? node, WANT_MAP);
        }
        for (let i = node.items.length - 1; i >= 0; i--) mergeInto(out, convert(node.items[i] as YAML.Node, ctx));
        return;
    }
    fail(node ?? undefined, WANT_MAP);
}

function convert(node: YAML.Node | null | undefined, ctx: Ctx): unknown {
    if (node === null || node === undefined) return null;
    if (YAML.isAlias(node)) {
        const t = target(node, ctx)!;
        if (ctx.active.has(t)) fail(node, "an alias refers to a node that contains it");
        const known = ctx.memo.get(t);
        if (known !== undefined) return known;
        ctx.active.add(t);
        const v = convert(t, ctx);
        ctx.active.delete(t);
        ctx.memo.set(t, v);
        return v;
    }
    const guard = node.anchor !== undefined;
    if (guard) ctx.active.add(node);
    let v: unknown;
    if (YAML.isScalar(node)) v = scalarValue(node);
    else if (YAML.isMap(node)) {
        const out: Record<string, unknown> = {};
        applyMapping(node, out, ctx);
        v = out;
    } else if (YAML.isSeq(node)) v = node.items.map((item) => convert(item as YAML.Node | null, ctx));
    else v = null;
    if (guard) {
        ctx.active.delete(node);
        ctx.memo.set(node, v);
    }
    return v;
}

/** Moves every range of a node tree by `by` (a document parsed from a slice of its stream). */
function shift(root: YAML.Node, by: number): void {
    if (by === 0) return;
    YAML.visit(root, {
        Node(_key, n) {
            if (n.range) n.range = [n.range[0] + by, n.range[1] + by, n.range[2] + by];
        },
    });
}

/**
 * apimachinery's YAMLReader: documents are the text between lines that start with `---` (only spaces or a
 * comment may follow the marker on its line). Returns [offset, text] chunks.
 */
function splitDocuments(text: string, from: number): [number, string][] {
    const chunks: [number, string][] = [];
    let start = from;
    let pos = from;
    while (pos < text.length) {
        const nl = text.indexOf("\n", pos);
        const end = nl < 0 ? text.length : nl + 1;
        if (text.startsWith("---", pos)) {
            const rest = text.slice(pos + 3, end).trim();
            if (rest.length > 0 && rest[0] !== "#")
                throw new KubeYamlError(
                    "invalid document separator: only spaces or a comment may follow `---` on its line",
                    pos,
                );
            if (pos > start) chunks.push([start, text.slice(start, pos)]);
            start = end;
        }
        pos = end;
    }
    if (start < text.length) chunks.push([start, text.slice(start)]);
    return chunks;
}

/** The end of the JSON value starting at `i` (a bracket-balanced run, or up to the next space). */
function jsonValueEnd(text: string, i: number): number {
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
        const c = text[i];
        if (inString) {
            if (c === "\\") i++;
            else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === "{" || c === "[") depth++;
        else if (c === "}" || c === "]") {
            depth--;
            if (depth <= 0) return i + 1;
        } else if (depth === 0 && /\s/.test(c)) return i;
    }
    return text.length;
}

/**
 * A stream whose first non-space character is `{`: JSON values, as Go's json.Decoder reads them, until one
 * does not parse. Then, as apimachinery's YAMLOrJSONDecoder does when at most one JSON value was read, the
 * rest (from after the last value and the spaces up to the first line break) is read as a YAML stream.
 */
function decodeJsonStream(text: string): KubeDocument[] {
    const out: KubeDocument[] = [];
    let consumed = 0;
    while (true) {
        let i = consumed;
        while (i < text.length && /\s/.test(text[i])) i++;
        if (i >= text.length) return out;
        const end = jsonValueEnd(text, i);
        let value: unknown;
        try {
            value = JSON.parse(text.slice(i, end));
        } catch (e) {
            if (out.length > 1)
                throw new KubeYamlError(
                    `invalid JSON: ${String((e as Error).message)
                        .split("\n")[0]
                        .replace(/ in JSON at position \d+.*$/, "")}`,
                    i,
                );
            let from = consumed;
            while (from < text.length && /\s/.test(text[from]) && text[from] !== "\n") from++;
            if (text[from] === "\n") from++;
            return [...out, ...decodeYamlStream(text, from)];
        }
        const node =
            YAML.parseDocument(text.slice(i, end), { version: "1.1", schema: "failsafe", uniqueKeys: false })
                .contents ?? undefined;
        if (node) shift(node, i);
        out.push({ value, start: i, node: node ?? undefined, positions: fromYamlNode(node) });
        consumed = end;
    }
}

/** A double-quoted scalar's escape go-yaml v2 does not know (`\/` is YAML 1.2's). */
function checkEscapes(root: YAML.Node, chunk: string, offset: number): void {
    YAML.visit(root, {
        Scalar(_key, n) {
            if (n.type !== "QUOTE_DOUBLE" || !n.range) return;
            const raw = chunk.slice(n.range[0] - offset, n.range[1] - offset);
            const m = /(?:^|[^\\])(?:\\\\)*\\\//.exec(raw);
            if (m) throw new KubeYamlError("found unknown escape character", n.range[0] + m.index);
        },
    });
}

/**
 * Stands for a `-` that go-yaml reads as the string "-" inside a flow collection (`[cat, -]`: a `-` followed by
 * `,`, `]` or `}`), which the `yaml` package refuses as YAML 1.2 does. One UTF-16 unit, so offsets are kept;
 * used only in a chunk that does not contain it, so a scalar of exactly this character is such a `-`.
 */
const FLOW_DASH = "\ue000";

function parseOnce(text: string): YAML.Document.Parsed | undefined {
    const docs = YAML.parseAllDocuments(text, {
        version: "1.1",
        schema: "failsafe",
        uniqueKeys: false,
        prettyErrors: false,
        strict: false,
    });
    return (Array.isArray(docs) ? docs[0] : undefined) as YAML.Document.Parsed | undefined;
}

/** The chunk's first document, with go-yaml's flow `-` (see FLOW_DASH) read as a scalar where the parser refuses it. */
function parseExact(chunk: string): YAML.Document.Parsed | undefined {
    let text = chunk;
    let doc = parseOnce(text);
    // Each round replaces every refused flow `-` the parser reports; nested ones may surface in a later round.
    for (let round = 0; round < 8 && doc && doc.errors.length > 0 && !chunk.includes(FLOW_DASH); round++) {
        const dashes = doc.errors
            .filter(
                (e) =>
                    e.code === "BLOCK_IN_FLOW" && text[e.pos[0]] === "-" && /^[,\]}]$/.test(text[e.pos[0] + 1] ?? ""),
            )
            .map((e) => e.pos[0]);
        if (dashes.length === 0) break;
        const chars = text.split("");
        for (const at of dashes) chars[at] = FLOW_DASH;
        text = chars.join("");
        doc = parseOnce(text);
    }
    return doc;
}

/** The exact path for one chunk: its value and its root node (stream offsets). */
function exactDecode(chunk: string, offset: number): { value: unknown; node?: YAML.Node; empty: boolean } {
    const doc = parseExact(chunk);
    if (!doc) {
        // A chunk that holds a directive (%YAML, %TAG) needs the `---` the split took away.
        const directive = /^%/m.exec(chunk);
        if (directive) throw new KubeYamlError("did not find expected <document start>", offset + directive.index);
        return { value: null, empty: true };
    }
    if (doc.errors.length > 0) {
        const e = doc.errors[0];
        throw new KubeYamlError(
            e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, ""),
            offset + (e.pos?.[0] ?? 0),
        );
    }
    const node = doc.contents ?? undefined;
    if (node && chunk.includes("\\/")) checkEscapes(node, chunk, 0);
    if (node) shift(node, offset);
    const ctx: Ctx = { doc, active: new Set(), memo: new Map() };
    let value: unknown;
    try {
        value = convert(node, ctx);
        refuseUnconvertible(value);
    } catch (e) {
        if (e instanceof KubeYamlError) throw e;
        if (e instanceof RangeError)
            throw new KubeYamlError("the document nests or aliases too deeply", node?.range?.[0] ?? offset);
        throw e;
    }
    return { value, node: node && !(YAML.isScalar(node) && value === null) ? node : undefined, empty: false };
}

/**
 * A document the fast path decoded. Positions are needed for some documents (a finding, an error): js-yaml's
 * parse events, recorded while decoding, give them for most documents (built when asked); the exact path's node
 * tree, then parsed, for the others. A class, its accessors on the prototype: an object literal with getters gives
 * each document a hidden class of its own and its properties in a dictionary, kept for the whole run.
 */
class LoggedDocument implements KubeDocument {
    private parsed?: { node?: YAML.Node };
    private found?: { positions?: PosNode };

    constructor(
        readonly value: unknown,
        private readonly chunk: string,
        private readonly offset: number,
        private readonly log: ParseLog,
        private readonly mark: number,
    ) {}

    get start(): number {
        return this.positions?.start ?? this.offset;
    }

    get node(): YAML.Node | undefined {
        return (this.parsed ??= exactDecode(this.chunk, this.offset)).node;
    }

    get positions(): PosNode | undefined {
        return (this.found ??= {
            positions: this.log.positions(this.mark, this.chunk, this.offset) ?? fromYamlNode(this.node),
        }).positions;
    }
}

/** A document the exact path decoded: its node tree is at hand, its positions read from it when asked. */
class ExactDocument implements KubeDocument {
    readonly value: unknown;
    readonly start: number;
    readonly node?: YAML.Node;
    private found?: { positions?: PosNode };

    constructor(exact: { value: unknown; node?: YAML.Node }, offset: number) {
        this.value = exact.value;
        this.start = exact.node?.range?.[0] ?? offset;
        this.node = exact.node;
    }

    get positions(): PosNode | undefined {
        return (this.found ??= { positions: fromYamlNode(this.node) }).positions;
    }
}

function decodeYamlStream(text: string, from: number): KubeDocument[] {
    const out: KubeDocument[] = [];
    const log = new ParseLog();
    const options: jsyaml.LoadOptions = extended(FAST_SCHEMA_OPTIONS, { listener: log.listener });
    for (const [offset, chunk] of splitDocuments(text, from)) {
        const fast = fastDecode(chunk, log, options);
        if (fast) {
            out.push(new LoggedDocument(fast.value, chunk, offset, log, fast.mark));
            continue;
        }
        out.push(new ExactDocument(exactDecode(chunk, offset), offset));
    }
    log.end();
    return out;
}

/**
 * Decodes a manifest stream as Kubernetes does. Every document is returned (an empty one with value null);
 * throws KubeYamlError at the first document that does not decode, as Argo CD and kubectl stop there.
 */
export function decodeKubeYaml(text: string): KubeDocument[] {
    return /^\s*\{/.test(text.slice(0, 4096)) ? decodeJsonStream(text) : decodeYamlStream(text, 0);
}

/**
 * The first document of a text as sigs.k8s.io/yaml's Unmarshal reads it (null when empty), for the files the
 * Kubernetes tools read that way and check reads beside them: Chart.yaml (Helm), kustomization files
 * (kustomize), Argo CD's elementsYaml and git files generator files. `ok: false` when the text does not decode;
 * the tool that reads it then says why.
 */
export function firstKubeYamlValue(text: string): { ok: true; value: unknown } | { ok: false } {
    try {
        const docs = decodeKubeYaml(text);
        return { ok: true, value: docs.length > 0 ? docs[0].value : null };
    } catch {
        return { ok: false };
    }
}
