/**
 * The whole fixture set through the mock leg: every fixture must match its expect.yaml exactly
 * (right policy, right resource, right count, message and level where given).
 */
import * as assert from "assert";
import { loadFixtures, runFixtures } from "../../harness/runner";
import { FixtureVerdict } from "../../harness/verdict";

describe("fixtures through the mock leg", function () {
    this.timeout(600000);
    const fixtures = loadFixtures([]);
    let verdicts: Map<string, FixtureVerdict>;

    before(async () => {
        verdicts = new Map((await runFixtures(fixtures, { leg: "mock", timeoutMs: 120000 })).map((v) => [v.fixture, v]));
    });

    it("has at least 20 fixtures", () => {
        assert.ok(fixtures.length >= 20, `only ${fixtures.length}`);
    });

    for (const f of fixtures) {
        it(`${f.name}: ${f.expect.description}`, () => {
            const v = verdicts.get(f.name)!;
            const bad = v.checks.filter((c) => c.outcome !== "match");
            assert.deepStrictEqual(bad, [], `fixture ${f.name} did not match`);
            const got = v.legs[0].rows.length;
            const expected = f.expect.violations.reduce((n, e) => n + e.count, 0);
            assert.strictEqual(got, expected);
        });
    }
});
