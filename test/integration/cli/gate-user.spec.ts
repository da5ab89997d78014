/**
 * The gate on a user's own project, outside the repository: a git repository in a temporary folder with the
 * Pulumi program in infra/ and the platform team's config (with waivers) in policy/. Run from the repository
 * root, from the program's folder and from /, the SARIF paths stay relative to the repository root and the
 * regions at the declaration lines; waived findings are reported, suppressed and not blocking; unused waivers
 * are noticed; GitHub annotations and the step summary are written.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { CLI, gateProject } from "../../support/gate-project";
import { jsonReportErrors, sarifErrors } from "../../support/validators";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

const PROGRAM = `import * as k8s from "@pulumi/kubernetes";

const stack = (name: string, spec: Record<string, unknown>) =>
    new k8s.apiextensions.CustomResource(name, {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: "pulumi" },
        spec: { stack: "acme/app/prod", projectRepo: "https://github.com/acme/app", serviceAccountName: "deployer", refresh: true, environment: ["aws"], ...spec },
    });

stack("billing-prod", { branch: "main" });
stack("legacy-prod", { branch: "main" });
stack("pinned-prod", { commit: "${SHA}" });

new k8s.core.v1.ServiceAccount("deployer", { metadata: { name: "deployer", namespace: "pulumi" } });
new k8s.rbac.v1.ClusterRoleBinding("deployer-auth-delegator", {
    metadata: { name: "pulumi:deployer:system:auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }],
});
`;

describe("pko-guard gate on a user's repository", function () {
    this.timeout(1200000);
    const project = gateProject({ prefix: "user-gate", name: "shop", program: PROGRAM, setup: initPolicy });
    const { root, infra } = project;

    /** The platform team's config in policy/. */
    function initPolicy(root: string) {
        fs.mkdirSync(path.join(root, "policy"));
        // The platform team starts from `pko-guard init` (so the engine is shown to accept its output) and adds waivers.
        const init = spawnSync(process.execPath, [CLI, "init", "policy/pko-guard.json"], {
            cwd: root,
            encoding: "utf8",
        });
        assert.strictEqual(init.status, 0, init.stderr);
        const config = JSON.parse(fs.readFileSync(path.join(root, "policy", "pko-guard.json"), "utf8"));
        config["pko-stack-prod-pinned-commit"].waivers = [
            { resource: "legacy-*", reason: "moves to commits in Q1", expires: "2099-12-31" },
            { resource: "Stack/pulumi/ghost", reason: "nothing matches" },
        ];
        fs.writeFileSync(path.join(root, "policy", "pko-guard.json"), JSON.stringify(config, null, 2));
    }

    for (const [label, cwd] of [
        ["the repository root", () => root],
        ["the program folder", () => infra],
        ["/", () => "/"],
    ] as const) {
        it(`from ${label}: blocks on the unwaived finding, reports the waived one, SARIF paths from the repository root`, () => {
            const out = path.join(root, "out", label.replace(/\W+/g, "-"));
            const summary = path.join(out, "summary.md");
            fs.mkdirSync(out, { recursive: true });
            const env = { ...project.stack.env, GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary };
            const r = spawnSync(
                process.execPath,
                [
                    CLI,
                    "gate",
                    infra,
                    "-s",
                    "dev",
                    "--config",
                    path.join(root, "policy", "pko-guard.json"),
                    "--report",
                    `sarif=${out}/g.sarif`,
                    "--report",
                    `json=${out}/g.json`,
                ],
                {
                    cwd: cwd(),
                    env,
                    encoding: "utf8",
                    timeout: 600000,
                },
            );
            assert.strictEqual(r.status, 1, r.stderr + r.stdout);
            assert.match(r.stdout, /^BLOCKING {2}pko-stack-prod-pinned-commit/m);
            assert.match(r.stdout, /^waived {2}pko-stack-prod-pinned-commit/m);
            assert.match(r.stdout, /unused waiver for Stack\/pulumi\/ghost/);
            assert.match(r.stdout, /shop \(stack dev\): 2 violation\(s\), 0 advisory, 1 waived, 1 blocking: FAIL/);
            assert.match(
                r.stdout,
                /^::error file=[^,]*index\.ts,line=11,col=7,title=pko-stack-prod-pinned-commit \(billing-prod\)::/m,
            );
            assert.match(r.stdout, /^::notice file=[^,]*index\.ts,line=12,col=7,/m);
            assert.match(
                fs.readFileSync(summary, "utf8"),
                /\| blocking \| `pko-stack-prod-pinned-commit` \| billing\\-prod \|/,
            );

            const json = JSON.parse(fs.readFileSync(path.join(out, "g.json"), "utf8"));
            assert.deepStrictEqual(jsonReportErrors(json), []);
            const findings = json.projects[0].findings.map((f: any) => [f.resource, f.status, f.line]);
            assert.deepStrictEqual(findings, [
                ["billing-prod", "blocking", 11],
                ["legacy-prod", "waived", 12],
            ]);

            const sarif = JSON.parse(fs.readFileSync(path.join(out, "g.sarif"), "utf8"));
            assert.deepStrictEqual(sarifErrors(sarif), []);
            const run = sarif.runs[0];
            assert.strictEqual(run.originalUriBaseIds["%SRCROOT%"].uri, `file://${root}/`);
            const results = run.results.map((x: any) => ({
                resource: x.locations[0].logicalLocations[0].name,
                uri: x.locations[0].physicalLocation.artifactLocation.uri,
                base: x.locations[0].physicalLocation.artifactLocation.uriBaseId,
                line: x.locations[0].physicalLocation.region.startLine,
                suppressed: (x.suppressions ?? []).length,
            }));
            assert.deepStrictEqual(results, [
                { resource: "billing-prod", uri: "infra/index.ts", base: "%SRCROOT%", line: 11, suppressed: 0 },
                { resource: "legacy-prod", uri: "infra/index.ts", base: "%SRCROOT%", line: 12, suppressed: 1 },
            ]);
        });
    }
});
