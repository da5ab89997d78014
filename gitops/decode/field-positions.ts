/**
 * Positions in manifest files: a file's line index built on demand, where the documents' fields are (the
 * decoder finds them on demand: gitops/decode/kube-yaml.ts, gitops/decode/yaml-positions.ts), and a field path's position.
 */
import * as YAML from "yaml";
import { PosEntry, PosNode } from "./yaml-positions";

/** Field paths already parsed (rules name a few fields many times); bounded, since fields can quote input keys. */
const parsedFields = new Map<string, readonly (string | number)[]>();
const MAX_PARSED_FIELDS = 10_000;

/** Parses a field path: dotted segments, `[n]` indexes (`spec.envRefs.PULUMI_ACCESS_TOKEN`, `subjects[0]`). Shared: never changed. */
export function fieldSegments(field: string): readonly (string | number)[] {
    let out = parsedFields.get(field);
    if (out === undefined) {
        out = parseField(field);
        if (parsedFields.size < MAX_PARSED_FIELDS) parsedFields.set(field, out);
    }
    return out;
}

function parseField(field: string): (string | number)[] {
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

/**
 * How many segments from `i` a mapping key names (keys may contain dots: annotation keys; each dotted part
 * must equal one segment), or 0 when it does not name them. Compares the key in place, part by part.
 */
function keyLength(key: string, segments: readonly (string | number)[], i: number): number {
    let pos = 0;
    for (let j = i; j < segments.length; j++) {
        const dot = key.indexOf(".", pos);
        const end = dot < 0 ? key.length : dot;
        const segment = segments[j];
        const s = typeof segment === "string" ? segment : String(segment);
        if (s.length !== end - pos || !key.startsWith(s, pos)) return 0;
        if (dot < 0) return j + 1 - i;
        pos = dot + 1;
    }
    return 0; // more parts than segments
}

/** What a field path reaches: a mapping entry (its key's position) or a node (a sequence item, the root). */
export type Reached = PosNode | PosEntry;

/**
 * Walks a document's positions along a field path; keys may themselves contain dots (annotation keys), so at
 * each mapping the key that names the longest run of segments wins, the last such key when keys repeat: the
 * decoder Kubernetes and Argo CD use keeps a repeated key's last value (test/data/kube-yaml-corpus/duplicates.yaml).
 * Linear: each mapping on the way compares each of its keys once, part by part in place (keyLength: nothing split or
 * kept), against the segments from the current one (never joining or slicing the rest of the path), so the cost is
 * bounded by the size of the keys on the path, whatever the number of segments. Returns the deepest entry or node reached.
 */
export function findNode(root: PosNode | undefined, segments: readonly (string | number)[]): Reached | undefined {
    let node: PosNode | undefined = root;
    let found: Reached | undefined = root;
    let i = 0;
    while (node && i < segments.length) {
        if (node.entries) {
            let best: PosEntry | undefined;
            let bestLength = 0;
            for (const entry of node.entries) {
                const length = keyLength(entry.key, segments, i);
                if (length > 0 && length >= bestLength) {
                    best = entry;
                    bestLength = length;
                }
            }
            if (!best) break;
            found = best;
            node = best.value;
            i += bestLength;
        } else if (node.items && typeof segments[i] === "number") {
            const item: PosNode | undefined = node.items[segments[i] as number];
            if (!item) break;
            found = item;
            node = item;
            i++;
        } else {
            break;
        }
    }
    return found;
}

export function startOf(n: Reached | undefined): number | undefined {
    if (!n) return undefined;
    return "keyStart" in n ? n.keyStart : n.start;
}

/**
 * Positions in one file. The decoder (gitops/decode/kube-yaml.ts) keeps each document's node tree with the file's
 * offsets; lines and columns are computed only when something needs one (a finding, a bad-input message).
 */
export class FileLocator {
    private lineCounter?: YAML.LineCounter;

    /** `docs[i].positions`: where document i's fields are (the decoder finds them on first use). */
    constructor(
        private readonly text: string,
        private readonly docs: readonly { readonly positions?: PosNode }[],
    ) {}

    /** Line and column (1-based) of an offset in the file. */
    pos(offset: number | undefined): { line: number; column: number } {
        if (!this.lineCounter) {
            this.lineCounter = new YAML.LineCounter();
            this.lineCounter.addNewLine(0);
            for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1))
                this.lineCounter.addNewLine(i + 1);
        }
        const p = this.lineCounter.linePos(Math.max(0, Math.min(offset ?? 0, this.text.length)));
        return { line: p.line, column: p.col };
    }

    /** The positions of document i (offsets are the file's). */
    document(i: number): PosNode | undefined {
        return this.docs[i]?.positions;
    }
}

/** Where an object is: its file's locator and the path to its node (document, then List item). */
export interface Place {
    locator: FileLocator;
    /** The document's index in the file (empty documents counted). */
    doc: number;
    item?: number;
}

export function placeNode(p: Place): PosNode | undefined {
    const root = p.locator.document(p.doc);
    if (p.item === undefined) return root;
    // A repeated key's last value is the one decoded.
    const items = root?.entries?.filter((e) => e.key === "items").pop()?.value;
    return items?.items?.[p.item] ?? root;
}

export function placeStart(p: Place): { line: number; column: number } {
    return p.locator.pos(placeNode(p)?.start);
}
