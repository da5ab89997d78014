/**
 * Walking a document's positions along a field path (gitops/decode/field-positions.ts findNode): at each mapping the
 * key that names the longest run of segments wins (keys may contain dots), the last such key when keys repeat;
 * a sequence item by its index. Compared with that rule written plainly (keys split at dots) on generated trees
 * and paths, and on a few cases by hand.
 */
import * as assert from "assert";
import fc from "fast-check";
import { PosEntry, PosNode } from "../../../../gitops/decode/yaml-positions";
import { Reached, fieldSegments, findNode } from "../../../../gitops/decode/field-positions";

/** The rule, plainly: each key split at dots, compared with the segments from the current one. */
function reference(root: PosNode | undefined, segments: readonly (string | number)[]): Reached | undefined {
    let node = root;
    let found: Reached | undefined = root;
    let i = 0;
    while (node && i < segments.length) {
        if (node.entries) {
            let best: { length: number; entry: PosEntry } | undefined;
            for (const entry of node.entries) {
                const parts = entry.key.split(".");
                if (parts.length > segments.length - i) continue;
                if (parts.every((p, j) => String(segments[i + j]) === p) && (!best || parts.length >= best.length))
                    best = { length: parts.length, entry };
            }
            if (!best) break;
            found = best.entry;
            node = best.entry.value;
            i += best.length;
        } else if (node.items && typeof segments[i] === "number") {
            const item: PosNode | undefined = node.items[segments[i] as number];
            if (!item) break;
            found = item;
            node = item;
            i++;
        } else break;
    }
    return found;
}

describe("findNode: a field path's place in a document's positions", () => {
    it("by hand: dotted keys, the longest run, the last repeated key, indexes", () => {
        const name: PosEntry = { key: "name", keyStart: 20 };
        const dotted: PosEntry = { key: "app.kubernetes.io/name", keyStart: 40 };
        const short: PosEntry = {
            key: "app",
            keyStart: 30,
            value: { start: 31, entries: [{ key: "kubernetes", keyStart: 32 }] },
        };
        const item: PosNode = { start: 60, entries: [{ key: "x", keyStart: 61 }] };
        const root: PosNode = {
            start: 0,
            entries: [
                {
                    key: "metadata",
                    keyStart: 0,
                    value: {
                        start: 10,
                        entries: [
                            name,
                            { key: "labels", keyStart: 25, value: { start: 26, entries: [short, dotted] } },
                        ],
                    },
                },
                { key: "items", keyStart: 50, value: { start: 55, items: [{ start: 56 }, item] } },
                { key: "metadata", keyStart: 70, value: { start: 71, entries: [{ key: "name", keyStart: 72 }] } },
            ],
        };
        assert.strictEqual(
            findNode(root, fieldSegments("metadata.name")),
            root.entries![2].value!.entries![0] as PosEntry,
        );
        assert.strictEqual(findNode(root, fieldSegments("items[1].x")), item.entries![0]);
        assert.strictEqual(findNode(root, fieldSegments("items[2]")), root.entries![1]);
        const labels = { start: 26, entries: [short, dotted] };
        assert.strictEqual(findNode(labels, fieldSegments("app.kubernetes.io/name")), dotted);
        assert.strictEqual(findNode(labels, fieldSegments("app.kubernetes")), short.value!.entries![0]);
        assert.strictEqual(findNode(labels, fieldSegments("app.other")), short);
    });

    it("as the rule says on generated trees and paths", () => {
        const word = fc.constantFrom("a", "b", "0", "1", "a.b", "b.0", "a.b.c", "", ".", "a.", ".b", "spec", "x/y");
        const tree = fc.letrec((tie) => ({
            node: fc.oneof({ depthSize: "small" }, fc.constant({ start: 0 } as PosNode), tie("map"), tie("seq")),
            map: fc
                .array(fc.tuple(word, fc.option(tie("node"), { nil: undefined })), { maxLength: 5 })
                .map((pairs) => ({
                    start: 0,
                    entries: pairs.map(([key, value], i) => ({
                        key,
                        keyStart: i,
                        ...(value ? { value: value as PosNode } : {}),
                    })),
                })),
            seq: fc.array(tie("node"), { maxLength: 3 }).map((items) => ({ start: 0, items: items as PosNode[] })),
        }));
        const segment = fc.oneof(fc.constantFrom("a", "b", "0", "c", "spec", "x/y", "b.0"), fc.nat({ max: 3 }));
        fc.assert(
            fc.property(tree.map as fc.Arbitrary<PosNode>, fc.array(segment, { maxLength: 5 }), (root, segments) => {
                assert.strictEqual(findNode(root, segments), reference(root, segments));
            }),
            { numRuns: 5000 },
        );
    });
});
