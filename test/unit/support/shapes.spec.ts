/**
 * `extended` (support/shapes.ts) is `{ ...from, ...extra }` key for key: the same keys in the same order
 * with the same values, `__proto__` an own key and never the prototype. That the objects it makes share their
 * hidden classes is test/integration/support/hidden-classes.spec.ts's (a fresh process).
 */
import * as assert from "assert";
import * as fc from "fast-check";
import { extended } from "../../../support/shapes";

describe("extended: { ...from, ...extra } without a hidden class per object", () => {
    it("keys, order and values as the spread gives them; __proto__ an own key", () => {
        const key = fc.constantFrom("a", "b", "metadata", "__proto__", "constructor", "1", "0", "z");
        const obj = fc.dictionary(key, fc.oneof(fc.integer(), fc.string()), { maxKeys: 6 });
        fc.assert(
            fc.property(obj, obj, (a, b) => {
                const want = { ...a, ...b };
                const got = extended(a, b);
                assert.deepStrictEqual(Object.keys(got), Object.keys(want));
                for (const k of Object.keys(want))
                    assert.strictEqual((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k]);
                assert.strictEqual(Object.getPrototypeOf(got), Object.prototype);
            }),
            { numRuns: 300 },
        );
        const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
        const got = extended(hostile, { b: 2 }) as Record<string, unknown>;
        assert.deepStrictEqual(Object.keys(got), ["__proto__", "a", "b"]);
        assert.strictEqual(got.polluted, undefined);
    });
});
