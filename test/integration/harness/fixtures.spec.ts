/**
 * The whole fixture set through both legs: every fixture must match its expect.yaml exactly (right
 * policy, right resource, right count, message and level where given) in the mock leg and in the real
 * leg (`pulumi preview --policy-pack`), the legs must report identical rows, and `pulumi preview` must
 * exit non-zero exactly when there is a mandatory violation.
 *
 * The real leg needs the toolchain (`npm run setup`). Without it this suite fails, unless
 * PKO_GUARD_SKIP_REAL=1 is set, in which case the real-leg checks are reported as pending (never as
 * passing) and only the mock leg runs.
 */
import * as assert from "assert";
import { loadFixtures, runFixtures } from "../../../harness/runner";
import { ToolchainMissingError } from "../../../support/errors";
import { findToolchain } from "../../../support/toolchain";
import { FixtureVerdict } from "../../../harness/verdict";

function toolchainAvailable(): boolean {
    try {
        findToolchain();
        return true;
    } catch (e) {
        if (e instanceof ToolchainMissingError) return false;
        throw e;
    }
}

describe("fixtures through both legs", function () {
    this.timeout(3600000);
    const fixtures = loadFixtures([]);
    const skipReal = process.env.PKO_GUARD_SKIP_REAL === "1";
    const real = !skipReal && toolchainAvailable();
    let verdicts: Map<string, FixtureVerdict>;

    before(async () => {
        verdicts = new Map(
            (await runFixtures(fixtures, { leg: real ? "both" : "mock", timeoutMs: 300000 })).map((v) => [
                v.fixture,
                v,
            ]),
        );
    });

    it("has at least 20 fixtures, failing and clean ones", () => {
        assert.ok(fixtures.length >= 20, `only ${fixtures.length}`);
        assert.ok(fixtures.some((f) => f.expect.violations.length === 0));
    });

    it("has the real-leg toolchain installed (npm run setup)", function () {
        if (skipReal) this.skip();
        assert.ok(
            real,
            "the Pulumi toolchain is not installed: run npm run setup (or set PKO_GUARD_SKIP_REAL=1 to run the mock leg only)",
        );
    });

    for (const f of fixtures) {
        describe(f.name, () => {
            if (f.manifestsDir) {
                it("manifest leg (pko-guard check in-process) matches", () => {
                    const v = verdicts.get(f.name)!;
                    assert.deepStrictEqual(
                        v.checks.filter((c) => c.leg === "manifest" && c.outcome !== "match"),
                        [],
                    );
                    const expected = f.expect.violations.reduce((n, e) => n + e.count, 0);
                    const leg = v.legs.find((l) => l.leg === "manifest")!;
                    assert.strictEqual(leg.status === "ran" ? leg.rows.length : -1, expected, JSON.stringify(leg));
                });
            }

            it(`mock leg: ${f.expect.description}`, function () {
                const v = verdicts.get(f.name)!;
                // A manifest fixture whose generated program the mock leg cannot expand is shown as skipped
                // (pending here), never as passing.
                if (f.manifestsDir && v.legs.find((l) => l.leg === "mock")?.status === "skipped") return this.skip();
                if (f.expect.realOnly) {
                    // A program the mock leg cannot run (not Node) is shown as skipped with its reason, never as a match.
                    assert.strictEqual(
                        v.legs.find((l) => l.leg === "mock")?.status,
                        "skipped",
                        "a real-only fixture must be shown as skipped in the mock leg",
                    );
                    return this.skip();
                }
                const bad = v.checks.filter((c) => c.leg === "mock" && c.outcome !== "match");
                assert.deepStrictEqual(bad, []);
                const expected = f.expect.violations.reduce((n, e) => n + e.count, 0);
                const mock = v.legs.find((l) => l.leg === "mock")!;
                assert.strictEqual(mock.status === "ran" ? mock.rows.length : -1, expected, JSON.stringify(mock));
            });

            it("real leg matches, with the same rows as the mock leg and the right exit code", function () {
                if (!real) this.skip();
                const v = verdicts.get(f.name)!;
                const realLeg = v.legs.find((l) => l.leg === "real")!;
                if (f.expect.manifestOnly) {
                    // One program is one cluster: a fixture whose objects land in several is judged by the manifest
                    // leg alone, and the program legs say why they did not run (pending here, never passing).
                    assert.deepStrictEqual(
                        [realLeg.status, realLeg.status === "skipped" ? realLeg.reason : ""],
                        ["skipped", `manifest-only: ${f.expect.manifestOnly}`],
                    );
                    return this.skip();
                }
                if (f.expect.mockOnly) {
                    assert.strictEqual(realLeg.status, "skipped", "a mock-only fixture must be shown as skipped");
                    assert.strictEqual(v.outcome === "match" || v.outcome === "skipped", true);
                    return this.skip();
                }
                const bad = v.checks.filter((c) => c.leg !== "mock" && c.outcome !== "match");
                assert.deepStrictEqual(bad, []);
                assert.strictEqual(realLeg.status, "ran");
                // The real leg's own check: pulumi preview exits non-zero exactly when a rule is mandatory.
                const exit = v.checks.filter((c) => c.leg === "real" && c.check === "exit code");
                assert.strictEqual(exit.length, 1);
                const mandatory = realLeg.status === "ran" && realLeg.rows.some((r) => r.level === "mandatory");
                assert.strictEqual(
                    exit[0].got,
                    mandatory ? 1 : 0,
                    `pulumi preview exit code: ${JSON.stringify(exit[0])}`,
                );
            });
        });
    }
});
