/**
 * JUnit XML (the Jenkins/Surefire shape CI systems render): one <testsuite> per fixture or project, one
 * <testcase> per check (fixture/project x policy [x resource]); mismatches and blocking violations are
 * <failure>s, fixture errors <error>s, skipped legs <skipped/>. XML escaping is the library's.
 */
import junit from "junit-report-builder";
import { ReportSubject } from "./subject";

export function renderJunit(subjects: ReportSubject[], suiteName = "pko-guard"): string {
    const builder = junit.newBuilder();
    for (const s of subjects) {
        const suite = builder.testSuite().name(`${suiteName}: ${s.name}`);
        for (const c of s.checks) {
            const name = [c.leg, c.policy || "(run)", c.resource].filter(Boolean).join(" ");
            const tc = suite.testCase().className(s.name).name(name);
            const message = c.note ?? `expected ${c.expected}, got ${c.got}`;
            if (c.outcome === "mismatch") tc.failure(message, "violation");
            else if (c.outcome === "error") tc.error(message, "error");
            else if (c.outcome === "skipped") tc.skipped();
        }
    }
    return builder.build();
}
