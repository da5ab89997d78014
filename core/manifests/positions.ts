/**
 * Positions in manifest files: a file's line index built on demand, the documents' node trees the decoder
 * kept (core/kube-yaml.ts), and a field path's node.
 */
import * as YAML from "yaml";

/** Parses a field path: dotted segments, `[n]` indexes (`spec.envRefs.PULUMI_ACCESS_TOKEN`, `subjects[0]`). */
export function fieldSegments(field: string): (string | number)[] {
    const out: (string | number)[] = [];
    for (const part of field.split(".")) {
        const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
        if (!m) {
            out.push(part);
            continue;
        }
        if (m[1] !== "") out.push(m[1]);
        for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
    }
    return out;
}

/** Each mapping's scalar keys split at dots (keys may contain dots: annotation keys), computed once a mapping. */
const splitKeys = new WeakMap<YAML.YAMLMap, { parts: string[]; pair: YAML.Pair }[]>();

function keysOf(map: YAML.YAMLMap<unknown, unknown>): { parts: string[]; pair: YAML.Pair }[] {
    let keys = splitKeys.get(map);
    if (!keys) {
        keys = [];
        for (const pair of map.items) if (YAML.isScalar(pair.key)) keys.push({ parts: String(pair.key.value).split("."), pair: pair as YAML.Pair });
        splitKeys.set(map, keys);
    }
    return keys;
}

/**
 * Walks a YAML node along a field path; keys may themselves contain dots (annotation keys), so at each
 * mapping the key that names the longest run of segments wins. Linear: each mapping on the way compares
 * each of its keys once, part by part, against the segments from the current one (never joining or
 * slicing the rest of the path), so the cost is bounded by the size of the keys on the path, whatever the
 * number of segments. Returns the deepest node reached.
 */
export function findNode(root: YAML.Node | null | undefined, segments: (string | number)[]): YAML.Node | YAML.Pair | undefined {
    let node: unknown = root;
    let found: YAML.Node | YAML.Pair | undefined = root ?? undefined;
    let i = 0;
    while (i < segments.length) {
        if (YAML.isMap(node)) {
            let best: { length: number; pair: YAML.Pair } | undefined;
            for (const k of keysOf(node as YAML.YAMLMap<unknown, unknown>)) {
                if (k.parts.length > segments.length - i || (best && k.parts.length <= best.length)) continue;
                let match = true;
                for (let j = 0; j < k.parts.length && match; j++) match = String(segments[i + j]) === k.parts[j];
                if (match) best = { length: k.parts.length, pair: k.pair };
            }
            if (!best) break;
            found = best.pair;
            node = best.pair.value;
            i += best.length;
        } else if (YAML.isSeq(node) && typeof segments[i] === "number") {
            const item = node.items[segments[i] as number];
            if (!YAML.isNode(item)) break;
            found = item;
            node = item;
            i++;
        } else {
            break;
        }
    }
    return found;
}

export function startOf(n: YAML.Node | YAML.Pair | undefined): number | undefined {
    if (!n) return undefined;
    if (YAML.isPair(n)) return YAML.isNode(n.key) ? n.key.range?.[0] : startOf(n.value as YAML.Node);
    return n.range?.[0];
}

/**
 * Positions in one file. The decoder (core/kube-yaml.ts) keeps each document's node tree with the file's
 * offsets; lines and columns are computed only when something needs one (a finding, a bad-input message).
 */
export class FileLocator {
    private lineCounter?: YAML.LineCounter;

    /** `docs[i].node`: document i's root node (the decoder parses it on first use). */
    constructor(
        private readonly text: string,
        private readonly docs: readonly { readonly node?: YAML.Node }[],
    ) {}

    /** Line and column (1-based) of an offset in the file. */
    pos(offset: number | undefined): { line: number; column: number } {
        if (!this.lineCounter) {
            this.lineCounter = new YAML.LineCounter();
            this.lineCounter.addNewLine(0);
            for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) this.lineCounter.addNewLine(i + 1);
        }
        const p = this.lineCounter.linePos(Math.max(0, Math.min(offset ?? 0, this.text.length)));
        return { line: p.line, column: p.col };
    }

    /** The root node of document i (offsets are the file's). */
    document(i: number): YAML.Node | undefined {
        return this.docs[i]?.node;
    }
}

/** Where an object is: its file's locator and the path to its node (document, then List item). */
export interface Place {
    locator: FileLocator;
    /** The document's index in the file (empty documents counted). */
    doc: number;
    item?: number;
}

export function placeNode(p: Place): YAML.Node | undefined {
    const root = p.locator.document(p.doc);
    if (p.item === undefined) return root;
    const items = YAML.isMap(root) ? root.get("items", true) : undefined;
    const item = YAML.isSeq(items) ? items.items[p.item] : undefined;
    return YAML.isNode(item) ? item : root;
}

export function placeStart(p: Place): { line: number; column: number } {
    return p.locator.pos(placeNode(p)?.range?.[0]);
}
