/**
 * The gate's terminal output (and the check command's): blocking findings first with the policy's fix,
 * then advisories, then waived findings and notices, then a one-line summary. Names are never cut off: where
 * the table cannot fit the width, columns are printed one under the other. Every string from input goes
 * through support/escape.ts; colour paints only the output's own words.
 */
import type TableType from "cli-table3";
import * as path from "path";
import { PLAIN, Painter } from "../support/color";
import { escapeText as esc } from "../support/escape";
import { Finding } from "../evaluation/rows";
import { judgedInPreview } from "../policies/model/origin";
import { ProjectSubject, ruleCatalogue } from "./subject";

/** The width to render for: the terminal's columns when stdout is a TTY, else 120. */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
    return stream.isTTY && stream.columns && stream.columns >= 40 ? stream.columns : 120;
}

/** Text whose words are separated by single spaces, with none around them: wrapped by slicing it. */
const SPACED = /^\S+(?: \S+)*$/;

/** Wraps text at word boundaries to `width` (a word longer than the width gets a line of its own, whole). */
export function wrap(text: string, width: number, indent = ""): string[] {
    return SPACED.test(text) ? wrapSpaced(text, width, indent) : wrapWords(text, width, indent);
}

/** `wrap` of any text: its words (split at any white space) filled greedily into lines. */
export function wrapWords(text: string, width: number, indent: string): string[] {
    const lines: string[] = [];
    let cur = "";
    for (const word of text.split(/\s+/).filter(Boolean)) {
        if (cur && indent.length + cur.length + 1 + word.length > width) {
            lines.push(indent + cur);
            cur = word;
        } else cur = cur ? `${cur} ${word}` : word;
    }
    if (cur) lines.push(indent + cur);
    return lines;
}

/** `wrap` of SPACED text: each line a slice of it, from a word's start to a later word's end. */
function wrapSpaced(text: string, width: number, indent: string): string[] {
    const lines: string[] = [];
    let start = 0; // the current line's first word
    let end = text.indexOf(" ");
    if (end < 0) return [indent + text];
    for (let from = end + 1; ;) {
        const space = text.indexOf(" ", from);
        const wordEnd = space < 0 ? text.length : space;
        if (indent.length + (end - start) + 1 + (wordEnd - from) > width) {
            lines.push(indent + text.slice(start, end));
            start = from;
        }
        end = wordEnd;
        if (space < 0) break;
        from = space + 1;
    }
    lines.push(indent + text.slice(start, end));
    return lines;
}

/** A finding's file as shown: relative to the current folder when inside it. `shown`: the files shown so far in one rendering. */
function shownFile(file: string, shown: Map<string, string>): string {
    let out = shown.get(file);
    if (out === undefined) {
        const rel = path.isAbsolute(file) ? path.relative(process.cwd(), file) : file;
        out = esc(rel === "" || rel.startsWith("..") ? file : rel);
        shown.set(file, out);
    }
    return out;
}

/**
 * Where a finding is: its file, line and column; for a program's resource (the gate) whose declaration the
 * program's source does not show (engine/source-locations.ts: a name built at run time), that there is none.
 */
function place(f: Finding, shown: Map<string, string>): string {
    if (f.file) return `${shownFile(f.file, shown)}:${f.line ?? 1}${f.column ? `:${f.column}` : ""}`;
    return f.resource && judgedInPreview(f.urn) ? "no source line found" : "";
}

function where(f: Finding, shown: Map<string, string>): string {
    const at = place(f, shown);
    if (!at) return "";
    const synced = f.syncedBy ? `; synced by ${esc(f.syncedBy)}` : "";
    return ` (${at}${synced})`;
}

const ORDER: Finding["status"][] = ["blocking", "advisory", "waived"];
const TITLE: Record<Finding["status"], string> = { blocking: "BLOCKING", advisory: "advisory", waived: "waived" };
const HUE = { blocking: "red", advisory: "yellow", waived: "dim" } as const;

/** A summary line with its verdict painted: the PASS or FAIL that ends it, or the ERROR that follows the subject. */
export function paintVerdict(line: string, paint: Painter): string {
    const m = /: (PASS|FAIL)$/.exec(line) ?? /\): (ERROR): /.exec(line);
    if (!m) return line;
    const at = m.index + m[0].indexOf(m[1]);
    return (
        line.slice(0, at) + paint("bold", paint(m[1] === "PASS" ? "green" : "red", m[1])) + line.slice(at + m[1].length)
    );
}

export function summary(r: ProjectSubject): string {
    if (r.outcome === "error")
        return `${esc(r.name)} (stack ${esc(r.stack)}): ERROR: ${esc(r.error ?? "the gate could not run")}`;
    const n = (s: Finding["status"]) => r.findings.filter((f) => f.status === s).length;
    return `${esc(r.name)} (stack ${esc(r.stack)}): ${r.findings.length} violation(s), ${n("advisory")} advisory, ${n("waived")} waived, ${n("blocking")} blocking: ${r.outcome === "pass" ? "PASS" : "FAIL"}`;
}

/**
 * The default output in pieces, a finding's block a piece (`summaryText` replaces the one-line summary: pko-guard
 * check says what it read). A large repository's output is more than one string can hold: it is written piece by
 * piece (cli/verdict/judged-run.ts), never joined. `paint` colours the statuses and the verdict (none by default).
 */
export function* findingsChunks(
    r: ProjectSubject,
    width = terminalWidth(),
    summaryText = summary(r),
    paint: Painter = PLAIN,
): Generator<string> {
    const fixes = new Map(ruleCatalogue().map((c) => [c.id, c]));
    // A rule's fix, and where `explain` says more, are the same text for each of its findings: wrapped once.
    const fixLines = new Map<string, string[]>();
    const fixOf = (policy: string, remediation: string | undefined) => {
        let lines = fixLines.get(policy);
        if (!lines) {
            const explain = `(more: pko-guard explain ${policy})`;
            lines = wrap(
                remediation ? `fix: ${remediation} ${explain}` : `more: pko-guard explain ${policy}`,
                width,
                "  ",
            );
            fixLines.set(policy, lines);
        }
        return lines;
    };
    // Many findings share a file: each is shown once a rendering.
    const shown = new Map<string, string>();
    for (const status of ORDER) {
        for (const f of r.findings.filter((x) => x.status === status)) {
            const rule = fixes.get(f.policy);
            const out: string[] = [];
            out.push(
                `${paint(HUE[status], TITLE[status])}  ${esc(f.policy)}${rule?.severity ? ` [${rule.severity}]` : ""}`,
            );
            out.push(`  resource: ${f.resource ? esc(f.resource) : "(stack)"}${where(f, shown)}`);
            for (const line of wrap(esc(f.message), width, "    ")) out.push(line);
            if (status === "waived" && f.waiver)
                out.push(
                    ...wrap(
                        `waived: ${esc(f.waiver.reason)}${f.waiver.expires ? ` (until ${esc(f.waiver.expires)})` : ""}`,
                        width,
                        "  ",
                    ),
                );
            // Every finding of a pko-guard rule, advisory and waived too, says how to fix it and where to read more.
            if (rule) out.push(...fixOf(f.policy, rule.remediation));
            out.push("");
            yield out.join("\n") + "\n";
        }
    }
    for (const n of r.notices ?? [])
        yield wrap(`notice: ${n.policy ? `${esc(n.policy)}: ` : ""}${esc(n.message)}`, width).join("\n") + "\n";
    yield paintVerdict(summaryText, paint) + "\n";
}

/** The default output as one string (what the pieces of findingsChunks make). */
export function renderFindings(r: ProjectSubject, width = terminalWidth(), summaryText = summary(r)): string {
    return [...findingsChunks(r, width, summaryText)].join("");
}

const HEAD = ["policy", "resource", "level", "status", "where", "message"];

/**
 * The full table, every column, sized to `width` (names get their full length, the message the rest; where that
 * leaves the message less than MIN_MESSAGE_WIDTH, the findings as records instead: see recordChunks), in pieces:
 * cli-table3 renders `rowsPerTable` rows at a time (a row's height is its own, the columns' widths are fixed), and
 * where two parts meet, the first one's bottom border and the next one's top border are the line between two rows.
 * (cli-table3's time grows faster than its rows, so many small tables beat one: docs/contributing/benchmarks.md.)
 */
export function* fullTableChunks(
    r: ProjectSubject,
    width = terminalWidth(),
    summaryText = summary(r),
    rowsPerTable = 100,
    paint: Painter = PLAIN,
): Generator<string> {
    const shown = new Map<string, string>();
    const rows = r.findings.map((f) => [
        esc(f.policy),
        esc(f.resource),
        f.level,
        f.status,
        place(f, shown),
        esc(f.message),
    ]);
    const widths = HEAD.map((h) => h.length);
    for (const x of rows) for (let i = 0; i < 5; i++) if (x[i].length > widths[i]) widths[i] = x[i].length;
    for (let i = 0; i < 5; i++) widths[i] += 2;
    // borders: one per column plus one
    const used = widths.slice(0, 5).reduce((a, b) => a + b, 0) + HEAD.length + 1;
    if (!Number.isFinite(width) || width - used < MIN_MESSAGE_WIDTH) yield* recordChunks(rows, width, rowsPerTable);
    else yield* tableChunks(rows, [...widths.slice(0, 5), width - used], rowsPerTable);
    for (const n of r.notices ?? []) yield `notice: ${n.policy ? `${esc(n.policy)}: ` : ""}${esc(n.message)}\n`;
    yield paintVerdict(summaryText, paint) + "\n";
}

/** The narrowest message column the full table is drawn with: narrower, each finding's columns are a record. */
const MIN_MESSAGE_WIDTH = 30;

let Table: typeof TableType | undefined;

/** The rows as cli-table3 tables of `rowsPerTable` rows joined into one (see fullTableChunks). */
function* tableChunks(rows: string[][], widths: number[], rowsPerTable: number): Generator<string> {
    // Loaded on the first table: the findings' text and other commands' wrapping (most runs) do not need it.
    Table ??= require("cli-table3") as typeof TableType;
    const Tables = Table;
    // cli-table3 cuts a word longer than its column (with "…"): such a word is broken across lines instead.
    const room = widths[5] - 2;
    const whole = (text: string) =>
        text
            .split(" ")
            .map((w) => (w.length > room ? (w.match(new RegExp(`[^]{1,${room}}`, "g")) ?? []).join(" ") : w))
            .join(" ");
    const render = (part: string[][], head: string[]) => {
        const table = new Tables({ head, style: { head: [], border: [] }, wordWrap: true, colWidths: widths });
        for (const x of part) table.push([...x.slice(0, 5), whole(x[5])]);
        return table.toString();
    };
    if (rows.length === 0) {
        yield render([["(none)", "", "", "", "", "no violations"]], HEAD) + "\n";
        return;
    }
    const twoRows = render([HEAD.map(() => ""), HEAD.map(() => "")], []).split("\n");
    const between = twoRows[2]; // top border, a row, the line between two rows, a row, bottom border
    for (let i = 0; i < rows.length; i += rowsPerTable) {
        const text = render(rows.slice(i, i + rowsPerTable), i === 0 ? HEAD : []);
        const from = i === 0 ? 0 : text.indexOf("\n") + 1;
        const to = i + rowsPerTable < rows.length ? text.lastIndexOf("\n") : text.length;
        yield (i === 0 ? "" : between + "\n") + text.slice(from, to) + "\n";
    }
}

/**
 * The rows where the table cannot fit the width: each finding's columns one under the other, labelled, names
 * whole on their line and the message wrapped, `rowsPerTable` findings a piece.
 */
function* recordChunks(rows: string[][], width: number, rowsPerTable: number): Generator<string> {
    const pad = Math.max(...HEAD.map((h) => h.length)) + 2;
    const label = HEAD.map((h) => `${h}:`.padEnd(pad));
    if (rows.length === 0) {
        yield "no violations\n";
        return;
    }
    for (let i = 0; i < rows.length; i += rowsPerTable) {
        const out: string[] = [];
        for (const x of rows.slice(i, i + rowsPerTable)) {
            for (let c = 0; c < 5; c++) if (x[c] !== "") out.push(label[c] + x[c]);
            const lines = Number.isFinite(width) ? wrap(x[5], Math.max(20, width - pad)) : [x[5]];
            out.push((label[5] + (lines[0] ?? "")).trimEnd(), ...lines.slice(1).map((l) => " ".repeat(pad) + l), "");
        }
        yield out.join("\n") + "\n";
    }
}

/** The full table as one string (what the pieces of fullTableChunks make). */
export function renderFullTable(r: ProjectSubject, width = terminalWidth(), summaryText = summary(r)): string {
    return [...fullTableChunks(r, width, summaryText)].join("");
}
