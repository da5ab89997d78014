/**
 * evaluation/rows.ts `urnParts` reads a URN's type and name as splitting it at every `::` and the type at every `$`
 * reads them, on generated URNs and on the odd ones (too few parts, `:::`, `$` in the name, empty parts).
 */
import * as assert from "assert";
import fc from "fast-check";
import { urnParts } from "../../../evaluation/rows";

const RUNS = Number(process.env.PKO_GUARD_PROPERTY_RUNS ?? 1000);

/** The reading by splitting, as the engine's URN format defines it. */
function bySplitting(urn: string): { type: string; name: string } {
    const parts = urn.split("::");
    if (parts.length < 4) return { type: "", name: "" };
    const qualified = parts[2];
    return { type: qualified.split("$").pop() ?? qualified, name: parts.slice(3).join("::") };
}

describe("a URN's type and name (evaluation/rows.ts urnParts)", () => {
    it("are what splitting it gives, on generated URNs", () => {
        const piece = fc.string({ unit: fc.constantFrom(":", "$", "a", "b", "/"), maxLength: 8 });
        fc.assert(
            fc.property(fc.array(piece, { maxLength: 7 }), fc.constantFrom("::", ":::", ":"), (parts, sep) => {
                const urn = parts.join(sep);
                assert.deepStrictEqual(urnParts(urn), bySplitting(urn));
            }),
            { numRuns: RUNS },
        );
    });

    it("are what splitting it gives, on the URNs check makes and odd ones", () => {
        for (const urn of [
            "urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::Stack/ns/app",
            "urn:pulumi:check::manifests::pko-guard:copy:2$kubernetes:core/v1:Secret::Secret/ns/name",
            "urn:pulumi:s::p::a$b$c::name::with::colons",
            "urn:pulumi:s::p::t",
            "urn:pulumi:s::p::t::",
            "::::::",
            "",
            "a:::b:::c:::d",
        ])
            assert.deepStrictEqual(urnParts(urn), bySplitting(urn), urn);
    });
});
