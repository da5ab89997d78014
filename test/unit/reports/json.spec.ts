/**
 * The JSON report holds what its run made (schemaVersion 2): a check's report has no `fixtures` and no `stack`, a
 * harness run's no `projects`; each finding carries the rule, its severity, the status, the Kubernetes object,
 * where it is, the message and the fix; every shape validates against schemas/pko-guard/report.schema.json.
 */
import * as assert from "assert";
import { Finding } from "../../../evaluation/rows";
import { renderJson } from "../../../reports/json";
import { FixtureSubject, ProjectSubject } from "../../../reports/subject";
import { jsonReportErrors } from "../../support/validators";

const FINDING: Finding = {
    policy: "pko-stack-prod-pinned-commit",
    resource: "Stack/pulumi/web",
    urn: "urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::Stack/pulumi/web",
    type: "kubernetes:pulumi.com/v1:Stack",
    level: "mandatory",
    message: "not pinned",
    file: "m/stack.yaml",
    line: 9,
    column: 3,
    status: "blocking",
};

function project(stack: string, findings: Finding[]): ProjectSubject {
    return {
        kind: "project",
        name: "manifests",
        stack,
        description: "d",
        programFile: "/x",
        findings,
        outcome: findings.length > 0 ? "fail" : "pass",
        durationMs: 1,
    };
}

const FIXTURE: FixtureSubject = {
    kind: "fixture",
    name: "f",
    description: "d",
    programFile: "/f/index.ts",
    verdict: { fixture: "f", description: "d", outcome: "match", legs: [], checks: [] },
};

const parse = (subjects: Parameters<typeof renderJson>[0]) => {
    const json = JSON.parse(renderJson(subjects, new Date(0)));
    assert.deepStrictEqual(jsonReportErrors(json), []);
    return json;
};

describe("the JSON report", () => {
    it("of check: no fixtures, no fixture counts, no empty stack", () => {
        const json = parse([project("", [])]);
        assert.deepStrictEqual(Object.keys(json), ["schemaVersion", "tool", "generatedAt", "summary", "projects"]);
        assert.strictEqual(json.schemaVersion, 2);
        assert.deepStrictEqual(json.summary, { projects: 1, blocking: 0, advisory: 0, waived: 0 });
        assert.ok(!("stack" in json.projects[0]));
    });

    it("of the gate keeps its stack; of the harness holds fixtures alone", () => {
        assert.strictEqual(parse([project("dev", [])]).projects[0].stack, "dev");
        const harness = parse([FIXTURE]);
        assert.deepStrictEqual(Object.keys(harness), ["schemaVersion", "tool", "generatedAt", "summary", "fixtures"]);
        assert.deepStrictEqual(harness.summary, { fixtures: 1, match: 1, mismatch: 0, error: 0, skipped: 0 });
        assert.ok("projects" in parse([FIXTURE, project("dev", [])]));
    });

    it("gives each finding its rule, severity, status, object, location, message and fix", () => {
        const [f] = parse([project("", [FINDING])]).projects[0].findings;
        assert.deepStrictEqual(
            [f.rule, f.severity, f.status, f.object, f.location, f.message],
            [
                "pko-stack-prod-pinned-commit",
                "high",
                "blocking",
                { apiVersion: "pulumi.com/v1", kind: "Stack", namespace: "pulumi", name: "web" },
                "m/stack.yaml:9",
                "not pinned",
            ],
        );
        assert.match(f.fix, /spec\.commit/);
        // A gate's finding is about a Pulumi resource: no Kubernetes object.
        const gate = { ...FINDING, resource: "web", urn: "urn:pulumi:dev::shop::kubernetes:pulumi.com/v1:Stack::web" };
        assert.ok(!("object" in parse([project("dev", [gate])]).projects[0].findings[0]));
        // A cluster object's core group is apiVersion v1.
        const live = {
            ...FINDING,
            policy: "rbac-no-cluster-admin-serviceaccount",
            resource: "ServiceAccount/pulumi/web",
            type: "kubernetes:core/v1:ServiceAccount",
            urn: "urn:pulumi:cluster::live::kubernetes:core/v1:ServiceAccount::ServiceAccount/pulumi/web",
        };
        assert.deepStrictEqual(parse([project("ctx", [live])]).projects[0].findings[0].object, {
            apiVersion: "v1",
            kind: "ServiceAccount",
            namespace: "pulumi",
            name: "web",
        });
    });
});
