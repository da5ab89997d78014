/**
 * Where a manifest document's fields are: the small tree that locating a finding needs (each mapping's scalar
 * keys and where they start, each sequence item's start), from either parse of a document (gitops/decode/kube-yaml.ts).
 * From js-yaml's events only for the documents it answers exactly (no anchors, aliases, tags, explicit keys or
 * byte order mark), else undefined and the exact path answers; only the path to a finding is ever built.
 * test/unit/gitops/decode/yaml-positions.spec.ts requires both trees to be equal wherever the fast one answers.
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

/** What the listener reads of js-yaml's parser state (its type declarations leave out the node's own fields). */
type ParseState = jsyaml.State & { kind: string | null; result: unknown; tag: string | null };

// A recorded node is four numbers: where its parse began, where it ended, the index of the node after its
// subtree (its children are the nodes from its own index + 1 up to that one, subtree by subtree), and what it is.
const OPEN = 0;
const END = 1;
const NEXT = 2;
const INFO = 3;
const WIDTH = 4;
// INFO: the node's kind, two flags, and (a quoted scalar) its value's index in `strings` plus one, shifted.
const NONE = 0;
const SCALAR = 1;
const MAPPING = 2;
const SEQUENCE = 3;
const KIND = 3;
/** Its only child has its result and kind: js-yaml composed the node by first trying it as a mapping's key. */
const SOLE = 4;
/** A sequence with fewer recorded items than values (an empty item, which has no node of its own). */
const SHORT = 8;
const STRING_SHIFT = 4;

function kindCode(kind: string | null): number {
    return kind === "scalar" ? SCALAR : kind === "mapping" ? MAPPING : kind === "sequence" ? SEQUENCE : NONE;
}

/**
 * js-yaml's parse events of the documents of one stream, recorded while the fast path decodes them (its
 * `listener`), as numbers in one typed array (four a node) and the values of quoted scalars (a key's text):
 * small, and outside the collected heap. `positions` builds a document's tree from them when it is asked for
 * (a finding's line), so a document is parsed once whether or not it gets one.
 */
export class ParseLog {
    private ints = new Int32Array(1 << 12);
    private nodes = 0;
    private strings: string[] = [];
    private text = "";
    // While a document is parsed: the open nodes, their children so far, and the last closed node at each depth.
    private depth = 0;
    private openAt: number[] = [];
    private childCount: number[] = [];
    private lastResult: unknown[] = [];
    private lastKind: number[] = [];

    /** The listener to give js-yaml's `load`. */
    readonly listener = (event: jsyaml.EventType, parsed: jsyaml.State): void => {
        const state = parsed as ParseState;
        const d = this.depth;
        if (event === "open") {
            const at = this.nodes++;
            if (this.nodes * WIDTH > this.ints.length) {
                const grown = new Int32Array(this.ints.length * 2);
                grown.set(this.ints);
                this.ints = grown;
            }
            this.ints[at * WIDTH + OPEN] = state.position;
            if (d > 0) this.childCount[d - 1]++;
            this.openAt[d] = at;
            this.childCount[d] = 0;
            this.depth = d + 1;
            return;
        }
        const up = d - 1;
        this.depth = up;
        const at = this.openAt[up];
        const kind = kindCode(state.kind);
        let info = kind;
        const children = this.childCount[up];
        if (children === 1 && this.lastKind[d] === kind && this.lastResult[d] === state.result) info |= SOLE;
        if (kind === SEQUENCE && children !== (state.result as unknown[]).length) info |= SHORT;
        if (kind === SCALAR && state.tag === null && typeof state.result === "string") {
            const q = this.text.charCodeAt(contentStart(this.text, this.ints[at * WIDTH + OPEN]));
            if (q === 0x22 || q === 0x27) info |= this.strings.push(state.result) << STRING_SHIFT;
        }
        const base = at * WIDTH;
        this.ints[base + END] = state.position;
        this.ints[base + NEXT] = this.nodes;
        this.ints[base + INFO] = info;
        this.lastResult[up] = state.result;
        this.lastKind[up] = kind;
    };

    /** Starts recording a document (the text js-yaml parses); returns its mark for `positions` and `drop`. */
    begin(text: string): number {
        this.text = text;
        this.depth = 0;
        return this.nodes;
    }

    /** Forgets a document's events (one js-yaml did not parse, or the fast path did not keep). */
    drop(mark: number): void {
        this.nodes = mark;
        this.depth = 0;
    }

    /** The stream is read: the parse's transient state is let go and the array trimmed to what it holds. */
    end(): void {
        this.text = "";
        this.openAt = [];
        this.childCount = [];
        this.lastResult = [];
        this.lastKind = [];
        if (this.ints.length > this.nodes * WIDTH) this.ints = this.ints.slice(0, this.nodes * WIDTH);
    }

    /**
     * The positions of the document recorded from `mark` (text: the chunk js-yaml parsed, at `offset` in the
     * stream), or undefined when it holds something this does not answer for exactly (see the header).
     */
    positions(mark: number, text: string, offset: number): PosNode | undefined {
        if (UNSUPPORTED.test(text) || mark >= this.nodes || (this.ints[mark * WIDTH + INFO] & KIND) === NONE)
            return undefined;
        try {
            this.check(mark, text);
        } catch {
            return undefined;
        }
        return this.node(mark, text, offset);
    }

    /** The node a recorded node stands for: js-yaml composed a block node by first trying it as a mapping's key. */
    private own(outer: number): number {
        let e = outer;
        while ((this.ints[e * WIDTH + INFO] & SOLE) !== 0) e++; // the only child is the next node
        return e;
    }

    /** A mapping's key (recorded node k, a scalar): its text, or its value when quoted. */
    private key(k: number, text: string, keyStart: number): string {
        const q = text.charCodeAt(keyStart);
        return q === 0x22 || q === 0x27
            ? this.strings[(this.ints[k * WIDTH + INFO] >>> STRING_SHIFT) - 1]
            : text.slice(keyStart, this.ints[k * WIDTH + END]).trimEnd();
    }

    /** Whether a mapping's key (recorded node k) holds a line break: its text is looked at, and only made when it has one. */
    private multiline(k: number, text: string): boolean {
        const keyStart = contentStart(text, this.ints[k * WIDTH + OPEN]);
        const end = this.ints[k * WIDTH + END];
        const q = text.charCodeAt(keyStart);
        if (q !== 0x22 && q !== 0x27) {
            let breaks = false;
            for (let i = keyStart; i < end && !breaks; i++) {
                const c = text.charCodeAt(i);
                breaks = c === 0x0a || c === 0x0d;
            }
            if (!breaks) return false; // nor has the key, a part of that text
        }
        const key = this.key(k, text, keyStart);
        return key.includes("\n") || key.includes("\r");
    }

    /** Throws Bail when a node of the document is one the positions do not answer for (see the header). */
    private check(outer: number, text: string): void {
        const ints = this.ints;
        const e = this.own(outer);
        const next = ints[e * WIDTH + NEXT];
        const kind = ints[e * WIDTH + INFO] & KIND;
        if (kind === MAPPING) {
            for (let k = e + 1; k < next;) {
                const v = ints[k * WIDTH + NEXT];
                if (v >= next) throw new Bail(); // a key without a value
                if ((ints[k * WIDTH + INFO] & KIND) !== SCALAR || v !== k + 1) throw new Bail();
                if (this.multiline(k, text)) throw new Bail();
                const vKind = ints[v * WIDTH + INFO] & KIND;
                if (vKind === MAPPING || vKind === SEQUENCE) this.check(v, text);
                k = ints[v * WIDTH + NEXT];
            }
        } else if (kind === SEQUENCE) {
            for (let c = e + 1; c < next; c = ints[c * WIDTH + NEXT]) {
                if ((ints[c * WIDTH + INFO] & KIND) === NONE) throw new Bail(); // an empty item
                this.check(c, text);
            }
            if ((ints[e * WIDTH + INFO] & SHORT) !== 0) throw new Bail();
        } else if (kind !== SCALAR || next !== e + 1) {
            throw new Bail();
        }
    }

    /** A checked node's positions: a scalar's start, or a collection whose entries or items are read when asked for. */
    node(outer: number, text: string, offset: number): PosNode {
        const e = this.own(outer);
        const ints = this.ints;
        const start = contentStart(text, ints[e * WIDTH + OPEN]);
        const kind = ints[e * WIDTH + INFO] & KIND;
        if (kind === MAPPING) {
            // A block mapping starts at its first key; a flow mapping at its brace.
            const first =
                e + 1 < ints[e * WIDTH + NEXT] && text.charCodeAt(start) !== 0x7b
                    ? contentStart(text, ints[(e + 1) * WIDTH + OPEN])
                    : start;
            return new LoggedMapping(this, e, text, offset, first + offset);
        }
        if (kind === SEQUENCE) return new LoggedSequence(this, e, text, offset, start + offset);
        return { start: start + offset };
    }

    /** The entries of checked mapping e. */
    entriesOf(e: number, text: string, offset: number): PosEntry[] {
        const ints = this.ints;
        const next = ints[e * WIDTH + NEXT];
        const entries: PosEntry[] = [];
        for (let k = e + 1; k < next;) {
            const v = k + 1;
            const keyStart = contentStart(text, ints[k * WIDTH + OPEN]);
            const key = this.key(k, text, keyStart);
            const vKind = ints[v * WIDTH + INFO] & KIND;
            entries.push(
                vKind === MAPPING || vKind === SEQUENCE
                    ? { key, keyStart: keyStart + offset, value: this.node(v, text, offset) }
                    : { key, keyStart: keyStart + offset },
            );
            k = ints[v * WIDTH + NEXT];
        }
        return entries;
    }

    /** The items of checked sequence e. */
    itemsOf(e: number, text: string, offset: number): PosNode[] {
        const ints = this.ints;
        const next = ints[e * WIDTH + NEXT];
        const items: PosNode[] = [];
        for (let c = e + 1; c < next; c = ints[c * WIDTH + NEXT]) items.push(this.node(c, text, offset));
        return items;
    }
}

/**
 * A mapping of the fast positions: its entries are read from the log when first asked for, so that a document's
 * positions hold only what locating its findings walked (a whole tree a document was as large as its value).
 */
class LoggedMapping implements PosNode {
    private read?: PosEntry[];
    constructor(
        private readonly log: ParseLog,
        private readonly at: number,
        private readonly text: string,
        private readonly offset: number,
        readonly start: number,
    ) {}
    get entries(): PosEntry[] {
        return (this.read ??= this.log.entriesOf(this.at, this.text, this.offset));
    }
}

/** A sequence of the fast positions: its items are read from the log when first asked for (see LoggedMapping). */
class LoggedSequence implements PosNode {
    private read?: PosNode[];
    constructor(
        private readonly log: ParseLog,
        private readonly at: number,
        private readonly text: string,
        private readonly offset: number,
        readonly start: number,
    ) {}
    get items(): PosNode[] {
        return (this.read ??= this.log.itemsOf(this.at, this.text, this.offset));
    }
}
