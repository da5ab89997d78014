/**
 * What the harness prints. By default one line per fixture (verdict, fixture, legs, rows) and, below, the
 * detail of mismatches and errors only; `--verbose` prints the full table (fixture, leg, policy or check,
 * resource, expected, got, result). Colour only on a terminal, and never under NO_COLOR; tables fit the
 * terminal's width.
 */
import { escapeText } from "../support/escape";
import Table from "cli-table3";
import { wrap } from "../reports/table";
import { progressLine } from "../support/progress";
import { FixtureVerdict } from "./verdict";

const RESULT: Record<string, string> = {
    match: "match",
    mismatch: "MISMATCH",
    error: "ERROR",
    skipped: "skipped",
};

export interface Style {
    color: boolean;
    /** Columns available (the terminal's, else a default that fits a CI log). */
    width: number;
}

/** Colour when the stream is a terminal and NO_COLOR is unset or empty (https://no-color.org). */
export function styleFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Style {
    const color = stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
    return { color, width: stream.isTTY && stream.columns ? stream.columns : 120 };
}

const CODES: Record<string, [number, number]> = {
    red: [31, 39],
    green: [32, 39],
    yellow: [33, 39],
    dim: [2, 22],
    bold: [1, 22],
};

function paint(style: Style, name: keyof typeof CODES, text: string): string {
    return style.color ? `\u001b[${CODES[name][0]}m${text}\u001b[${CODES[name][1]}m` : text;
}

const OUTCOME_COLOR: Record<string, keyof typeof CODES> = {
    match: "green",
    mismatch: "red",
    error: "red",
    skipped: "yellow",
};

/** The rows a fixture's legs reported (the first leg that ran; legs agree when parity holds). */
function rowCount(v: FixtureVerdict): number {
    const ran = v.legs.find((l) => l.status === "ran");
    return ran?.status === "ran" ? ran.rows.length : 0;
}

/** One line per fixture: verdict, fixture, legs (each with its status), rows. */
export function renderFixtureLines(verdicts: FixtureVerdict[], style: Style): string {
    const nameW = Math.min(Math.max(0, ...verdicts.map((v) => v.fixture.length)), Math.max(20, style.width - 50));
    return verdicts
        .map((v) => {
            const verdict = paint(style, OUTCOME_COLOR[v.outcome] ?? "bold", RESULT[v.outcome].padEnd(8));
            const legs =
                v.legs.map((l) => (l.status === "ran" ? l.leg : `${l.leg}:${l.status}`)).join(" ") || "no legs";
            const n = rowCount(v);
            return `${verdict} ${escapeText(v.fixture).padEnd(nameW)}  ${legs}  ${n} row${n === 1 ? "" : "s"}`;
        })
        .join("\n");
}

/** The table of checks; `onlyProblems` keeps mismatches and errors. Empty when there is nothing to show. */
export function renderTable(verdicts: FixtureVerdict[], opts: { onlyProblems?: boolean; style?: Style } = {}): string {
    const style = opts.style ?? { color: false, width: 120 };
    // fixture, leg, policy or check, resource, expected, got: as wide as their longest entry (names are not
    // cut), the result column takes what is left of the width (the borders take one column each, 8 in all).
    const checks = verdicts
        .flatMap((v) => v.checks)
        .filter((c) => !opts.onlyProblems || c.outcome === "mismatch" || c.outcome === "error");
    const longest = (f: (c: (typeof checks)[number]) => string, head: string) =>
        Math.max(head.length, ...checks.map((c) => f(c).length)) + 2;
    const widths = [
        longest((c) => c.fixture, "fixture"),
        longest((c) => c.leg, "leg"),
        longest((c) => c.policy ?? `check: ${c.check}`, "policy or check"),
        Math.min(
            longest((c) => c.resource, "resource"),
            60,
        ),
        10,
        Math.max(
            5,
            longest((c) => String(c.got), "got"),
        ),
    ];
    widths.push(Math.max(24, Math.min(80, style.width - 8 - widths.reduce((a, b) => a + b, 0))));
    const table = new Table({
        head: ["fixture", "leg", "policy or check", "resource", "expected", "got", "result"],
        style: { head: [], border: [] },
        wordWrap: true,
        colWidths: widths,
    });
    let rows = 0;
    for (const v of verdicts) {
        for (const c of v.checks) {
            if (opts.onlyProblems && c.outcome !== "mismatch" && c.outcome !== "error") continue;
            // Names, resources and notes come from fixtures and tool output: escaped (support/escape.ts).
            const result = c.note ? `${RESULT[c.outcome]}: ${escapeText(c.note)}` : RESULT[c.outcome];
            table.push([
                escapeText(c.fixture),
                c.leg,
                escapeText(c.policy ?? `check: ${c.check}`),
                escapeText(c.resource),
                String(c.expected),
                String(c.got),
                result,
            ]);
            rows++;
        }
    }
    return rows === 0 ? "" : table.toString();
}

/**
 * The mismatches and errors, one entry each, wrapped to the width with names whole: fixture, leg, policy (or
 * the leg's check) and resource, expected and got, and the note.
 */
export function renderProblems(verdicts: FixtureVerdict[], style: Style): string {
    const out: string[] = [];
    for (const v of verdicts) {
        for (const c of v.checks) {
            if (c.outcome !== "mismatch" && c.outcome !== "error") continue;
            const what = escapeText(c.policy ?? `check: ${c.check}`);
            const head = `${RESULT[c.outcome]} ${escapeText(c.fixture)} [${c.leg}] ${what}${c.resource ? ` on ${escapeText(c.resource)}` : ""}`;
            const lines = wrap(
                `${head}: ${c.note !== undefined ? escapeText(c.note) : `expected ${c.expected}, got ${c.got}`}`,
                Math.max(40, style.width - 1),
                "    ",
            );
            lines[0] = lines[0]
                .trimStart()
                .replace(RESULT[c.outcome], paint(style, OUTCOME_COLOR[c.outcome], RESULT[c.outcome]));
            out.push(...lines);
        }
    }
    return out.join("\n");
}

/** Everything the harness prints on stdout for a run. */
export function renderRun(verdicts: FixtureVerdict[], opts: { verbose: boolean; style: Style }): string {
    const parts = [renderFixtureLines(verdicts, opts.style)];
    const detail = opts.verbose ? renderTable(verdicts, { style: opts.style }) : renderProblems(verdicts, opts.style);
    if (detail) parts.push("", detail);
    parts.push("", wrap(verdictSummaryLine(verdicts), Math.max(40, opts.style.width - 1)).join("\n"));
    return parts.join("\n");
}

export function verdictSummaryLine(verdicts: FixtureVerdict[]): string {
    const n = (o: string) => verdicts.filter((v) => v.outcome === o).length;
    const skipped = verdicts.flatMap((v) => v.legs).flatMap((l) => (l.status === "skipped" ? [l] : []));
    const mockOnly = skipped.filter((l) => l.reason.startsWith("mock-only")).length;
    const realOnly = skipped.filter((l) => l.reason.startsWith("real-only")).length;
    const manifest = skipped.filter(
        (l) => l.reason.startsWith("manifest fixture") || l.reason.startsWith("manifest-only"),
    ).length;
    const reasons = [
        mockOnly > 0 ? `${mockOnly} as mock-only` : "",
        realOnly > 0 ? `${realOnly} as real-only` : "",
        manifest > 0 ? `${manifest} as manifest fixture(s) the leg does not run` : "",
        skipped.length - mockOnly - realOnly - manifest > 0
            ? `${skipped.length - mockOnly - realOnly - manifest} stopped by the gate before deploy`
            : "",
    ].filter(Boolean);
    const legs =
        skipped.length > 0
            ? ` (${skipped.length} leg run(s) skipped: ${reasons.join(", ")}; not counted as matches)`
            : "";
    const partial = verdicts.filter((v) => v.outcome === "match" && v.legs.some((l) => l.status === "skipped")).length;
    const match = partial > 0 ? `${n("match")} match (${partial} of them with a leg skipped)` : `${n("match")} match`;
    return `${verdicts.length} fixture(s): ${match}, ${n("mismatch")} mismatch, ${n("error")} error, ${n("skipped")} skipped${legs}`;
}

/** Progress on stderr while fixtures run, only when it is a terminal (one line, rewritten in place). */
export function progress(stream: NodeJS.WriteStream): {
    start(name: string, index: number, total: number): void;
    done(): void;
} {
    const line = progressLine(stream);
    return {
        start: (name, index, total) => line.show(`[harness] ${index + 1}/${total} ${name}`),
        done: () => line.done(),
    };
}
