/**
 * The JSON report: a stable, documented shape (schemaVersion 1, documented in report.schema.json next to this file;
 * fields are only added).
 * { schemaVersion, tool, generatedAt, summary,
 *   fixtures: [{ fixture, description, outcome, legs: [{leg, status, durationMs, error?, skipped?, rows}], checks }],
 *   projects: [{ project, stack, description, outcome, durationMs, findings: [Row & {status}] }] }
 */
import { ReportSubject } from "./subject";

export function renderJson(subjects: ReportSubject[]): string {
    const fixtures = subjects.flatMap((s) => (s.kind === "fixture" ? [s.verdict] : []));
    const projects = subjects.flatMap((s) => (s.kind === "project" ? [s] : []));
    const count = (o: string) => fixtures.filter((v) => v.outcome === o).length;
    const findings = projects.flatMap((p) => p.findings);
    return (
        JSON.stringify(
            {
                schemaVersion: 1,
                tool: "pko-guard",
                generatedAt: new Date().toISOString(),
                summary: {
                    fixtures: fixtures.length,
                    match: count("match"),
                    mismatch: count("mismatch"),
                    error: count("error"),
                    skipped: count("skipped"),
                    projects: projects.length,
                    blocking: findings.filter((f) => f.status === "blocking").length,
                    advisory: findings.filter((f) => f.status === "advisory").length,
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
                    durationMs: p.durationMs,
                    findings: p.findings,
                })),
            },
            null,
            2,
        ) + "\n"
    );
}
