/**
 * The JSON report: a stable, documented shape (schemaVersion 1).
 * { schemaVersion, tool, generatedAt, summary: {fixtures, match, mismatch, error, skipped},
 *   fixtures: [{ fixture, description, outcome, legs: [{leg, durationMs, error?, skipped?, rows: Row[]}],
 *                checks: Check[] }] }
 */
import { FixtureVerdict } from "../verdict";

export function renderJson(verdicts: FixtureVerdict[]): string {
    const count = (o: string) => verdicts.filter((v) => v.outcome === o).length;
    return (
        JSON.stringify(
            {
                schemaVersion: 1,
                tool: "pko-guard",
                generatedAt: new Date().toISOString(),
                summary: {
                    fixtures: verdicts.length,
                    match: count("match"),
                    mismatch: count("mismatch"),
                    error: count("error"),
                    skipped: count("skipped"),
                },
                fixtures: verdicts.map((v) => ({
                    fixture: v.fixture,
                    description: v.description,
                    outcome: v.outcome,
                    legs: v.legs.map((l) => ({
                        leg: l.leg,
                        durationMs: l.durationMs,
                        ...(l.error ? { error: l.error } : {}),
                        ...(l.skipped ? { skipped: l.skipped } : {}),
                        rows: l.rows,
                    })),
                    checks: v.checks,
                })),
            },
            null,
            2,
        ) + "\n"
    );
}
