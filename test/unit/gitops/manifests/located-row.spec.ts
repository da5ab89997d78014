/**
 * A row located at its object (gitops/manifests/evaluate-manifests.ts locatedRow): the row's keys in their order (its own
 * `field` left out), then file, line and column, then the field and what syncs the object when known; a key the
 * row already has stays in its place. Reports write rows as they are, so the order is what the JSON report shows.
 */
import * as assert from "assert";
import { locatedRow, rowField } from "../../../../gitops/manifests/evaluate-manifests";
import { compareText, sortRows } from "../../../../evaluation/rows";
import { EvalRow } from "../../../../evaluation/evaluate";

const facts = { text: "spec.branch is main", quoted: [] } as unknown as EvalRow["facts"];
const base = {
    policy: "p",
    resource: "Stack/a",
    urn: "urn:x",
    type: "kubernetes:pulumi.com/v1:Stack",
    level: "mandatory",
    message: "spec.branch is main",
    facts,
} as EvalRow;

describe("locatedRow: a row at its object's file, line and column", () => {
    it("keeps the row's keys in order and adds the place after them", () => {
        const at = { line: 3, column: 5 };
        const obj = { repoPath: "m/a.yaml", abs: "/r/m/a.yaml" };
        assert.deepStrictEqual(Object.keys(locatedRow({ ...base, field: "spec.branch" }, obj, at)), [
            "policy",
            "resource",
            "urn",
            "type",
            "level",
            "message",
            "facts",
            "file",
            "line",
            "column",
            "field",
        ]);
        assert.deepStrictEqual(Object.keys(locatedRow(base, { ...obj, syncedBy: "Application argocd/x" }, at)), [
            "policy",
            "resource",
            "urn",
            "type",
            "level",
            "message",
            "facts",
            "file",
            "line",
            "column",
            "field",
            "syncedBy",
        ]);
        // Keys the row has already stay where they are, with the located values.
        const withPlace = { ...base, file: "old", syncedBy: "old", line: 1 } as EvalRow;
        const located = locatedRow(withPlace, { ...obj, syncedBy: "Application argocd/x" }, at);
        assert.deepStrictEqual(Object.keys(located), [
            "policy",
            "resource",
            "urn",
            "type",
            "level",
            "message",
            "facts",
            "file",
            "syncedBy",
            "line",
            "column",
            "field",
        ]);
        assert.deepStrictEqual(
            [located.file, located.line, located.column, located.field, located.syncedBy],
            ["m/a.yaml", 3, 5, "spec.branch", "Application argocd/x"],
        );
        // No object or place: the row as it is, without its field.
        assert.deepStrictEqual(Object.keys(locatedRow({ ...base, field: "spec.x" }, undefined, at)), [
            "policy",
            "resource",
            "urn",
            "type",
            "level",
            "message",
            "facts",
        ]);
    });
});

describe("sortRows: one order whatever the locale", () => {
    it("sorts by policy, resource, message in UTF-16 code units (no collation: case and punctuation as JavaScript compares them)", () => {
        const r = (policy: string, resource: string, message = "m") => ({ ...base, policy, resource, message });
        const sorted = sortRows([
            r("p", "b"),
            r("p", "B"),
            r("p", "a_b"),
            r("p", "a-b"),
            r("o", "z"),
            r("p", "a", "y"),
            r("p", "a", "j"),
            r("p", "é"),
            r("p", "e"),
        ]);
        assert.deepStrictEqual(
            sorted.map((x) => `${x.policy} ${x.resource} ${x.message}`),
            ["o z m", "p B m", "p a j", "p a y", "p a-b m", "p a_b m", "p b m", "p e m", "p é m"],
        );
        assert.strictEqual(compareText("B", "a"), -1);
        assert.strictEqual(compareText("a", "a"), 0);
    });
});

describe("rowField: the field a row points at", () => {
    const row = (text: string, field?: string) =>
        ({ ...base, message: text, facts: { text, failClosed: false }, ...(field ? { field } : {}) }) as EvalRow;

    it("is the rule's own field, else a whole field path its message names, never a word that starts like one", () => {
        assert.strictEqual(rowField(row("anything", "spec.branch")), "spec.branch");
        assert.strictEqual(rowField(row("spec.envRefs.TOKEN (a credential) is a Literal")), "spec.envRefs.TOKEN");
        assert.strictEqual(rowField(row("it grants a group; use a bucket policy for specific principals")), undefined);
        assert.strictEqual(rowField(row("the database password is plain; see rulesets")), undefined);
        assert.strictEqual(rowField(row('branch "spec.x" is not pinned')), undefined);
    });
});
