/**
 * JUnit of a project: one test case per rule and object the rule read, so that a rule that read nothing is no
 * passing test and each object's blocking finding is its own failure; valid against test/data/schemas/junit.xsd.
 */
import * as assert from "assert";
import { Finding } from "../../../evaluation/rows";
import { projectCases, renderJunit } from "../../../reports/junit";
import { ProjectSubject } from "../../../reports/subject";
import { junitErrors } from "../../support/validators";

const finding = (policy: string, resource: string, status: Finding["status"]): Finding => ({
    policy,
    resource,
    urn: `urn:pulumi:check::manifests::kubernetes:pulumi.com/v1:Stack::${resource}`,
    type: "kubernetes:pulumi.com/v1:Stack",
    level: "mandatory",
    message: `${policy} on ${resource}`,
    status,
});

const subject = (findings: Finding[]): ProjectSubject => ({
    kind: "project",
    name: "manifests",
    stack: "",
    description: "d",
    programFile: "/x",
    findings,
    outcome: "fail",
    durationMs: 1,
    objects: [
        { apiVersion: "pulumi.com/v1", kind: "Stack", namespace: "pulumi", name: "a" },
        { apiVersion: "pulumi.com/v1", kind: "Stack", namespace: "pulumi", name: "b" },
        { apiVersion: "v1", kind: "ConfigMap", namespace: "pulumi", name: "c" },
    ],
});

describe("JUnit of a project", () => {
    it("has a case per rule and object it read, findings failing their own case", async () => {
        const s = subject([
            finding("pko-stack-prod-pinned-commit", "Stack/pulumi/a", "blocking"),
            finding("pko-stack-prod-pinned-commit", "Stack/pulumi/b", "advisory"),
            finding("pko-stack-auth-delegator", "", "blocking"),
        ]);
        const cases = projectCases(s);
        const named = (rule: string) => cases.filter((c) => c.rule === rule).map((c) => [c.what, c.findings.length]);
        assert.deepStrictEqual(named("pko-stack-prod-pinned-commit"), [
            ["Stack/pulumi/a", 1],
            ["Stack/pulumi/b", 1],
        ]);
        assert.deepStrictEqual(named("pko-stack-auth-delegator"), [
            ["(stack)", 1],
            ["Stack/pulumi/a", 0],
            ["Stack/pulumi/b", 0],
        ]);
        // no rule reads ConfigMaps here, and the AWS rule reads no Kubernetes object: no case
        assert.ok(!cases.some((c) => c.what.startsWith("ConfigMap/")));
        assert.deepStrictEqual(named("aws-s3-no-public-acl"), []);
        const xml = renderJunit([s]);
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<testsuite name="pko-guard: manifests" tests="(\d+)" failures="2"/);
        assert.strictEqual(Number(/tests="(\d+)"/.exec(xml)![1]), cases.length);
        assert.match(xml, /name="pko-stack-prod-pinned-commit Stack\/pulumi\/a">\s*<failure/);
        assert.match(xml, /name="pko-stack-prod-pinned-commit Stack\/pulumi\/b">\s*<system-out>/);
    });

    it("of a run that lists no objects (the gate): cases for its findings only", () => {
        const s = { ...subject([finding("pko-stack-prod-pinned-commit", "web", "blocking")]), objects: undefined };
        assert.deepStrictEqual(
            projectCases(s).map((c) => `${c.rule} ${c.what}`),
            ["pko-stack-prod-pinned-commit web"],
        );
    });

    it("names files relative to the repository root, as the table and SARIF do; never an absolute path", () => {
        const at = (file: string) => ({ file, line: 3, column: 1 });
        const s = {
            ...subject([
                {
                    ...finding("pko-stack-prod-pinned-commit", "Stack/pulumi/a", "blocking"),
                    ...at("/repo/apps/a.yaml"),
                },
                {
                    ...finding("pko-stack-prod-pinned-commit", "Stack/pulumi/b", "blocking"),
                    ...at("/elsewhere/b.yaml"),
                },
            ]),
            root: "/repo",
        };
        const xml = renderJunit([s]);
        assert.match(xml, /\[blocking\] apps\/a\.yaml:3:1: Stack\/pulumi\/a: /);
        assert.match(xml, /\[blocking\] b\.yaml \(outside the repository\):3:1: Stack\/pulumi\/b: /);
        assert.doesNotMatch(xml, /\/repo\/|\/elsewhere\//);
    });
});
