/**
 * What machine-readable reports render: one subject per fixture (harness) or project (gate), with the
 * rows its legs observed and the checks the verdict made. Reports never build their own shapes.
 */
import * as path from "path";
import { policies } from "../../policies";
import { Row } from "../model";
import { Check, FixtureVerdict } from "../verdict";

export interface ReportSubject {
    /** Fixture name or project name. */
    name: string;
    description?: string;
    /** The program's entry file, relative to the report's base folder (SARIF locations). */
    programFile: string;
    rows: Row[];
    checks: Check[];
}

/** Rule metadata from the pack itself (name, description, severity, remediation, url). */
export function ruleCatalogue() {
    return policies.map((p) => ({
        id: p.name,
        description: p.description,
        level: p.enforcementLevel ?? "advisory",
        severity: p.severity,
        remediation: p.remediationSteps,
        url: p.url,
    }));
}

/** Harness verdicts as report subjects: rows of the first leg that ran (legs agree when parity holds). */
export function subjectsFromVerdicts(verdicts: FixtureVerdict[], fixtureDirs: Map<string, string>, baseDir: string): ReportSubject[] {
    return verdicts.map((v) => {
        const ran = v.legs.find((l) => !l.error && !l.skipped);
        const dir = fixtureDirs.get(v.fixture) ?? baseDir;
        return {
            name: v.fixture,
            description: v.description,
            programFile: path.relative(baseDir, path.join(dir, "index.ts")).split(path.sep).join("/"),
            rows: ran?.rows ?? [],
            checks: v.checks,
        };
    });
}
