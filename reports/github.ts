/**
 * GitHub Actions output: one workflow command a finding (`::error` for blocking, `::warning` for advisory,
 * `::notice` for waived findings and unused or expired waivers) with file and line, and a Markdown summary
 * for $GITHUB_STEP_SUMMARY. Input text is made safe by support/escape.ts, then escaped by the runner's rules:
 * data escapes %, \r, \n; property values also escape : and ,.
 */
import { escapeText } from "../support/escape";
import { Finding } from "../evaluation/rows";
import { findingPlace, placeWords, sourceRoot } from "./location";
import { ProjectSubject, ruleCatalogue } from "./subject";

export function escapeData(s: string): string {
    return escapeText(s).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

export function escapeProperty(s: string): string {
    return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

const COMMAND: Record<Finding["status"], string> = { blocking: "error", advisory: "warning", waived: "notice" };
const ORDER: Finding["status"][] = ["blocking", "advisory", "waived"];

function ordered(findings: Finding[]): Finding[] {
    return ORDER.flatMap((s) => findings.filter((f) => f.status === s));
}

/**
 * The workflow commands in pieces, a line a piece: a large repository's commands are more than one string can
 * hold, so they are written piece by piece (cli/pko-guard.ts), never joined.
 */
export function* workflowCommandChunks(subjects: ProjectSubject[]): Generator<string> {
    for (const s of subjects) {
        if (s.outcome === "error") {
            yield `::error title=${escapeProperty(`pko-guard: ${s.name}`)}::${escapeData(s.error ?? "the gate could not run")}\n`;
        }
        const root = s.root ?? sourceRoot(s.programFile);
        for (const f of ordered(s.findings)) {
            const place = findingPlace(f.file ?? s.programFile, root);
            const at =
                place.kind === "repo"
                    ? [
                          `file=${escapeProperty(place.path)}`,
                          `line=${f.line ?? 1}`,
                          ...(f.column ? [`col=${f.column}`] : []),
                      ]
                    : [];
            const props = [...at, `title=${escapeProperty(`${f.policy} (${f.resource || "stack"})`)}`];
            const where = place.kind === "repo" ? "" : `${placeWords(place)}:${f.line ?? 1}: `;
            const waived =
                f.status === "waived"
                    ? `[waived: ${f.waiver?.reason ?? ""}${f.waiver?.expires ? `, until ${f.waiver.expires}` : ""}] `
                    : "";
            yield `::${COMMAND[f.status]} ${props.join(",")}::${escapeData(`${waived}${where}${f.resource ? `${f.resource}${f.syncedBy ? ` (synced by ${f.syncedBy})` : ""}: ` : ""}${f.message}`)}\n`;
        }
        for (const n of s.notices ?? []) {
            yield `::warning title=${escapeProperty(`pko-guard: ${n.policy ?? s.name}`)}::${escapeData(n.message)}\n`;
        }
    }
}

/** The workflow commands as one string (what the pieces of workflowCommandChunks make). */
export function renderWorkflowCommands(subjects: ProjectSubject[]): string {
    return [...workflowCommandChunks(subjects)].join("");
}

/** The pack's own text (a rule's fix) in a table cell: one line, no column break. */
function packCell(s: string): string {
    return s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** Text from input in the step summary (Markdown): inert, whatever it holds. */
function cell(s: string): string {
    return escapeText(s, "markdown");
}

/**
 * GitHub takes at most 1 MiB of a step's summary (its file, in bytes): a larger one is not shown at all ("upload
 * aborted"). A large repository's findings table is more than that (about 370 bytes a finding).
 */
export const STEP_SUMMARY_BYTES = 1024 * 1024;

/** Room kept for the lines every summary has (headings, counts, the line saying what was left out). */
const SUMMARY_RESERVE = 64 * 1024;

/**
 * The step summary in pieces, a line a piece (written piece by piece, never joined, as the workflow commands are).
 * Within `budget` bytes: the verdicts and counts always, then finding rows and notices while they fit; a subject
 * whose rows did not all fit says how many were left out and where they all are.
 */
export function* stepSummaryChunks(subjects: ProjectSubject[], budget = Infinity): Generator<string> {
    const fixes = new Map(ruleCatalogue().map((r) => [r.id, r.remediation ?? ""]));
    let left = budget - SUMMARY_RESERVE;
    const fits = (line: string) => {
        const bytes = Buffer.byteLength(line, "utf8");
        if (bytes > left) {
            left = 0; // nothing after a line left out (rows stay in order)
            return false;
        }
        left -= bytes;
        return true;
    };
    yield "## pko-guard\n\n";
    for (const s of subjects) {
        const n = (st: Finding["status"]) => s.findings.filter((f) => f.status === st).length;
        const verdict = s.outcome === "error" ? "ERROR" : s.outcome === "pass" ? "PASS" : "FAIL";
        yield `### ${cell(s.name)} (stack ${cell(s.stack)}): **${verdict}**\n\n`;
        if (s.outcome === "error") yield `The gate could not run: ${cell(s.error ?? "")}\n\n`;
        yield `${n("blocking")} blocking, ${n("advisory")} advisory, ${n("waived")} waived.\n\n`;
        let omitted = 0;
        if (s.findings.length > 0) {
            yield "| status | policy | resource | message | fix |\n|---|---|---|---|---|\n";
            for (const f of ordered(s.findings)) {
                const status = f.status === "waived" ? `waived (${cell(f.waiver?.reason ?? "")})` : f.status;
                const line = `| ${status} | \`${f.policy}\` | ${cell(f.resource || "stack")}${f.syncedBy ? ` (synced by ${cell(f.syncedBy)})` : ""} | ${cell(f.message)} | ${f.status === "blocking" ? packCell(fixes.get(f.policy) ?? "") : ""} |\n`;
                if (fits(line)) yield line;
                else omitted++;
            }
            yield "\n";
        }
        let omittedNotices = 0;
        for (const n of s.notices ?? []) {
            const line = `- notice: ${n.policy ? `\`${n.policy}\`: ` : ""}${cell(n.message)}\n`;
            if (fits(line)) yield line;
            else omittedNotices++;
        }
        if ((s.notices ?? []).length > omittedNotices) yield "\n";
        if (omitted + omittedNotices > 0) {
            const what = [
                ...(omitted ? [`${omitted} finding(s)`] : []),
                ...(omittedNotices ? [`${omittedNotices} notice(s)`] : []),
            ].join(" and ");
            yield `${what} not shown here: a step summary holds ${STEP_SUMMARY_BYTES / 1024} KiB at most. Every finding is in this step's log (the workflow commands) and in the reports.\n\n`;
        }
    }
}

/** The step summary as one string (what the pieces of stepSummaryChunks make). */
export function renderStepSummary(subjects: ProjectSubject[]): string {
    return [...stepSummaryChunks(subjects)].join("");
}
