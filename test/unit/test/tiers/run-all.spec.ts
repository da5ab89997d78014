/**
 * `npm test`'s closing lines name each failing test: the runner reads mocha's spec reporter as it streams, and a
 * log's tail (all CI keeps) then says what failed.
 */
import * as assert from "assert";

const { failureCollector, describeFailure } = require("../../../tiers/run-all");

/** Mocha's spec reporter output for one passing and two failing tests, one of them nested. */
const OUTPUT = `
  outer
    ✔ ok
    inner
      1) breaks here

  1 passing (4ms)
  2 failing

  1) outer
       inner
         breaks here:
     Error: boom\u0007 x
      at Context.<anonymous> (/tmp/fail.spec.js:1:85)

  2) top-level title:
     AssertionError [ERR_ASSERTION]: ${"long ".repeat(100)}
`;

describe("the test runner's failure list", () => {
    it("names each failing test with its titles and the first line of its error, escaped and cut", () => {
        const collector = failureCollector();
        for (const line of OUTPUT.split("\n")) collector.line(line);
        const lines: string[] = collector.failures.map((f: unknown) => describeFailure("unit", f));
        assert.strictEqual(lines.length, 2);
        assert.strictEqual(lines[0], "[tests] failed (unit): outer > inner > breaks here: Error: boom? x");
        assert.ok(lines[1].startsWith("[tests] failed (unit): top-level title: AssertionError [ERR_ASSERTION]: long"));
        assert.ok(lines[1].length <= 303 && lines[1].endsWith("..."), lines[1]);
    });

    it("reads nothing as a failure before mocha's failing count", () => {
        const collector = failureCollector();
        for (const line of ["  1) a test that is running", "  3 passing (1s)"]) collector.line(line);
        assert.deepStrictEqual(collector.failures, []);
    });
});
