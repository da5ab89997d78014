/**
 * Go's `path.Match`, the one implementation in pko-guard: Argo CD's git directories generator filters folders
 * with it, and the provider's yaml/v2 `files` glob matches each path element with it. Semantics follow Go's
 * exactly, proved against Go on test/data/path-match/cases.json: matching works on UTF-8 bytes, a malformed
 * pattern matches nothing (`ErrBadPattern`), and each star chunk keeps its leftmost match (Go does not
 * backtrack) except the last, which must end the name.
 */

const STAR = 0x2a;
const QUESTION = 0x3f;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const CARET = 0x5e;
const DASH = 0x2d;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const RUNE_ERROR = 0xfffd;

type Token =
    | { kind: "byte"; value: number }
    | { kind: "any" }
    | { kind: "class"; negated: boolean; ranges: Array<[number, number]> };

/** Tokens that each take one byte or one character, after an optional run of stars. */
interface Chunk {
    star: boolean;
    tokens: Token[];
}

/** A compiled `path.Match` pattern. */
export interface PathPattern {
    /** Whether the pattern matches all of `name`. */
    matches(name: string): boolean;
}

/** Go's `path.ErrBadPattern` text. */
export const BAD_PATTERN = "syntax error in pattern";

const utf8 = new TextEncoder();

/** The pattern compiled, or `undefined` when it is malformed (Go's `ErrBadPattern`, for every name). */
export function compilePathPattern(pattern: string): PathPattern | undefined {
    const chunks = parse(utf8.encode(pattern));
    if (!chunks) return undefined;
    return { matches: (name) => matchChunks(chunks, utf8.encode(name)) };
}

/** Go's `path.Match(pattern, name)`: `{ matched }`, or `{ matched: false, error: BAD_PATTERN }` for a malformed pattern. */
export function pathMatch(pattern: string, name: string): { matched: boolean; error?: typeof BAD_PATTERN } {
    const p = compilePathPattern(pattern);
    return p ? { matched: p.matches(name) } : { matched: false, error: BAD_PATTERN };
}

/** One character of `b` at `i`: its code point and length; a byte that starts no valid sequence is U+FFFD, one byte. */
function decode(b: Uint8Array, i: number): [number, number] {
    const c = b[i];
    if (c < 0x80) return [c, 1];
    const width = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (width === 0 || i + width > b.length) return [RUNE_ERROR, 1];
    let cp = c & (0xff >> (width + 1));
    for (let k = 1; k < width; k++) {
        const x = b[i + k];
        if ((x & 0xc0) !== 0x80) return [RUNE_ERROR, 1];
        cp = (cp << 6) | (x & 0x3f);
    }
    const min = width === 2 ? 0x80 : width === 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return [RUNE_ERROR, 1];
    return [cp, width];
}

/** The pattern as chunks, or `undefined` when it is malformed. */
function parse(p: Uint8Array): Chunk[] | undefined {
    const chunks: Chunk[] = [];
    let i = 0;
    /** One class member at `i`: an optionally escaped character that is neither `-` nor `]` and is not the last byte. */
    const member = (): number | undefined => {
        if (i >= p.length || p[i] === DASH || p[i] === CLOSE) return undefined;
        if (p[i] === BACKSLASH && ++i >= p.length) return undefined;
        const [cp, n] = decode(p, i);
        if (cp === RUNE_ERROR && n === 1) return undefined;
        i += n;
        return i < p.length ? cp : undefined;
    };
    while (i < p.length) {
        const chunk: Chunk = { star: false, tokens: [] };
        for (; p[i] === STAR; i++) chunk.star = true;
        while (i < p.length && p[i] !== STAR) {
            const c = p[i];
            if (c === QUESTION) {
                chunk.tokens.push({ kind: "any" });
                i++;
            } else if (c === BACKSLASH) {
                if (i + 1 >= p.length) return undefined;
                chunk.tokens.push({ kind: "byte", value: p[i + 1] });
                i += 2;
            } else if (c === OPEN) {
                i++;
                const negated = p[i] === CARET;
                if (negated) i++;
                const ranges: Array<[number, number]> = [];
                while (ranges.length === 0 || p[i] !== CLOSE) {
                    const lo = member();
                    if (lo === undefined) return undefined;
                    let hi = lo;
                    if (p[i] === DASH) {
                        i++;
                        const h = member();
                        if (h === undefined) return undefined;
                        hi = h;
                    }
                    ranges.push([lo, hi]);
                }
                i++;
                chunk.tokens.push({ kind: "class", negated, ranges });
            } else {
                chunk.tokens.push({ kind: "byte", value: c });
                i++;
            }
        }
        chunks.push(chunk);
    }
    return chunks;
}

/** Where the tokens, matched from `at`, end in `s`; -1 when they do not match there. */
function matchTokens(tokens: Token[], s: Uint8Array, at: number): number {
    let i = at;
    for (const t of tokens) {
        if (i >= s.length) return -1;
        if (t.kind === "byte") {
            if (s[i] !== t.value) return -1;
            i++;
            continue;
        }
        const [cp, n] = decode(s, i);
        if (t.kind === "any") {
            if (s[i] === SLASH) return -1;
        } else if (t.ranges.some(([lo, hi]) => lo <= cp && cp <= hi) === t.negated) return -1;
        i += n;
    }
    return i;
}

function matchChunks(chunks: Chunk[], s: Uint8Array): boolean {
    let at = 0;
    next: for (let k = 0; k < chunks.length; k++) {
        const { star, tokens } = chunks[k];
        const last = k === chunks.length - 1;
        if (star && tokens.length === 0) return !s.subarray(at).includes(SLASH);
        // A star skips bytes (never a `/`) until the chunk matches; the last chunk must also end the name.
        for (let from = at; from <= s.length; from++) {
            if (from > at && (!star || s[from - 1] === SLASH)) break;
            const end = matchTokens(tokens, s, from);
            if (end >= 0 && (!last || end === s.length)) {
                at = end;
                continue next;
            }
        }
        return false;
    }
    return at === s.length;
}
