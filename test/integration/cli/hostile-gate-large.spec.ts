/**
 * The gate on a large program, with the real toolchain (issue 19 item 1): 5,000 ConfigMaps beside a
 * production Stack that tracks a branch. Every finding is kept and judged: exit 1 on the mandatory finding;
 * with that rule made advisory, exit 0, and exit 1 again with --fail-on-advisory. Before the event stream
 * was read incrementally, the findings were cut off and the gate passed (or said "preview failed").
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { CLI, gateProject } from "../../support/gate-project";

const RESOURCES = 5000;

const PROGRAM = `import * as k8s from "@pulumi/kubernetes";

new k8s.apiextensions.CustomResource("billing-prod", {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "billing-prod", namespace: "pulumi" },
    spec: { stack: "acme/billing/prod", projectRepo: "https://github.com/acme/billing", branch: "main", serviceAccountName: "deployer", refresh: true, environment: ["aws"] },
});
for (let i = 0; i < ${RESOURCES}; i++) {
    new k8s.core.v1.ConfigMap(\`cm-\${i}\`, { metadata: { name: \`cm-\${i}\`, namespace: "apps" }, data: { index: String(i), note: "x".repeat(100) } });
}
`;

describe(`pko-guard gate on a program with ${RESOURCES} resources (real toolchain)`, function () {
    this.timeout(3600000);
    const project = gateProject({
        prefix: "gate-large",
        name: "big",
        program: PROGRAM,
        setup: (root) =>
            fs.writeFileSync(
                path.join(root, "advisory.json"),
                JSON.stringify({ "pko-stack-prod-pinned-commit": "advisory" }),
            ),
    });
    const { root, infra } = project;

    function gate(...args: string[]) {
        const json = path.join(root, `report-${args.join("-").replace(/\W+/g, "_")}.json`);
        const r = spawnSync(
            process.execPath,
            [CLI, "gate", infra, "-s", "dev", "--timeout", "3000", "--report", `json=${json}`, ...args],
            {
                cwd: root,
                env: project.stack.env,
                encoding: "utf8",
                timeout: 3300000,
                maxBuffer: 64 * 1024 * 1024,
            },
        );
        const report = JSON.parse(fs.readFileSync(json, "utf8"));
        const findings = report.projects[0].findings.map(
            (f: { policy: string; resource: string; status: string }) => `${f.policy} ${f.resource} ${f.status}`,
        );
        return { code: r.status, stdout: r.stdout, stderr: r.stderr, findings };
    }

    it("exits 1 on the mandatory finding, kept among 5,000 resources", () => {
        const r = gate();
        assert.strictEqual(r.code, 1, r.stderr + r.stdout.slice(-2000));
        assert.ok(r.findings.includes("pko-stack-prod-pinned-commit billing-prod blocking"), r.findings.join("\n"));
        assert.ok(!r.findings.some((f: string) => / cm-\d+ /.test(f)), "no ConfigMap has a finding");
        assert.match(r.stdout, /^BLOCKING {2}pko-stack-prod-pinned-commit/m);
    });

    it("with the finding advisory: exit 0, and exit 1 with --fail-on-advisory, the same findings both times", () => {
        const advisory = path.join(root, "advisory.json");
        const plain = gate("--config", advisory);
        assert.strictEqual(plain.code, 0, plain.stderr + plain.stdout.slice(-2000));
        assert.ok(
            plain.findings.includes("pko-stack-prod-pinned-commit billing-prod advisory"),
            plain.findings.join("\n"),
        );
        const strict = gate("--config", advisory, "--fail-on-advisory");
        assert.strictEqual(strict.code, 1, strict.stderr + strict.stdout.slice(-2000));
        assert.deepStrictEqual(
            strict.findings,
            plain.findings.map((f: string) => f.replace(/ advisory$/, " blocking")),
        );
    });
});
