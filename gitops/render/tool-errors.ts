/**
 * One line from a rendering tool's error output, fit to show: the error (not the warnings before it), with the
 * tool's paths made relative to the repository (never a temporary copy's path), a URL's user information removed
 * however the quotes fall around it, quoted text that could come from a document (a value, a generator's config)
 * left out, kustomize's repeated causes said once, and bounded at a segment boundary, keeping the first segment
 * (what failed) and the last ones (why).
 */

/** The longest line shown. */
const MAX_LINE = 300;

/** A path a tool prints and what to show instead ("" for the repository root itself). */
export interface PathMap {
    from: string;
    to: string;
}

/** A file or folder path (no spaces, no quotes): shown, unquoted; anything else quoted is left out. */
const PATH_LIKE =
    /^(?:[\w.@+-]+\/)*[\w.@+-]*(?:\.(?:ya?ml|json|jsonnet|libsonnet|tgz)|\/)$|^(?:[\w.@+-]+\/)+[\w.@+-]+$/;

function mapPaths(text: string, paths: PathMap[]): string {
    let out = text;
    for (const { from, to } of [...paths].sort((a, b) => b.from.length - a.from.length)) {
        if (from === "" || from === "/") continue;
        out = out.split(`${from}/`).join(to === "" ? "" : `${to}/`);
        out = out.split(from).join(to === "" ? "." : to);
    }
    // Any other temporary folder of check's own (its name says nothing to the reader).
    return out.replace(/\/(?:tmp|var\/folders)\/[^\s'"`]*?pko-guard-[\w-]+\/(?:repo\/)?/g, "");
}

/** Quoted paths unquoted; quotes around an error message (kustomize nests them) removed; other quoted text elided. */
function unquote(line: string): string {
    let out = line
        .replace(/'([^'\s]+)'/g, (m, inner: string) => (PATH_LIKE.test(inner) ? inner : m))
        .replace(/"([^"\s]+)"/g, (m, inner: string) => (PATH_LIKE.test(inner) ? inner : m));
    // Innermost quoted spans first: a span holding an error of its own (": ") loses its quotes, others are elided.
    for (let i = 0; i < 8; i++) {
        const next = out.replace(/'([^']*)'/g, (_m, inner: string) => (inner.includes(": ") ? inner : "'…'"));
        if (next === out) break;
        out = next;
    }
    return out.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
}

/** The line's `: `-separated segments, each said once (kustomize repeats a cause in each error that wraps it). */
function onceEach(line: string): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const s of line.split(/\s*: /)) {
        const key = s.trim();
        if (key === "" || seen.has(key)) continue;
        seen.add(key);
        out.push(key);
    }
    return out;
}

/** At most MAX_LINE characters, cut between segments: the first, then as many of the last as fit. */
function bounded(segments: string[]): string {
    const whole = segments.join(": ");
    if (whole.length <= MAX_LINE) return whole;
    const head =
        segments[0].length > MAX_LINE / 2 ? `${segments[0].slice(0, MAX_LINE / 2).replace(/\S*$/, "")}…` : segments[0];
    const tail: string[] = [];
    let size = head.length + 4;
    for (let i = segments.length - 1; i > 0; i--) {
        if (size + segments[i].length + 2 > MAX_LINE) break;
        tail.unshift(segments[i]);
        size += segments[i].length + 2;
    }
    return tail.length > 0 ? `${head}: …: ${tail.join(": ")}` : head;
}

/** One line from a tool's error output (see the header); `paths` maps the tool's folders to what to show. */
export function firstErrorLine(stderr: string, paths: PathMap[] = []): string {
    // A quoted block over several lines (kustomize quotes a generator's whole config between backquotes, its reason
    // after them) is elided first, so that the line keeps the reason and never the config.
    const lines = mapPaths(stderr, paths)
        // A URL's user information (a token in `https://x:TOKEN@host/...`), wherever the quotes around it are.
        .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1…@")
        .replace(/`[^`]*`/g, "`…`")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "");
    const line =
        lines.find((l) => l.startsWith("Error:")) ??
        lines.find((l) => !/^(Flag --|WARNING|walk\.go)/.test(l)) ??
        lines[0] ??
        "no error output";
    const cleaned = unquote(line.replace(/^Error: /, "")).replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
    return bounded(onceEach(cleaned));
}
