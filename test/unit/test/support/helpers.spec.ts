/** The test helpers' own checks: assertFindings fails on every way a result can differ from the expected findings. */
import * as assert from "assert";
import { ExpectedFinding, Reported, assertFindings } from "../../../support/helpers";

const found = (resource: string, message = "m", policy = "p", level = "mandatory"): Reported => ({
    message,
    policy,
    level,
    resource,
});
const want = (
    resource: string,
    message = /m/,
    count?: number,
    policy = "p",
    level: "mandatory" | "advisory" = "mandatory",
): ExpectedFinding => ({ policy, level, resource, message, count });

describe("assertFindings", () => {
    it("passes the exact findings, in any order, and a clean result", () => {
        assertFindings([found("a"), found("b", "x"), found("a")], [want("b", /x/), want("a", /m/, 2)]);
        assertFindings([], []);
    });

    it("fails on a missing, an extra, a wrong count, policy, level, resource or message", () => {
        const cases: [Reported[], ExpectedFinding[]][] = [
            [[], [want("a")]],
            [[found("a"), found("b")], [want("a")]],
            [[found("a"), found("a")], [want("a")]],
            [[found("a")], [want("a", /m/, 2)]],
            [[found("a", "m", "q")], [want("a")]],
            [[found("a", "m", "p", "advisory")], [want("a")]],
            [[found("b")], [want("a")]],
            [[found("a", "other")], [want("a", /^m$/)]],
            [[found("a")], []],
        ];
        for (const [reported, expected] of cases) {
            assert.throws(
                () => assertFindings(reported, expected),
                assert.AssertionError,
                JSON.stringify({ reported, expected: expected.map((e) => ({ ...e, message: String(e.message) })) }),
            );
        }
    });
});
