/**
 * GitHub Actions output: one workflow command a finding (`::error` for blocking, `::warning` for advisory,
 * `::notice` for waived findings and unused or expired waivers) with file and line, and a Markdown summary
 * for $GITHUB_STEP_SUMMARY (verdict table, blocking first). Files follow the one rule of ./location.ts,
 * as SARIF does: relative to the repository root (where actions/checkout puts the repository, the runner's
 * working directory); standard input and files outside the repository have no `file=` and are named in the
 * message. Text from input is first made safe by
 * core/escape.ts (no control character, no workflow-command marker, Markdown and HTML inert in the summary),
 * then escaped by the runner's rules: data escapes %, \r, \n; property values also escape : and ,.
 */
import { escapeText } from "../../core/escape";
import { Finding } from "../../core/rows";
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

export function renderWorkflowCommands(subjects: ProjectSubject[]): string {
    const lines: string[] = [];
    for (const s of subjects) {
        if (s.outcome === "error") {
            lines.push(`::error title=${escapeProperty(`pko-guard: ${s.name}`)}::${escapeData(s.error ?? "the gate could not run")}`);
        }
        const root = s.root ?? sourceRoot(s.programFile);
        for (const f of ordered(s.findings)) {
            const place = findingPlace(f.file ?? s.programFile, root);
            const at = place.kind === "repo" ? [`file=${escapeProperty(place.path)}`, `line=${f.line ?? 1}`, ...(f.column ? [`col=${f.column}`] : [])] : [];
            const props = [...at, `title=${escapeProperty(`${f.policy} (${f.resource || "stack"})`)}`];
            const where = place.kind === "repo" ? "" : `${placeWords(place)}:${f.line ?? 1}: `;
            const waived = f.status === "waived" ? `[waived: ${f.waiver?.reason ?? ""}${f.waiver?.expires ? `, until ${f.waiver.expires}` : ""}] ` : "";
            lines.push(`::${COMMAND[f.status]} ${props.join(",")}::${escapeData(`${waived}${where}${f.resource ? `${f.resource}${f.syncedBy ? ` (synced by ${f.syncedBy})` : ""}: ` : ""}${f.message}`)}`);
        }
        for (const n of s.notices ?? []) {
            lines.push(`::warning title=${escapeProperty(`pko-guard: ${n.policy ?? s.name}`)}::${escapeData(n.message)}`);
        }
    }
    return lines.length > 0 ? lines.join("\n") + "\n" : "";
}

/** The pack's own text (a rule's fix) in a table cell: one line, no column break. */
function packCell(s: string): string {
    return s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** Text from input in the step summary (Markdown): inert, whatever it holds. */
function cell(s: string): string {
    return escapeText(s, "markdown");
}

export function renderStepSummary(subjects: ProjectSubject[]): string {
    const fixes = new Map(ruleCatalogue().map((r) => [r.id, r.remediation ?? ""]));
    const out: string[] = ["## pko-guard", ""];
    for (const s of subjects) {
        const n = (st: Finding["status"]) => s.findings.filter((f) => f.status === st).length;
        const verdict = s.outcome === "error" ? "ERROR" : s.outcome === "pass" ? "PASS" : "FAIL";
        out.push(`### ${cell(s.name)} (stack ${cell(s.stack)}): **${verdict}**`, "");
        if (s.outcome === "error") out.push(`The gate could not run: ${cell(s.error ?? "")}`, "");
        out.push(`${n("blocking")} blocking, ${n("advisory")} advisory, ${n("waived")} waived.`, "");
        if (s.findings.length > 0) {
            out.push("| status | policy | resource | message | fix |", "|---|---|---|---|---|");
            for (const f of ordered(s.findings)) {
                const status = f.status === "waived" ? `waived (${cell(f.waiver?.reason ?? "")})` : f.status;
                out.push(
                    `| ${status} | \`${f.policy}\` | ${cell(f.resource || "stack")}${f.syncedBy ? ` (synced by ${cell(f.syncedBy)})` : ""} | ${cell(f.message)} | ${f.status === "blocking" ? packCell(fixes.get(f.policy) ?? "") : ""} |`,
                );
            }
            out.push("");
        }
        for (const n of s.notices ?? []) out.push(`- notice: ${n.policy ? `\`${n.policy}\`: ` : ""}${cell(n.message)}`);
        if ((s.notices ?? []).length > 0) out.push("");
    }
    return out.join("\n") + "\n";
}
