/**
 * GitHub Actions workflow commands for a harness run: one `::error` a failed check, pointing at the line of the
 * fixture's expect.yaml that the check compared (the expected violation's own line; an unexpected violation or a
 * leg's own check at the `violations` list), so that the pull request shows it beside the expectation. The file is
 * relative to the repository root as in every other report (reports/location.ts); text is escaped by the runner's
 * rules (reports/github.ts).
 */
import { escapeData, escapeProperty } from "../reports/github";
import { findingPlace, placeWords, sourceRoot } from "../reports/location";
import { Fixture } from "./expect";
import { Check, FixtureVerdict } from "./verdict";

/** What a failed check says, in one line: fixture, leg, rule or check, resource, what differs. */
export function checkLine(c: Check): string {
    const what = c.policy ?? `check ${c.check}`;
    const on = c.resource ? ` on ${c.resource}` : "";
    return `${c.fixture} [${c.leg}] ${what}${on}: ${c.note ?? `expected ${c.expected}, got ${c.got}`}`;
}

function lineOf(fixture: Fixture, c: Check): number {
    const v = c.policy
        ? fixture.expect.violations.find((e) => e.policy === c.policy && e.resource === c.resource)
        : undefined;
    return v?.line ?? fixture.violationsLine ?? 1;
}

/** The workflow commands, a line each, for every mismatch and error of the run. */
export function* fixtureAnnotations(verdicts: FixtureVerdict[], fixtures: Fixture[], root?: string): Generator<string> {
    const byName = new Map(fixtures.map((f) => [f.name, f]));
    for (const v of verdicts) {
        const fixture = byName.get(v.fixture);
        for (const c of v.checks) {
            if (c.outcome !== "mismatch" && c.outcome !== "error") continue;
            const file = fixture?.expectFile;
            const place = file ? findingPlace(file, root ?? sourceRoot(file)) : undefined;
            const line = fixture ? lineOf(fixture, c) : 1;
            const at = place?.kind === "repo" ? [`file=${escapeProperty(place.path)}`, `line=${line}`] : [];
            const where = place && place.kind !== "repo" ? `${placeWords(place)}:${line}: ` : "";
            const title = `pko-guard test: ${c.fixture} (${c.leg})`;
            yield `::error ${[...at, `title=${escapeProperty(title)}`].join(",")}::${escapeData(where + checkLine(c))}\n`;
        }
    }
}
