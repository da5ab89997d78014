/**
 * evaluation/struct.ts gives what google-protobuf's `Struct.fromJavaScript(x).toJavaScript()` gives (the wire form the
 * policy SDK reads back in `pulumi preview`): the same values, the same key order at every level, and an error
 * exactly when google-protobuf throws one, on generated JSON and on the odd values hostile or programmatic input
 * can hold (NaN, infinities, -0, `__proto__` and numeric keys, holes, undefined, bigints, functions).
 */
import * as assert from "assert";
import fc from "fast-check";
import { SPECIAL_SIG_KEY, structRoundTrip, wireCopy } from "../../../evaluation/struct";
import { policySdk } from "../../../evaluation/policy-sdk";

const structPb = require("google-protobuf/google/protobuf/struct_pb");

const RUNS = Number(process.env.PKO_GUARD_PROPERTY_RUNS ?? 1000);

type Outcome = { value: unknown } | { error: string };

function viaProtobuf(x: unknown): Outcome {
    try {
        return { value: structPb.Struct.fromJavaScript(x).toJavaScript() };
    } catch (e) {
        return { error: (e as Error).message };
    }
}

function viaStruct(x: unknown): Outcome {
    try {
        return { value: structRoundTrip(x as Record<string, unknown>) };
    } catch (e) {
        return { error: (e as Error).message };
    }
}

/** Every object's keys, in order, at every level (deepStrictEqual does not compare key order). */
function shape(v: unknown): unknown {
    if (v === null || typeof v !== "object") return typeof v;
    if (Array.isArray(v)) return v.map(shape);
    return Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]);
}

function same(x: unknown): void {
    const a = viaProtobuf(x);
    const b = viaStruct(x);
    assert.deepStrictEqual(b, a);
    if ("value" in a && "value" in b) assert.deepStrictEqual(shape(b.value), shape(a.value));
}

const key = fc.oneof(
    fc.string(),
    fc.constantFrom(
        "__proto__",
        "constructor",
        "toString",
        "hasOwnProperty",
        "0",
        "10",
        "2",
        "-1",
        "1.5",
        "",
        "é",
        "B",
        "a",
        "_",
    ),
);
const odd = fc.constantFrom<unknown>(
    NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    2 ** 53 + 2,
    1e-320,
    undefined,
    10n,
    () => 1,
    Symbol("s"),
);
const value = fc.letrec((tie) => ({
    v: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.jsonValue({ maxDepth: 2 }),
        odd,
        tie("arr"),
        tie("obj"),
    ),
    arr: fc.array(tie("v"), { maxLength: 5 }),
    obj: fc.dictionary(key, tie("v"), { maxKeys: 6 }),
}));

describe("the wire Struct's round trip (evaluation/struct.ts) is google-protobuf's", function () {
    // The work grows with PKO_GUARD_PROPERTY_RUNS (default 1,000), and the machine may be loaded.
    this.timeout(600000);
    it("on generated JSON objects, with odd values and keys", () => {
        fc.assert(
            fc.property(fc.dictionary(key, value.v, { maxKeys: 8 }), (x) => same(x)),
            { numRuns: RUNS },
        );
    });

    it("on plain JSON (the manifests' case): equal values, sorted keys, no error", () => {
        fc.assert(
            fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), (x) => {
                same(x);
                assert.ok("value" in viaStruct(x));
            }),
            { numRuns: RUNS },
        );
    });

    it("on the cases named: holes, own __proto__ keys, inherited keys, arrays and primitives at the top", () => {
        const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
        const inherited = Object.assign(Object.create({ inherited: 1 }), { own: 2 });
        for (const x of [
            { a: holes },
            JSON.parse('{"__proto__": {"polluted": 1}, "b": 1}'),
            inherited,
            { a: inherited },
            [1, 2],
            "ab",
            null,
            undefined,
            3,
            { a: [undefined] },
            { a: { b: 10n } },
            { a: new Date(0) },
        ])
            same(x);
    });
});

describe("the wire copy's special flag (evaluation/struct.ts wireCopy)", function () {
    this.timeout(600000);
    const sig = fc.constantFrom(SPECIAL_SIG_KEY);
    const secret = fc.record({
        [SPECIAL_SIG_KEY]: fc.constantFrom("1b47061264138c4ac30d75fd1eb44270"),
        value: fc.string(),
    });
    const data = fc.letrec((tie) => ({
        v: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 2 }), secret, tie("arr"), tie("obj")),
        arr: fc.array(tie("v"), { maxLength: 4 }),
        obj: fc.dictionary(fc.oneof(key, sig), tie("v"), { maxKeys: 5 }),
    }));

    /** What the deserializer gives, with the keys of every object in order (deepStrictEqual ignores their order). */
    function deserialized(x: Record<string, unknown>): { value: unknown; keys: unknown } | { error: string } {
        try {
            const value = policySdk().deserializeProperties({ toJavaScript: () => structRoundTrip(x) }, false);
            return { value, keys: shape(value) };
        } catch (e) {
            return { error: (e as Error).message };
        }
    }

    it("is false only where the deserializer would give back the same data, keys in the same order", () => {
        fc.assert(
            fc.property(fc.dictionary(fc.oneof(key, sig), data.v, { maxKeys: 6 }), (x) => {
                const { wire, special } = wireCopy(x);
                const expected = deserialized(x);
                if (!special) assert.deepStrictEqual({ value: wire, keys: shape(wire) }, expected);
                else assert.ok(JSON.stringify(x).includes(SPECIAL_SIG_KEY));
            }),
            { numRuns: RUNS },
        );
    });

    it("is true for a secret, however deep", () => {
        const wrapped = { [SPECIAL_SIG_KEY]: "1b47061264138c4ac30d75fd1eb44270", value: "s" };
        for (const x of [{ a: wrapped }, { a: [{ b: wrapped }] }, wrapped])
            assert.strictEqual(wireCopy(x).special, true);
        assert.strictEqual(wireCopy({ a: [{ b: "s" }] }).special, false);
    });
});
