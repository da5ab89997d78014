/**
 * The JSON report: a stable, documented shape (schemaVersion 1, documented in report.schema.json next to this file;
 * fields are only added).
 * { schemaVersion, tool, generatedAt, summary,
 *   fixtures: [{ fixture, description, outcome, legs: [{leg, status, durationMs, error?, skipped?, rows}], checks }],
 *   projects: [{ project, stack, description, outcome (pass|fail|error), error?, durationMs,
 *                findings: [Row & {status (blocking|advisory|waived), waiver?, file?, line?, column?}], notices }] }
 */
import { jsonChunks } from "./json-chunks";
import { ReportSubject } from "./subject";

/** The JSON report file in pieces, in order (never joined: see ./json-chunks.ts). */
export function* jsonReportChunks(subjects: ReportSubject[], now = new Date()): Generator<string> {
    yield* jsonChunks(jsonReport(subjects, now), 2);
    yield "\n";
}

/** The JSON report file as one string (what the pieces of jsonReportChunks make). */
export function renderJson(subjects: ReportSubject[], now = new Date()): string {
    return JSON.stringify(jsonReport(subjects, now), null, 2) + "\n";
}

/** The report as data. */
function jsonReport(subjects: ReportSubject[], now: Date): Record<string, unknown> {
    const fixtures = subjects.flatMap((s) => (s.kind === "fixture" ? [s.verdict] : []));
    const projects = subjects.flatMap((s) => (s.kind === "project" ? [s] : []));
    const count = (o: string) => fixtures.filter((v) => v.outcome === o).length;
    const findings = projects.flatMap((p) => p.findings);
    return {
        schemaVersion: 1,
        tool: "pko-guard",
        generatedAt: now.toISOString(),
        summary: {
            fixtures: fixtures.length,
            match: count("match"),
            mismatch: count("mismatch"),
            error: count("error"),
            skipped: count("skipped"),
            projects: projects.length,
            blocking: findings.filter((f) => f.status === "blocking").length,
            advisory: findings.filter((f) => f.status === "advisory").length,
            waived: findings.filter((f) => f.status === "waived").length,
        },
        fixtures: fixtures.map((v) => ({
            fixture: v.fixture,
            description: v.description,
            outcome: v.outcome,
            legs: v.legs.map((l) => ({
                leg: l.leg,
                status: l.status,
                durationMs: l.durationMs,
                ...(l.status === "error" ? { error: l.message } : {}),
                ...(l.status === "skipped" ? { skipped: l.reason } : {}),
                rows: l.status === "ran" ? l.rows : [],
            })),
            checks: v.checks,
        })),
        projects: projects.map((p) => ({
            project: p.name,
            stack: p.stack,
            description: p.description,
            outcome: p.outcome,
            ...(p.error ? { error: p.error } : {}),
            durationMs: p.durationMs,
            findings: p.findings,
            notices: p.notices ?? [],
        })),
    };
}
