/**
 * The decoder's exact path (gitops/decode/kube-yaml.ts): the `yaml` package's parser in YAML 1.1 mode with the
 * failsafe schema (every scalar its source text, style and tag), and go-yaml v2's rules applied to its nodes here:
 * aliases, merge keys, map keys, tags, and what JSON conversion then refuses. It keeps each document's node tree,
 * ranges in stream offsets.
 */
import * as YAML from "yaml";
import { KubeYamlError } from "./kube-yaml-error";
import { BINARY, BOOL, FLOAT, INT, MERGE, NULL, Resolved, STR, formatFloat32g, resolve } from "./go-yaml-scalars";

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
    return t;
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
export function shift(root: YAML.Node, by: number): void {
    if (by === 0) return;
    YAML.visit(root, {
        Node(_key, n) {
            if (n.range) n.range = [n.range[0] + by, n.range[1] + by, n.range[2] + by];
        },
    });
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
    return Array.isArray(docs) ? docs[0] : undefined;
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
export function exactDecode(chunk: string, offset: number): { value: unknown; node?: YAML.Node; empty: boolean } {
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
