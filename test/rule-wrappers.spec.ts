/**
 * The never-throw wrappers every policy is built with: whatever a rule does wrong is reported as one
 * fail-closed violation (a governance gate never passes by accident), and nothing reaches the SDK as an
 * exception.
 */
import * as assert from "assert";
import { COULD_NOT_EVALUATE, programRule, resourceRule } from "../policies/model/policy";
import { runResourcePolicy, runStackPolicy } from "./helpers";

const meta = { name: "test-rule", description: "d", enforcementLevel: "mandatory" as const, severity: "high" as const, remediationSteps: "r" };
const resource = { type: "kubernetes:core/v1:ConfigMap", name: "c", props: { data: { a: "b" } } };

describe("rule wrappers", () => {
    const misbehaving: [string, () => unknown][] = [
        ["throws", () => { throw new TypeError("boom"); }],
        ["returns undefined", () => undefined],
        ["returns a promise", () => Promise.resolve([])],
        ["returns a list holding null", () => ["fine", null]],
        ["returns a finding without a message", () => [{ urn: "u" }]],
    ];
    for (const [what, check] of misbehaving) {
        it(`a rule that ${what} is reported once, fail-closed, in both wrappers`, () => {
            for (const reported of [
                runResourcePolicy(resourceRule(meta, check as never), resource),
                runStackPolicy(programRule(meta, check as never), [resource]),
            ]) {
                assert.strictEqual(reported.length, 1);
                assert.ok(reported[0].message.startsWith(`test-rule ${COULD_NOT_EVALUATE}`), reported[0].message);
            }
        });
    }

    it("passes findings through unchanged", () => {
        const r = runResourcePolicy(resourceRule(meta, () => ["one", { message: "two" }]), resource);
        assert.deepStrictEqual(r.map((x) => x.message), ["one", "two"]);
        assert.deepStrictEqual(runStackPolicy(programRule(meta, () => []), [resource]), []);
    });
});
