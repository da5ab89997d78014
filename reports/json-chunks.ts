/**
 * `JSON.stringify(value, null, indent)` in pieces, never joined: a report of a large repository is more than one
 * JavaScript string can hold (V8's limit is 2^29-24 characters on Node 20), so JSON and SARIF are written piece by
 * piece (./write.ts). No maintained streaming stringifier is among our dependencies; this follows ECMA-262's
 * SerializeJSON* steps and leaves every leaf to the engine's own JSON.stringify, so the bytes are the engine's
 * (long strings are sliced without splitting a surrogate pair). Small plain subtrees are sized, then stringified
 * whole, so a getter in one is read twice. Cost: docs/contributing/benchmarks.md.
 */

/** About the size of each piece (pieces end between values; a long string leaf is sliced to this size). */
const PIECE = 1 << 16;

type Holder = { toJSON?: unknown };

/** The value JSON.stringify serializes for `value` under `key`: after toJSON and unwrapping. */
function resolve(value: unknown, key: string): unknown {
    if ((typeof value === "object" && value !== null) || typeof value === "bigint") {
        const toJSON = (value as Holder).toJSON;
        if (typeof toJSON === "function") value = toJSON.call(value, key);
    }
    if (typeof value === "object" && value !== null) {
        if (value instanceof Number) return Number(value);
        if (value instanceof String) return String(value);
        if (value instanceof Boolean) return Boolean.prototype.valueOf.call(value);
        if (value instanceof BigInt) return BigInt.prototype.valueOf.call(value);
    }
    return value;
}

/** Whether JSON.stringify writes the resolved value at all (else: left out of an object, `null` in an array). */
function written(value: unknown): boolean {
    return value !== undefined && typeof value !== "function" && typeof value !== "symbol";
}

/** How deep a subtree that is one piece may nest (deeper ones are walked, and a cycle is found by the walk). */
const DEPTH = 64;

/**
 * What is left of `budget` (characters, about) once `v` (a resolved object) is written, or less than 0 when it is
 * not a plain subtree the engine can stringify as one piece: arrays and plain objects only (no toJSON, no wrapper or
 * class instance anywhere below: those are walked), nested at most DEPTH deep. A cycle never fits.
 */
function fits(v: object, budget: number, depth = 0): number {
    if (depth > DEPTH || typeof (v as Holder).toJSON === "function") return -1;
    if (Array.isArray(v)) {
        budget -= 2 + v.length;
        for (let i = 0; i < v.length && budget >= 0; i++) budget = fitsValue(v[i], budget, depth);
        return budget;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return -1;
    budget -= 2;
    for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        budget = fitsValue((v as Record<string, unknown>)[k], budget - k.length - 4, depth);
        if (budget < 0) return budget;
    }
    return budget;
}

function fitsValue(v: unknown, budget: number, depth: number): number {
    if (typeof v === "string") return budget - v.length - 2;
    if (typeof v === "object" && v !== null) return fits(v, budget, depth + 1);
    return typeof v === "bigint" ? -1 : budget - 8;
}

/** The pieces of JSON.stringify(value, null, indent) (indent: spaces, at most 10, as JSON.stringify takes it). */
export function* jsonChunks(value: unknown, indent = 0): Generator<string> {
    const writer = new ChunkWriter(indent);
    const top = resolve(value, "");
    if (!written(top)) throw new TypeError(`jsonChunks: JSON.stringify writes no text for ${typeof top}`);
    yield* writer.serialize(top, "");
    if (writer.buf) yield writer.buf;
}

/** One jsonChunks run: its layout, the text not yet yielded, and the objects being written (a cycle throws). */
class ChunkWriter {
    /** The text written since the last piece. */
    buf = "";
    private readonly gap: string;
    private readonly colon: string;
    private readonly open = new Set<object>();

    constructor(indent: number) {
        this.gap = " ".repeat(Math.max(0, Math.min(10, Math.trunc(indent))));
        this.colon = this.gap ? ": " : ":";
    }

    /**
     * The engine's text of `items` (plain, see fits) as the elements of an array standing at `prefix`: each
     * after its separator ("\n" and the elements' indentation), without the array's brackets. The engine writes
     * them at their depth (wrapped in as many arrays as the depth, then cut out), so no line is re-indented.
     */
    private elements(items: unknown[], prefix: string): string {
        const gap = this.gap;
        const depth = gap ? prefix.length / gap.length : 0;
        let wrapped: unknown = items;
        for (let d = 0; d < depth; d++) wrapped = [wrapped];
        const text = JSON.stringify(wrapped, null, gap);
        let head = 1; // "[" of each wrapping array with its line break and the next one's indentation, then the array's own "["
        let tail = 1 + (gap ? 1 + prefix.length : 0); // the array's own line break, indentation and "]", then the wrappers'
        for (let d = 0; d < depth; d++) {
            head += 2 + (d + 1) * gap.length;
            tail += 2 + d * gap.length;
        }
        return text.slice(head, text.length - tail);
    }

    private *longString(s: string): Generator<string> {
        this.buf += '"';
        for (let start = 0; start < s.length;) {
            let end = Math.min(s.length, start + PIECE);
            // never between the two halves of a pair (each half alone would be escaped as a lone surrogate)
            const last = s.charCodeAt(end - 1);
            if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
            const quoted = JSON.stringify(s.slice(start, end));
            this.buf += quoted.slice(1, -1);
            yield this.buf;
            this.buf = "";
            start = end;
        }
        this.buf += '"';
    }

    /** Writes `v` (resolved) standing at `prefix`, yielding a piece whenever the text reaches PIECE. */
    *serialize(v: unknown, prefix: string): Generator<string> {
        if (typeof v === "string") {
            if (v.length > PIECE) yield* this.longString(v);
            else this.buf += JSON.stringify(v);
            return;
        }
        if (typeof v !== "object" || v === null) {
            // null, booleans, numbers (non-finite ones are null); a BigInt throws TypeError as JSON.stringify's does
            this.buf += JSON.stringify(v);
            return;
        }
        if (fits(v, PIECE) >= 0) {
            this.buf +=
                Array.isArray(v) && v.length > 0
                    ? `[${this.elements(v, prefix)}${this.gap ? `\n${prefix}` : ""}]`
                    : JSON.stringify(v, null, this.gap).replace(/\n/g, `\n${prefix}`);
            return;
        }
        if (this.open.has(v)) throw new TypeError("Converting circular structure to JSON");
        this.open.add(v);
        if (Array.isArray(v)) yield* this.array(v, prefix);
        else yield* this.object(v, prefix);
        this.open.delete(v);
    }

    /** An array too large for one piece: runs of elements that fit are written by the engine, a run at a time; the others are walked. */
    private *array(v: unknown[], prefix: string): Generator<string> {
        const inner = prefix + this.gap;
        const next = this.gap ? `\n${inner}` : "";
        const n = v.length;
        for (let i = 0; i < n;) {
            let j = i;
            for (let budget = PIECE; j < n; j++) {
                const item = v[j];
                budget = fitsValue(item, budget, 0);
                if (budget < 0) break;
            }
            if (j > i) {
                this.buf += (i === 0 ? "[" : ",") + this.elements(v.slice(i, j), prefix);
                i = j;
            } else {
                this.buf += (i === 0 ? "[" : ",") + next;
                const item = resolve(v[i], String(i));
                if (written(item)) yield* this.serialize(item, inner);
                else this.buf += "null";
                i++;
            }
            if (this.buf.length >= PIECE) {
                yield this.buf;
                this.buf = "";
            }
        }
        this.buf += (this.gap ? `\n${prefix}` : "") + "]";
    }

    /** An object too large for one piece: each member written in turn. */
    private *object(v: object, prefix: string): Generator<string> {
        const inner = prefix + this.gap;
        const next = this.gap ? `\n${inner}` : "";
        let first = true;
        for (const k of Object.keys(v)) {
            const item = resolve((v as Record<string, unknown>)[k], k);
            if (!written(item)) continue;
            this.buf += (first ? "{" : ",") + next + JSON.stringify(k) + this.colon;
            first = false;
            yield* this.serialize(item, inner);
            if (this.buf.length >= PIECE) {
                yield this.buf;
                this.buf = "";
            }
        }
        this.buf += first ? "{}" : (this.gap ? `\n${prefix}` : "") + "}";
    }
}
