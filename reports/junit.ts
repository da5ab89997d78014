/**
 * JUnit XML (the Jenkins/Surefire shape CI systems render): one <testsuite> per fixture or project. A
 * fixture has one <testcase> per leg (and one for the legs' parity when they disagree): a mismatch is its
 * <failure>, listing every check that failed (policy or check, resource, expected and got), an error its <error>,
 * a skipped leg <skipped/>. A project has one <testcase> per rule and object the
 * rule read (`RULE KIND/NAMESPACE/NAME`): the objects a run lists (check: every object it judged, for each rule
 * that reads its kind) and every object or resource with a finding (a stack-level one is `(stack)`). Blocking
 * findings are the case's <failure>, advisory and waived ones its output; a case without findings passed. A rule
 * that read nothing is no test case (a gate, which lists no objects, has cases for its findings only). XML
 * escaping is the library's.
 * Unlike JSON, SARIF and the PolicyReport, this report is one string (junit-report-builder renders the whole
 * document with xmlbuilder, and a rule's findings are one attribute of its testcase by this shape): it holds a
 * line of each finding, a few hundred bytes (less than JSON or SARIF spend on one: docs/contributing/benchmarks.md), so it
 * stays within V8's 2^29-24 characters up to more than a million findings. Past that, writing it fails
 * and says so (reports/write.ts), and the other reports are still written.
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
