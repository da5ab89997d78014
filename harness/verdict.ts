/**
 * The verdict: compares a leg's rows with a fixture's expectations, and the legs with each other, and
 * adds the checks each leg made itself. A fixture matches only when the set of (policy, resource, count)
 * is exactly the expected one in every leg that ran, the legs agree, and every leg check passed.
 */
import { Row, sortRows } from "../evaluation/rows";
import { Fixture } from "./expect";
import { LegName, LegResult } from "./legs/result";

export type Outcome = "match" | "mismatch" | "error" | "skipped";

/**
 * One line of the verdict table: either a policy's violations on a resource compared with the
 * expectation (`policy` set), or a check of the leg's own (`check` set: a leg that did not run, a
 * manifest schema, the destroy, the preview's exit code).
 */
export interface Check {
    fixture: string;
    leg: LegName | "parity";
    policy?: string;
    check?: string;
    resource: string;
    expected: number;
    got: number;
    outcome: Outcome;
    /** Why it is not a match (or what was skipped). */
    note?: string;
}

export interface FixtureVerdict {
    fixture: string;
    description: string;
    legs: LegResult[];
    checks: Check[];
    outcome: Outcome;
}

function key(policy: string, resource: string): string {
    return `${policy}\u0000${resource}`;
}

const LEG_CHECK_OUTCOME = { pass: "match", fail: "mismatch", skipped: "skipped" } as const;

/** Compares one leg's result with the fixture's expectations, and adds the leg's own checks. */
export function judgeLeg(fixture: Fixture, result: LegResult): Check[] {
    const base = { fixture: fixture.name, leg: result.leg };
    if (result.status === "skipped") {
        return [{ ...base, check: "run", resource: "", expected: 0, got: 0, outcome: "skipped", note: result.reason }];
    }
    if (result.status === "error") {
        return [{ ...base, check: "run", resource: "", expected: 0, got: 0, outcome: "error", note: result.message }];
    }
    const groups = new Map<string, Row[]>();
    for (const r of result.rows) {
        const k = key(r.policy, r.resource);
        groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const checks: Check[] = [];
    for (const e of fixture.expect.violations) {
        const rows = groups.get(key(e.policy, e.resource)) ?? [];
        groups.delete(key(e.policy, e.resource));
        const problems: string[] = [];
        if (rows.length !== e.count) problems.push(`expected ${e.count}, got ${rows.length}`);
        if (e.message !== undefined) {
            const re = new RegExp(e.message);
            const bad = rows.filter((r) => !re.test(r.message));
            if (bad.length > 0)
                problems.push(`${bad.length} message(s) do not match /${e.message}/: ${bad[0].message}`);
        }
        if (e.level !== undefined) {
            const bad = rows.filter((r) => r.level !== e.level);
            if (bad.length > 0) problems.push(`level ${bad[0].level}, expected ${e.level}`);
        }
        checks.push({
            ...base,
            policy: e.policy,
            resource: e.resource,
            expected: e.count,
            got: rows.length,
            outcome: problems.length === 0 ? "match" : "mismatch",
            note: problems.join("; ") || undefined,
        });
    }
    for (const rows of groups.values()) {
        checks.push({
            ...base,
            policy: rows[0].policy,
            resource: rows[0].resource,
            expected: 0,
            got: rows.length,
            outcome: "mismatch",
            note: `unexpected: ${rows[0].message}`,
        });
    }
    if (checks.length === 0) {
        checks.push({
            ...base,
            check: "violations",
            resource: "",
            expected: 0,
            got: 0,
            outcome: "match",
            note: "none, as expected",
        });
    }
    for (const c of result.checks) {
        checks.push({
            ...base,
            check: c.check,
            resource: c.target,
            expected: c.expected,
            got: c.got,
            outcome: LEG_CHECK_OUTCOME[c.outcome],
            note: c.note,
        });
    }
    return checks;
}

/**
 * What two legs must agree on: policy, resource, level and message, and between two engine legs (mock,
 * real) the resource's URN too (its type and parent chain). The manifest leg has no engine URNs (its
 * objects are not children of a program's component), so against it rows are compared by identity.
 */
function rowKey(r: Row, withUrn: boolean): string {
    return [r.policy, r.resource, withUrn ? r.urn : "", r.level, r.message].join("\u0000");
}

/** Compares the rows of two legs: both must report the same multiset of rows. */
export function judgeParity(fixture: Fixture, a: LegResult, b: LegResult): Check[] {
    if (a.status !== "ran" || b.status !== "ran") return [];
    const withUrn = a.leg !== "manifest" && b.leg !== "manifest";
    const count = (rows: Row[]) => {
        const m = new Map<string, Row[]>();
        for (const r of sortRows(rows)) m.set(rowKey(r, withUrn), [...(m.get(rowKey(r, withUrn)) ?? []), r]);
        return m;
    };
    const ca = count(a.rows);
    const cb = count(b.rows);
    const checks: Check[] = [];
    for (const k of new Set([...ca.keys(), ...cb.keys()])) {
        const ra = ca.get(k) ?? [];
        const rb = cb.get(k) ?? [];
        if (ra.length === rb.length) continue;
        const sample = ra[0] ?? rb[0];
        checks.push({
            fixture: fixture.name,
            leg: "parity",
            policy: sample.policy,
            resource: sample.resource,
            expected: ra.length,
            got: rb.length,
            outcome: "mismatch",
            note: `${a.leg} has ${ra.length}, ${b.leg} has ${rb.length} of [${sample.level}] ${sample.message}`,
        });
    }
    return checks;
}

export function judgeFixture(fixture: Fixture, legs: LegResult[]): FixtureVerdict {
    const checks = legs.flatMap((l) => judgeLeg(fixture, l));
    // Every leg that reports rows (mock, real, manifest) must report the same rows as the first that ran.
    const ran = legs.filter((l) => l.leg !== "deploy" && l.status === "ran");
    for (const other of ran.slice(1)) checks.push(...judgeParity(fixture, ran[0], other));
    const outcomes = checks.map((c) => c.outcome);
    const outcome: Outcome = outcomes.includes("error")
        ? "error"
        : outcomes.includes("mismatch")
          ? "mismatch"
          : outcomes.every((o) => o === "skipped")
            ? "skipped"
            : "match";
    return { fixture: fixture.name, description: fixture.expect.description, legs, checks, outcome };
}
