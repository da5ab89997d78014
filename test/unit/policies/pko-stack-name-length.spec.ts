import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-name-length";
import {
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    stackResource,
    ExpectedFinding,
    assertFindings,
} from "../../support/helpers";

const run = (resourceName: string, name: unknown) =>
    runResourcePolicy(policy, stackResource(resourceName, goodSpec(), { name }));
/** The one finding an input should produce. */
const one = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource, message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-name-length", () => {
    it("passes names up to 42 characters", () => {
        assert.deepStrictEqual(check("a", "x".repeat(42)), []);
    });
    it("flags longer names and fails closed on unknown names", () => {
        assertFindings(run("a", "x".repeat(43)), one("a", /43 characters/));
        assertFindings(run("a", UNKNOWN_WIRE), one("a", /fails closed/));
    });
    it("counts the generated suffix of autonamed Stacks", () => {
        assert.deepStrictEqual(check("x".repeat(33), undefined), []);
        assertFindings(run("x".repeat(34), undefined), one("x".repeat(34), /43 characters/));
    });
});
