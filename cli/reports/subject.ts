/**
 * What every report renders: subjects. A fixture subject carries a harness verdict (legs, rows, checks);
 * a project subject carries a gate's findings (rows judged blocking or not). JSON, JUnit and SARIF are
 * all rendered from these and nothing else.
 */
import { policies } from "../../policies";
import { Finding, Notice, Row } from "../../core/rows";

interface SubjectBase {
    /** Fixture name or project name. */
    name: string;
    description: string;
    /** The program's entry file (absolute; SARIF makes it relative to the repository root). */
    programFile: string;
    /** The repository root (%SRCROOT%) when the command knows it (check); else the program's git top level. */
    root?: string;
}

/** A leg of a harness run, as reports show it (the harness's LegResult has this shape). */
export type ReportLeg = { leg: string; durationMs: number } & (
    | { status: "ran"; rows: Row[] }
    | { status: "skipped"; reason: string }
    | { status: "error"; message: string }
);

/** One line of a harness verdict, as reports show it (the harness's Check has this shape). */
export interface ReportCheck {
    fixture: string;
    leg: string;
    policy?: string;
    check?: string;
    resource: string;
    expected: number;
    got: number;
    outcome: "match" | "mismatch" | "error" | "skipped";
    note?: string;
}

export interface FixtureSubject extends SubjectBase {
    kind: "fixture";
    verdict: { fixture: string; description: string; outcome: ReportCheck["outcome"]; legs: ReportLeg[]; checks: ReportCheck[] };
}

export interface ProjectSubject extends SubjectBase {
    kind: "project";
    stack: string;
    findings: Finding[];
    /** "error": the tool could not judge the project (the message says why); reports still render it. */
    outcome: "pass" | "fail" | "error";
    error?: string;
    notices?: Notice[];
    durationMs: number;
}

export type ReportSubject = FixtureSubject | ProjectSubject;

/** The violations a subject reports: a fixture's rows from the first leg that ran (legs agree when parity holds). */
export function subjectRows(s: ReportSubject): Row[] {
    if (s.kind === "project") return s.findings;
    const ran = s.verdict.legs.find((l) => l.status === "ran");
    return ran?.status === "ran" ? ran.rows : [];
}

/** The README anchor of a rule's catalogue row (an HTML anchor `<a id="rule-NAME">` in the catalogue). */
export function ruleAnchor(name: string): string {
    return `rule-${name}`;
}

/** Where the README is published (the rules' helpUri points at its catalogue anchors). */
export const README_URL = "https://github.com/pko-guard/pko-guard/blob/main/README.md";

/** Rule metadata from the pack itself (name, description, severity, remediation, the rule's README anchor). */
export function ruleCatalogue() {
    return policies.map((p) => ({
        id: p.name,
        description: p.description,
        level: p.enforcementLevel ?? "advisory",
        severity: p.severity,
        remediation: p.remediationSteps,
        url: p.url,
        helpUri: `${README_URL}#${ruleAnchor(p.name)}`,
    }));
}
