/**
 * "Did you mean" for names the command knows (rule names for `explain`).
 * It follows commander's own measure, so suggestions agree: optimal string alignment distance, at most 3 edits and over
 * 40% of the longer name shared; failing that, candidates that contain what was typed (`resync-floor`).
 */

/** Edits (insert, delete, substitute, swap neighbours) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
    const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
    for (let j = 0; j <= b.length; j++) d[0][j] = j;
    for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
            const cost = a[i - 1] === b[j - 1] ? 0 : 1;
            d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
                d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.length][b.length];
}

const MAX_DISTANCE = 3;
const MIN_SIMILARITY = 0.4;
/** Typed text shorter than this is not looked for inside names (it would be found everywhere). */
const MIN_PART = 4;
/** More names than this holding what was typed suggest none of them (`stack` is in most rules' names). */
const MAX_PARTS = 4;

/** The candidates `typed` most likely means, in the candidates' order; none when nothing is near. */
export function suggest(typed: string, candidates: readonly string[]): string[] {
    let best = MAX_DISTANCE + 1;
    let near: string[] = [];
    for (const c of candidates) {
        const distance = editDistance(typed, c);
        const longer = Math.max(typed.length, c.length);
        if (distance > MAX_DISTANCE || (longer - distance) / longer <= MIN_SIMILARITY) continue;
        if (distance < best) {
            best = distance;
            near = [c];
        } else if (distance === best) near.push(c);
    }
    if (near.length > 0 || typed.length < MIN_PART) return near;
    const lower = typed.toLowerCase();
    const holding = candidates.filter((c) => c.toLowerCase().includes(lower));
    return holding.length <= MAX_PARTS ? holding : [];
}

/** " (did you mean X?)", " (did you mean one of X, Y?)", or "" when there is nothing to suggest. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
    const s = suggest(typed, candidates);
    if (s.length === 0) return "";
    return s.length === 1 ? ` (did you mean ${s[0]}?)` : ` (did you mean one of ${s.join(", ")}?)`;
}
