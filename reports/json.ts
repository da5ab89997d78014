/**
 * The JSON report: a stable, documented shape (schemaVersion 2, documented in schemas/pko-guard/report.schema.json;
 * within a version, fields are only added). A report holds what its run made: `fixtures` for the harness,
 * `projects` for gate, check and audit; empty sections are left out.
 */
import { Finding } from "../evaluation/rows";
import { jsonChunks } from "./json-chunks";
import { kubernetesObject } from "./finding-objects";
import { ReportSubject, ruleCatalogue } from "./subject";
import { extended } from "../support/shapes";

export const SCHEMA_VERSION = 2;

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
    const hasFixtures = fixtures.length > 0 || projects.length === 0;
    const count = (o: string) => fixtures.filter((v) => v.outcome === o).length;
    const findings = projects.flatMap((p) => p.findings);
    const rules = new Map(ruleCatalogue().map((r) => [r.id, r]));
    return {
        schemaVersion: SCHEMA_VERSION,
        tool: "pko-guard",
        generatedAt: now.toISOString(),
        summary: extended(
            hasFixtures
                ? {
                      fixtures: fixtures.length,
                      match: count("match"),
                      mismatch: count("mismatch"),
                      error: count("error"),
                      skipped: count("skipped"),
                  }
                : {},
            projects.length > 0
                ? {
                      projects: projects.length,
                      blocking: findings.filter((f) => f.status === "blocking").length,
                      advisory: findings.filter((f) => f.status === "advisory").length,
                      waived: findings.filter((f) => f.status === "waived").length,
                  }
                : {},
        ),
        ...(hasFixtures
            ? {
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
              }
            : {}),
        ...(projects.length > 0
            ? {
                  projects: projects.map((p) => ({
                      project: p.name,
                      ...(p.stack !== "" ? { stack: p.stack } : {}),
                      description: p.description,
                      outcome: p.outcome,
                      ...(p.error ? { error: p.error } : {}),
                      durationMs: p.durationMs,
                      findings: p.findings.map((f) => reportFinding(f, rules.get(f.policy))),
                      notices: p.notices ?? [],
                      ...(p.sources && p.sources.length > 0 ? { sources: p.sources } : {}),
                  })),
              }
            : {}),
    };
}

/**
 * A finding as the report gives it: what a reader wants first (the rule, its severity, the status, the object,
 * where it is), then the row as judged (the message among it), then the rule's fix.
 */
function reportFinding(
    f: Finding,
    rule: { severity?: string; remediation?: string } | undefined,
): Record<string, unknown> {
    const object = kubernetesObject(f);
    const { status, ...row } = f;
    return {
        rule: f.policy,
        ...(rule?.severity ? { severity: rule.severity } : {}),
        status,
        ...(object ? { object } : {}),
        ...(f.file ? { location: `${f.file}:${f.line ?? 1}` } : {}),
        ...row,
        ...(rule?.remediation ? { fix: rule.remediation } : {}),
    };
}
