/**
 * A row located at its object (gitops/manifests/evaluate-manifests.ts locatedRow): the row's keys in their order (its own
 * `field` left out), then file, line and column, then the field and what syncs the object when known; a key the
 * row already has stays in its place. Reports write rows as they are, so the order is what the JSON report shows.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { evaluateManifests, locateRows, locatedRow, rowField } from "../../../../gitops/manifests/evaluate-manifests";
import { loadManifests } from "../../../../gitops/manifests/load";
import { compareText, sortRows } from "../../../../evaluation/rows";
import { EvalRow } from "../../../../evaluation/evaluate";
import { packConfig } from "../../../../evaluation/pack-config";

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
        const branch = { ...base, field: "spec.branch" };
        assert.deepStrictEqual(Object.keys(locatedRow(branch, { ...obj, syncedBy: "Application argocd/x" }, at)), [
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
        const withPlace = { ...branch, file: "old", syncedBy: "old", line: 1 } as EvalRow;
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
        // A row whose rule gave no field has none, whatever its message names (base's names spec.branch).
        assert.ok(!("field" in locatedRow(base, obj, at)));
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

    it("is the field the rule gave as data, never one its message names", () => {
        assert.strictEqual(rowField(row("anything", "spec.branch")), "spec.branch");
        assert.strictEqual(rowField(row("spec.envRefs.TOKEN (a credential) is a Literal")), undefined);
        assert.strictEqual(
            rowField(row("pass it as secret config (spec.secretsRef)", "program.variables.password")),
            "program.variables.password",
        );
        assert.strictEqual(rowField(row("", "")), undefined);
    });
});

describe("locateRows: a finding at the line of the field its rule gave", () => {
    let root: string;
    beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-located-"))));
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    const STACK = [
        "apiVersion: pulumi.com/v1", // 1
        "kind: Stack", // 2
        "metadata:", // 3
        "  name: app", // 4
        "  namespace: pulumi", // 5
        "spec:", // 6
        "  stack: org/app/dev", // 7
        "  projectRepo: https://github.com/org/app.git", // 8
        "  branch: main", // 9
        "  envRefs:", // 10
        "    PULUMI_ACCESS_TOKEN:", // 11
        "      type: Secret", // 12
        "      secret: {name: t, key: t}", // 13
        "    AWS_ACCESS_KEY_ID:", // 14
        "      type: Secret", // 15
        "      secret: {name: aws, key: id}", // 16
        "",
    ].join("\n");

    function load(text: string) {
        fs.writeFileSync(path.join(root, "m.yaml"), text);
        return loadManifests(["."], { repoRoot: root, cwd: root });
    }

    it("moves a finding to its field's line only by the field it carries, never by its message", () => {
        const l = load(STACK);
        const [obj] = l.objects;
        const judged = (text: string, field?: string): EvalRow => {
            const r = { ...base, urn: obj.urn, message: text, facts: { text, failClosed: false } } as EvalRow;
            if (field !== undefined) r.field = field;
            return r;
        };
        const rows = locateRows(l, [
            judged("spec.branch tracks a branch; set spec.commit", "spec.branch"),
            judged("a message that names spec.projectRepo, with no field"),
        ]);
        const at = (message: string) => {
            const r = rows.find((x) => x.message === message)!;
            return [r.line, r.field];
        };
        assert.deepStrictEqual(at("spec.branch tracks a branch; set spec.commit"), [9, "spec.branch"]);
        assert.deepStrictEqual(at("a message that names spec.projectRepo, with no field"), [1, undefined]);
    });

    it("locates the pack's findings at the fields they are about, not at the fields their advice names", () => {
        const program = [
            "apiVersion: pulumi.com/v1", // 1
            "kind: Program", // 2
            "metadata:", // 3
            "  name: db", // 4
            "  namespace: pulumi", // 5
            "program:", // 6
            "  resources:", // 7
            "    db:", // 8
            "      type: aws:rds:Instance", // 9
            "      properties:", // 10
            "        masterPassword: hunter2-literal", // 11
            "",
        ].join("\n");
        const rows = evaluateManifests(load(`${STACK}---\n${program}`), packConfig());
        const where = (policy: string) =>
            rows.filter((r) => r.policy === policy).map((r) => `${r.resource} ${r.line} ${r.field}`);
        // The advice names spec.secretsRef (absent from the Program); the finding is at the property.
        assert.deepStrictEqual(where("pko-workspace-program-objects"), [
            "Program/pulumi/db 28 program.resources.db.properties.masterPassword",
        ]);
        // The advice names spec.environment (absent); the finding is at the static key it is about.
        assert.deepStrictEqual(where("pko-stack-esc-or-oidc-preferred").sort(), [
            "Stack/pulumi/app 11 spec.envRefs.PULUMI_ACCESS_TOKEN",
            "Stack/pulumi/app 14 spec.envRefs.AWS_ACCESS_KEY_ID",
        ]);
    });
});
