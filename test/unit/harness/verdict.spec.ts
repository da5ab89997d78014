/** The verdict must fail for every way a leg can disagree with expectations; nothing passes by accident. */
import * as assert from "assert";
import { Fixture } from "../../../harness/expect";
import { Row } from "../../../evaluation/rows";
import { LegCheck, LegResult } from "../../../harness/legs/result";
import { judgeFixture, judgeLeg, judgeParity } from "../../../harness/verdict";

const fixture: Fixture = {
    name: "f",
    dir: "/tmp/f",
    project: "f",
    expect: {
        description: "d",
        stack: "dev",
        config: {},
        violations: [{ policy: "p1", resource: "r1", count: 2, message: "bad" }],
    },
};
const row = (policy = "p1", resource = "r1", message = "bad thing", level: Row["level"] = "mandatory"): Row => ({
    policy,
    resource,
    urn: `urn:pulumi:dev::f::t::${resource}`,
    type: "t",
    level,
    message,
});
const leg = (rows: Row[], checks: LegCheck[] = []): LegResult => ({
    leg: "mock",
    status: "ran",
    rows,
    checks,
    durationMs: 1,
});
const failed = (message: string): LegResult => ({ leg: "mock", status: "error", message, durationMs: 1 });
const skipped = (reason: string): LegResult => ({ leg: "mock", status: "skipped", reason, durationMs: 1 });
const outcome = (l: LegResult, f: Fixture = fixture) => judgeFixture(f, [l]).outcome;

describe("verdict", () => {
    it("matches exactly the expected rows", () => {
        assert.strictEqual(outcome(leg([row(), row()])), "match");
    });

    it("fails on a wrong count, a wrong policy, a wrong resource, an extra row", () => {
        assert.strictEqual(outcome(leg([row()])), "mismatch");
        assert.strictEqual(outcome(leg([row(), row(), row()])), "mismatch");
        assert.strictEqual(outcome(leg([row("p2"), row("p2")])), "mismatch");
        assert.strictEqual(outcome(leg([row("p1", "r2"), row("p1", "r2")])), "mismatch");
        assert.strictEqual(outcome(leg([row(), row(), row("p3", "r9")])), "mismatch");
    });

    it("fails when a message does not match the expected regex", () => {
        assert.strictEqual(outcome(leg([row(), row("p1", "r1", "fine")])), "mismatch");
    });

    it("fails on a wrong level when a level is expected", () => {
        const f = {
            ...fixture,
            expect: {
                ...fixture.expect,
                violations: [{ policy: "p1", resource: "r1", count: 1, level: "advisory" as const }],
            },
        };
        assert.strictEqual(outcome(leg([row()]), f), "mismatch");
        assert.strictEqual(outcome(leg([row("p1", "r1", "m", "advisory")]), f), "match");
    });

    it("a clean fixture fails on any row", () => {
        const clean = { ...fixture, expect: { ...fixture.expect, violations: [] } };
        assert.strictEqual(outcome(leg([]), clean), "match");
        assert.strictEqual(outcome(leg([row()]), clean), "mismatch");
    });

    it("an error or a skipped leg is never a match", () => {
        const clean = { ...fixture, expect: { ...fixture.expect, violations: [] } };
        assert.strictEqual(outcome(failed("boom"), clean), "error");
        assert.strictEqual(outcome(skipped("mock-only"), clean), "skipped");
        assert.strictEqual(judgeLeg(clean, skipped("x"))[0].outcome, "skipped");
    });

    it("a leg's own failed check is a mismatch, shown as a check and never as a policy", () => {
        const clean = { ...fixture, expect: { ...fixture.expect, violations: [] } };
        const destroy: LegCheck = {
            check: "destroy",
            target: "",
            outcome: "fail",
            expected: 0,
            got: 2,
            note: "2 resource(s) left after destroy",
        };
        assert.strictEqual(outcome(leg([], [destroy]), clean), "mismatch");
        const [, check] = judgeLeg(clean, leg([], [destroy]));
        assert.deepStrictEqual([check.check, check.policy, check.outcome], ["destroy", undefined, "mismatch"]);
        assert.strictEqual(outcome(leg([], [{ ...destroy, outcome: "pass", got: 0 }]), clean), "match");
        assert.strictEqual(outcome(leg([], [{ ...destroy, outcome: "skipped" }]), clean), "match");
    });

    it("parity fails when legs disagree on any row", () => {
        const a = leg([row(), row()]);
        const b: LegResult = { ...leg([row(), row("p1", "r1", "bad other")]), leg: "real" };
        assert.strictEqual(judgeParity(fixture, a, b).length, 2);
        assert.strictEqual(judgeParity(fixture, a, { ...a, leg: "real" }).length, 0);
        assert.strictEqual(judgeFixture(fixture, [a, b]).outcome, "mismatch");
    });

    it("parity compares URNs between engine legs, and identities only against the manifest leg", () => {
        const a = leg([row(), row()]);
        const moved = (l: LegResult, name: LegResult["leg"]): LegResult =>
            l.status === "ran"
                ? {
                      ...l,
                      leg: name,
                      rows: l.rows.map((r) => ({ ...r, urn: `urn:pulumi:dev::f::parent$t::${r.resource}` })),
                  }
                : l;
        assert.strictEqual(
            judgeParity(fixture, a, moved(a, "real")).length,
            2,
            "a different parent chain is a mismatch between mock and real",
        );
        assert.strictEqual(
            judgeParity(fixture, moved(a, "manifest"), a).length,
            0,
            "the manifest leg has no engine URNs",
        );
    });
});
