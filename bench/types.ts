/** The shapes the benchmarks share: a resource as the bench builds it, a figure's target. */
export interface TestResourceLike {
    type: string;
    name: string;
    props: unknown;
}

/** A target a figure is judged against (the issue that set it, for the reader). */
export interface Target {
    op: "<=" | "<" | ">=";
    value: number;
    source: string;
}

/** One measured figure of a part; `value` null when the part ran but could not measure it (and why, in `note`). */
export interface Figure {
    name: string;
    value: number | null;
    unit: string;
    target: Target;
    note?: string;
}

/** What a part of npm run bench returns: its raw data (kept in results.json) and its figures with targets. */
export interface PartOutput {
    data: Record<string, unknown>;
    figures: Figure[];
}
