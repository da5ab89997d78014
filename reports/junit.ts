/**
 * JUnit XML (the Jenkins/Surefire shape CI systems render): one <testsuite> per fixture or project. A
 * fixture has one <testcase> per check (leg x policy x resource, or a leg's own check): mismatches are
 * <failure>s, errors <error>s, skipped legs <skipped/>. A project has one <testcase> per policy of the
 * pack: blocking findings are a <failure>, advisories are listed in its output. XML escaping is the
 * library's.
 * Unlike JSON, SARIF and the PolicyReport, this report is one string (junit-report-builder renders the whole
 * document with xmlbuilder, and a rule's findings are one attribute of its testcase by this shape): it holds a
 * line of each finding, about 330 bytes (JSON about 780, SARIF about 1,500, measured on `check` of 10k objects),
 * so it stays within V8's 2^29-24 characters up to about 1.6 million findings. Past that, writing it fails
 * and says so (reports/write.ts), and the other reports are still written.
 */
import junit from "junit-report-builder";
import { ReportSubject, ruleCatalogue } from "./subject";

export function renderJunit(subjects: ReportSubject[], suiteName = "pko-guard"): string {
    const builder = junit.newBuilder();
    for (const s of subjects) {
        const suite = builder.testSuite().name(`${suiteName}: ${s.name}`);
        if (s.kind === "fixture") {
            for (const c of s.verdict.checks) {
                const what = c.policy ?? `check ${c.check}`;
                const tc = suite.testCase().className(s.name).name([c.leg, what, c.resource].filter(Boolean).join(" "));
                const message = c.note ?? `expected ${c.expected}, got ${c.got}`;
                if (c.outcome === "mismatch") tc.failure(message, "violation");
                else if (c.outcome === "error") tc.error(message, "error");
                else if (c.outcome === "skipped") tc.skipped();
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
        for (const rule of ruleCatalogue()) {
            const mine = s.findings.filter((f) => f.policy === rule.id);
            const tc = suite.testCase().className(s.name).name(rule.id);
            const lines = mine
                .map(
                    (f) =>
                        `[${f.status}] ${f.file ? `${f.file}:${f.line}:${f.column}: ` : ""}${f.resource}${f.syncedBy ? ` (synced by ${f.syncedBy})` : ""}: ${f.message}`,
                )
                .join("\n");
            const blocking = mine.filter((f) => f.status === "blocking");
            if (blocking.length > 0) tc.failure(lines, "violation");
            else if (mine.length > 0) tc.standardOutput(lines);
        }
    }
    return builder.build();
}
