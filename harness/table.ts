/** The harness's verdict table: fixture, leg, policy (or a leg's own check), resource, expected, got, result. */
import Table from "cli-table3";
import { FixtureVerdict } from "./verdict";

const RESULT: Record<string, string> = {
    match: "match",
    mismatch: "MISMATCH",
    error: "ERROR",
    skipped: "skipped",
};

export function renderTable(verdicts: FixtureVerdict[]): string {
    const table = new Table({
        head: ["fixture", "leg", "policy or check", "resource", "expected", "got", "result"],
        style: { head: [], border: [] },
        wordWrap: true,
        colWidths: [30, 10, 40, 22, 10, 6, 60],
    });
    for (const v of verdicts) {
        for (const c of v.checks) {
            const result = c.note ? `${RESULT[c.outcome]}: ${c.note}` : RESULT[c.outcome];
            table.push([c.fixture, c.leg, c.policy ?? `check: ${c.check}`, c.resource, String(c.expected), String(c.got), result]);
        }
    }
    return table.toString();
}

export function verdictSummaryLine(verdicts: FixtureVerdict[]): string {
    const n = (o: string) => verdicts.filter((v) => v.outcome === o).length;
    const skipped = verdicts.flatMap((v) => v.legs).flatMap((l) => (l.status === "skipped" ? [l] : []));
    const mockOnly = skipped.filter((l) => l.reason.startsWith("mock-only")).length;
    const realOnly = skipped.filter((l) => l.reason.startsWith("real-only")).length;
    const manifest = skipped.filter((l) => l.reason.startsWith("manifest fixture")).length;
    const reasons = [
        mockOnly > 0 ? `${mockOnly} as mock-only` : "",
        realOnly > 0 ? `${realOnly} as real-only` : "",
        manifest > 0 ? `${manifest} as manifest fixture(s) the leg does not run` : "",
        skipped.length - mockOnly - realOnly - manifest > 0 ? `${skipped.length - mockOnly - realOnly - manifest} stopped by the gate before deploy` : "",
    ].filter(Boolean);
    const legs = skipped.length > 0 ? ` (${skipped.length} leg run(s) skipped: ${reasons.join(", ")}; not counted as matches)` : "";
    const partial = verdicts.filter((v) => v.outcome === "match" && v.legs.some((l) => l.status === "skipped")).length;
    const match = partial > 0 ? `${n("match")} match (${partial} of them with a leg skipped)` : `${n("match")} match`;
    return `${verdicts.length} fixture(s): ${match}, ${n("mismatch")} mismatch, ${n("error")} error, ${n("skipped")} skipped${legs}`;
}
