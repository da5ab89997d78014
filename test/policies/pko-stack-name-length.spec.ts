import * as assert from "assert";
import { policy } from "../../policies/pko-stack-name-length";
import { UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../helpers";

const check = (resourceName: string, name: unknown) => runResourcePolicy(policy, stackResource(resourceName, goodSpec(), { name })).map((r) => r.message);

describe("pko-stack-name-length", () => {
    it("passes names up to 42 characters", () => {
        assert.deepStrictEqual(check("a", "x".repeat(42)), []);
    });
    it("flags longer names and fails closed on unknown names", () => {
        assert.match(check("a", "x".repeat(43))[0], /43 characters/);
        assert.match(check("a", UNKNOWN_WIRE)[0], /fails closed/);
    });
    it("counts the generated suffix of autonamed Stacks", () => {
        assert.deepStrictEqual(check("x".repeat(33), undefined), []);
        assert.match(check("x".repeat(34), undefined)[0], /43 characters/);
    });
});
