/**
 * JUnit XML (the Jenkins/Surefire shape CI systems render): one <testsuite> per fixture or project. A fixture has
 * one <testcase> per leg; a project one per rule and object the rule read (`RULE KIND/NAMESPACE/NAME`), blocking
 * findings its <failure>. Unlike the other reports this one is a single string (junit-report-builder renders the
 * whole document), so past V8's 2^29-24 characters (over a million findings) writing it fails and says so
 * (reports/write.ts) while the others are still written.
 */
import junit from "junit-report-builder";
import { Finding, compareText } from "../evaluation/rows";
import { RULE_KINDS } from "./finding-objects";
import { findingPlace, placeWords, sourceRoot } from "./location";
import { ProjectSubject, ReportCheck, ReportSubject, ruleCatalogue } from "./subject";

/** A project's test case: a rule, what it read (an object's identity, a resource, or `(stack)`) and its findings. */
interface ProjectCase {
    rule: string;
    what: string;
    findings: Finding[];
}

/** A project's test cases, by rule in the pack's order, then by what was read. */
export function projectCases(s: ProjectSubject): ProjectCase[] {
    const cases = new Map<string, ProjectCase>();
    const add = (rule: string, what: string) => {
        const key = `${rule}\u0000${what}`;
        let c = cases.get(key);
        if (!c) cases.set(key, (c = { rule, what, findings: [] }));
        return c;
    };
    for (const o of s.objects ?? [])
        for (const [rule, kinds] of Object.entries(RULE_KINDS))
            if (kinds.includes(o.kind))
                add(rule, o.namespace ? `${o.kind}/${o.namespace}/${o.name}` : `${o.kind}/${o.name}`);
    for (const f of s.findings) add(f.policy, f.resource || "(stack)").findings.push(f);
    const order = new Map(ruleCatalogue().map((r, i) => [r.id, i]));
    const rank = (rule: string) => order.get(rule) ?? order.size;
    return [...cases.values()].sort(
        (a, b) => rank(a.rule) - rank(b.rule) || compareText(a.rule, b.rule) || compareText(a.what, b.what),
    );
}

/** A fixture's test case: one leg (or the legs' parity), its outcome and the checks that made it so. */
interface FixtureCase {
    leg: string;
    outcome: ReportCheck["outcome"];
    count: number;
    bad: { what: string; resource: string; note: string }[];
}

/**
 * A fixture's test cases, one a leg in the order the legs ran (then the parity between them): an error wins over a
 * mismatch, a mismatch over a match; a leg all skipped is skipped. The case's message lists every check that failed.
 */
export function fixtureCases(checks: ReportCheck[]): FixtureCase[] {
    const legs = [...new Set(checks.map((c) => c.leg))];
    return legs.map((leg) => {
        const own = checks.filter((c) => c.leg === leg);
        const outcomes = own.map((c) => c.outcome);
        const outcome = outcomes.includes("error")
            ? "error"
            : outcomes.includes("mismatch")
              ? "mismatch"
              : outcomes.every((o) => o === "skipped")
                ? "skipped"
                : "match";
        const bad = own
            .filter((c) => c.outcome === outcome && (outcome === "error" || outcome === "mismatch"))
            .map((c) => ({
                what: c.policy ?? `check ${c.check}`,
                resource: c.resource,
                note: c.note ?? `expected ${c.expected}, got ${c.got}`,
            }));
        return { leg, outcome, count: own.length, bad };
    });
}

export function renderJunit(subjects: ReportSubject[], suiteName = "pko-guard"): string {
    const builder = junit.newBuilder();
    for (const s of subjects) {
        const suite = builder.testSuite().name(`${suiteName}: ${s.name}`);
        if (s.kind === "fixture") {
            for (const c of fixtureCases(s.verdict.checks)) {
                const tc = suite.testCase().className(s.name).name(c.leg);
                const lines = c.bad.map((b) => `${b.what}${b.resource ? ` on ${b.resource}` : ""}: ${b.note}`);
                if (c.outcome === "mismatch") tc.failure(lines.join("\n"), "mismatch");
                else if (c.outcome === "error") tc.error(lines.join("\n"), "error");
                else if (c.outcome === "skipped") tc.skipped();
                if (c.outcome === "match") tc.standardOutput(`${c.count} check(s) passed`);
            }
            continue;
        }
        if (s.outcome === "error") {
            suite
                .testCase()
                .className(s.name)
                .name("pko-guard gate")
                .error(s.error ?? "the gate could not run", "error");
            continue;
        }
        // Paths as the table, SARIF and the GitHub output give them: relative to the repository root (./location.ts).
        const root = s.root ?? sourceRoot(s.programFile);
        const at = (f: Finding) => (f.file ? `${placeWords(findingPlace(f.file, root))}:${f.line}:${f.column}: ` : "");
        for (const c of projectCases(s)) {
            const tc = suite.testCase().className(s.name).name(`${c.rule} ${c.what}`);
            const lines = c.findings
                .map(
                    (f) =>
                        `[${f.status}] ${at(f)}${f.resource}${f.syncedBy ? ` (synced by ${f.syncedBy})` : ""}: ${f.message}`,
                )
                .join("\n");
            if (c.findings.some((f) => f.status === "blocking")) tc.failure(lines, "violation");
            else if (c.findings.length > 0) tc.standardOutput(lines);
        }
    }
    return builder.build();
}
