/**
 * Where a manifest document's fields are: the small tree that locating a finding needs (each mapping's scalar
 * keys and where they start, each sequence item's start), from either parse of a document (core/kube-yaml.ts):
 * - from the `yaml` package's node tree (the exact path), for any document;
 * - from js-yaml's parse events (the fast path's parser, several times faster), for the documents it can answer
 *   for exactly: block and flow mappings and sequences of scalars, without anchors, aliases, tags, explicit keys
 *   or a byte order mark. Anything else gives undefined, and the exact path answers.
 * test/check/yaml-positions.spec.ts requires both trees to be equal wherever the fast one answers.
 */
import * as jsyaml from "js-yaml";
import * as YAML from "yaml";

export interface PosNode {
    /** Offset of the node's first character (a collection's first key or item, or its bracket). */
    start: number;
    /** A mapping's scalar keys in order (repeats kept), with their start; values that are collections. */
    entries?: PosEntry[];
    /** A sequence's items (a scalar item as its start only). */
    items?: PosNode[];
}

export interface PosEntry {
    key: string;
    keyStart: number;
    /** The value when it is a mapping or a sequence (a scalar value is never walked into). */
    value?: PosNode;
}

/** The positions of a node of the `yaml` package (offsets as the node has them). */
export function fromYamlNode(n: unknown): PosNode | undefined {
    if (!YAML.isNode(n) || !n.range) return undefined;
    if (YAML.isMap(n)) {
        const entries: PosEntry[] = [];
        for (const pair of n.items) {
            if (!YAML.isScalar(pair.key) || !pair.key.range) continue;
            const value = YAML.isMap(pair.value) || YAML.isSeq(pair.value) ? fromYamlNode(pair.value) : undefined;
            entries.push({ key: String(pair.key.value), keyStart: pair.key.range[0], ...(value ? { value } : {}) });
        }
        return { start: n.range[0], entries };
    }
    if (YAML.isSeq(n)) {
        const items: PosNode[] = [];
        for (const item of n.items) {
            const p = fromYamlNode(item);
            if (!p) return { start: n.range[0], items }; // an item that is not a node ends what can be walked
            items.push(p);
        }
        return { start: n.range[0], items };
    }
    return { start: n.range[0] };
}

/** Constructs the fast path leaves to the exact path (see the header); a false alarm only costs the exact path. */
const UNSUPPORTED = /(?:^|[\s[{,])[&*!?]|\uFEFF/;

interface Event {
    open: number;
    end: number;
    kind: string | null;
    result: unknown;
    children: Event[];
}

class Bail extends Error {}

/** The first character of a node from where its parse began (spaces, line breaks and comments skipped). */
function contentStart(text: string, i: number): number {
    for (;;) {
        const c = text.charCodeAt(i);
        if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
        else if (c === 0x23) {
            while (i < text.length && text.charCodeAt(i) !== 0x0a) i++;
        } else return i;
    }
}

function build(outer: Event, text: string, offset: number): PosNode {
    // js-yaml composes a block node by first trying it as a mapping's key: a node whose one child gave it its
    // result is that child.
    let e = outer;
    while (e.children.length === 1 && e.children[0].result === e.result && e.children[0].kind === e.kind) e = e.children[0];
    const start = contentStart(text, e.open);
    if (e.kind === "mapping") {
        if (e.children.length % 2 !== 0) throw new Bail();
        const entries: PosEntry[] = [];
        for (let i = 0; i < e.children.length; i += 2) {
            const k = e.children[i];
            const v = e.children[i + 1];
            if (k.kind !== "scalar" || k.children.length > 0) throw new Bail();
            const keyStart = contentStart(text, k.open);
            const q = text.charCodeAt(keyStart);
            const key = q === 0x22 || q === 0x27 ? String(k.result) : text.slice(keyStart, k.end).trimEnd();
            if (key.includes("\n") || key.includes("\r")) throw new Bail();
            const value = v.kind === "mapping" || v.kind === "sequence" ? build(v, text, offset) : undefined;
            entries.push({ key, keyStart: keyStart + offset, ...(value ? { value } : {}) });
        }
        // A block mapping starts at its first key; a flow mapping at its brace.
        return { start: (text.charCodeAt(start) === 0x7b || entries.length === 0 ? start : entries[0].keyStart - offset) + offset, entries };
    }
    if (e.kind === "sequence") {
        const items = e.children.map((c) => {
            if (c.kind === null) throw new Bail(); // an empty item
            return build(c, text, offset);
        });
        if (items.length !== (e.result as unknown[]).length) throw new Bail();
        return { start: start + offset, items };
    }
    if (e.kind !== "scalar" || e.children.length > 0) throw new Bail();
    return { start: start + offset };
}

/**
 * The positions of one document chunk (offset: the chunk's offset in the stream) from js-yaml's parse events, or
 * undefined when the document holds something this does not answer for exactly.
 */
export function fastPositions(chunk: string, offset: number, options: jsyaml.LoadOptions): PosNode | undefined {
    if (UNSUPPORTED.test(chunk)) return undefined;
    const stack: Event[] = [];
    let root: Event | undefined;
    const listener = (kind: "open" | "close", state: { position: number; kind: string | null; result: unknown }) => {
        if (kind === "open") {
            const e: Event = { open: state.position, end: -1, kind: null, result: undefined, children: [] };
            if (stack.length > 0) stack[stack.length - 1].children.push(e);
            else root ??= e;
            stack.push(e);
        } else {
            const e = stack.pop()!;
            e.end = state.position;
            e.kind = state.kind;
            e.result = state.result;
        }
    };
    try {
        jsyaml.load(chunk, { ...options, listener } as jsyaml.LoadOptions);
        return root && root.kind !== null ? build(root, chunk, offset) : undefined;
    } catch {
        return undefined;
    }
}
