/**
 * `pko-guard test` as a platform team runs it: the package packed (`npm pack`) and installed into a project folder
 * outside this repository, with the project's own fixtures (one in the versioned format, one in the format from
 * before versioning), its own pko-guard config, its own CrossGuard pack (a copy of examples/org-pack/pack) and that
 * pack's config, run with `npx pko-guard test`. The fixtures match in the mock and the real leg; a wrong expectation
 * fails with exit 1 and a line naming the fixture, the leg, the rule and the resource; `--init` scaffolds a fixture
 * that then passes; JUnit, JSON and GitHub annotations point at the expectation that failed.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { requireToolchain } from "../../support/helpers";
import { junitErrors } from "../../support/validators";

const NPM_QUIET = ["--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"];
/** The Kubernetes SDK the project's programs use (this repository's version: in the npm cache). */
const K8S_SDK = `@pulumi/kubernetes@${JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "node_modules", "@pulumi", "kubernetes", "package.json"), "utf8")).version}`;

const DEPLOYMENT = (
    name: string,
    labels: Record<string, string>,
    image: string,
) => `import * as k8s from "@pulumi/kubernetes";

new k8s.apps.v1.Deployment(${JSON.stringify(name)}, {
    metadata: { name: ${JSON.stringify(name)}, namespace: "shop", labels: ${JSON.stringify(labels)} },
    spec: {
        selector: { matchLabels: { app: ${JSON.stringify(name)} } },
        template: {
            metadata: { labels: { app: ${JSON.stringify(name)} } },
            spec: { containers: [{ name: "main", image: ${JSON.stringify(image)} }] },
        },
    },
});
`;

/** An expectation in the format from before versioning (no header): what --migrate takes. */
const UNLABELLED_BODY = `description: a Deployment without the team label, running :latest
violations:
  - policy: acme-team-label
    resource: cart
    count: 1
    message: "no example\\\\.org/owner label"
  - policy: acme-pinned-image
    resource: cart
    count: 1
    level: advisory
`;
const UNLABELLED_EXPECT = `apiVersion: pko-guard/v1\nkind: Fixture\n${UNLABELLED_BODY}`;

describe("pko-guard test from a user's project (packed, installed, npx)", function () {
    this.timeout(1800000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-test-user-"));
    const project = path.join(tmp, "project");
    const tests = path.join(project, "policy-tests");
    let env: NodeJS.ProcessEnv;

    const fixture = (name: string, program: string, expect: string) => {
        fs.mkdirSync(path.join(tests, name), { recursive: true });
        fs.writeFileSync(path.join(tests, name, "Pulumi.yaml"), `name: shop-${name}\nruntime: nodejs\n`);
        fs.writeFileSync(path.join(tests, name, "index.ts"), program);
        fs.writeFileSync(path.join(tests, name, "expect.yaml"), expect);
    };
    const packOptions = [
        "--config",
        "pko-guard.json",
        "--policy-pack",
        "policy/acme",
        "--policy-pack-config",
        "policy/acme-config.json",
    ];
    const pkoGuardTest = (...args: string[]) =>
        spawnSync("npx", ["--no-install", "pko-guard", "test", ...args], {
            cwd: project,
            env,
            encoding: "utf8",
            timeout: 900000,
        });

    before(function () {
        const toolchain = requireToolchain(this);
        fs.mkdirSync(project);
        fs.writeFileSync(
            path.join(project, "package.json"),
            JSON.stringify({ name: "shop-platform", version: "1.0.0", private: true }),
        );
        const packed = JSON.parse(
            execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], {
                cwd: REPO_ROOT,
                encoding: "utf8",
                stdio: ["ignore", "pipe", "ignore"],
            }),
        );
        execFileSync("npm", ["install", ...NPM_QUIET, path.join(tmp, packed[0].filename), K8S_SDK], {
            cwd: project,
            stdio: "ignore",
        });
        // The project's own pack and configs, and its fixtures.
        fs.cpSync(path.join(REPO_ROOT, "examples", "org-pack", "pack"), path.join(project, "policy", "acme"), {
            recursive: true,
        });
        fs.writeFileSync(
            path.join(project, "policy", "acme-config.json"),
            JSON.stringify({ "acme-team-label": { label: "example.org/owner" } }),
        );
        fs.writeFileSync(
            path.join(project, "pko-guard.json"),
            JSON.stringify({ "pko-guard-production": { productionStackPatterns: ["(^|/)live$"] } }),
        );
        fixture(
            "labelled",
            DEPLOYMENT("catalog", { "example.org/owner": "catalog" }, "nginx:1.27.3"),
            `# yaml-language-server: $schema=../../node_modules/pko-guard/schemas/pko-guard/fixture-v1.schema.json
apiVersion: pko-guard/v1
kind: Fixture
description: labelled and pinned
violations: []
`,
        );
        fixture("unlabelled", DEPLOYMENT("cart", { app: "cart" }, "nginx:latest"), UNLABELLED_EXPECT);
        // The toolchain this repository built, as a team's CI would have the Pulumi CLI and provider installed.
        env = { ...process.env, PKO_GUARD_TOOLCHAIN_BIN: toolchain.binDir, NO_COLOR: "1", GITHUB_ACTIONS: "" };
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("runs the project's fixtures with its config and its pack: mock and real legs match", () => {
        const r = pkoGuardTest("policy-tests", "--leg", "both", ...packOptions);
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /^match +labelled +mock real +0 rows$/m);
        assert.match(r.stdout, /^match +unlabelled +mock real +2 rows$/m);
        assert.match(r.stdout, /2 fixture\(s\): 2 match, 0 mismatch, 0 error/);
        // Nothing was loaded from this repository: the installed package and the project's own modules only.
        assert.ok(!fs.existsSync(path.join(project, "node_modules", "ts-node")), "ts-node is no dependency");
    });

    it("fails a wrong expectation, naming the fixture, leg, rule and resource, with reports at its line", () => {
        fs.writeFileSync(
            path.join(tests, "unlabelled", "expect.yaml"),
            UNLABELLED_EXPECT.replace("count: 1\n    message", "count: 2\n    message"),
        );
        try {
            const junit = path.join(tmp, "out", "junit.xml");
            const json = path.join(tmp, "out", "report.json");
            const r = pkoGuardTest(
                "policy-tests",
                ...packOptions,
                "--format",
                "github",
                "--report",
                `junit=${junit}`,
                "--report",
                `json=${json}`,
            );
            assert.strictEqual(r.status, 1, r.stdout + r.stderr);
            assert.match(r.stdout, /^MISMATCH unlabelled \[mock\] acme-team-label on cart: expected 2, got 1$/m);
            // The annotation points at the expectation's own line (line 5: `- policy: acme-team-label`).
            assert.match(
                r.stdout,
                /^::error file=policy-tests\/unlabelled\/expect\.yaml,line=5,title=pko-guard test%3A unlabelled \(mock\)::unlabelled \[mock\] acme-team-label on cart: expected 2, got 1$/m,
            );
            const xml = fs.readFileSync(junit, "utf8");
            assert.match(
                xml,
                /<testcase classname="unlabelled" name="mock"[^>]*>\s*<failure message="acme-team-label on cart: expected 2, got 1"/,
            );
            assert.match(xml, /<testcase classname="labelled" name="mock"/);
            const report = JSON.parse(fs.readFileSync(json, "utf8"));
            assert.strictEqual(report.summary.mismatch, 1);
            return junitErrors(xml).then((errors) => assert.deepStrictEqual(errors, []));
        } finally {
            fs.writeFileSync(path.join(tests, "unlabelled", "expect.yaml"), UNLABELLED_EXPECT);
        }
    });

    it("leaves pko-guard's pack out on request: the organisation's rules alone", () => {
        const r = pkoGuardTest("policy-tests", "--no-default-pack", ...packOptions.slice(2), "--verbose");
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
        assert.doesNotMatch(r.stdout, /pko-stack-/);
    });

    it("--init scaffolds a fixture from a program's current verdict, which then passes", () => {
        const dir = path.join(tests, "live-stack");
        fs.mkdirSync(dir);
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: shop-live\nruntime: nodejs\n");
        fs.writeFileSync(
            path.join(dir, "index.ts"),
            `import * as k8s from "@pulumi/kubernetes";
new k8s.apiextensions.CustomResource("shop-live", {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "shop-live", namespace: "pulumi", labels: { "example.org/owner": "shop" } },
    spec: { stack: "acme/shop/live", projectRepo: "https://github.com/acme/shop", branch: "main" },
});
`,
        );
        const init = pkoGuardTest("--init", "policy-tests/live-stack", ...packOptions);
        assert.strictEqual(init.status, 0, init.stdout + init.stderr);
        const written = fs.readFileSync(path.join(dir, "expect.yaml"), "utf8");
        assert.match(written, /^apiVersion: pko-guard\/v1\nkind: Fixture\n/m);
        // "live" is production under the project's own pko-guard config: a branch is refused.
        assert.match(
            written,
            /- policy: pko-stack-prod-pinned-commit\n {4}resource: shop-live\n {4}count: 1\n {4}level: mandatory/,
        );
        const again = pkoGuardTest("--init", "policy-tests/live-stack", ...packOptions);
        assert.strictEqual(again.status, 2, "an existing expect.yaml is never overwritten");
        const r = pkoGuardTest("policy-tests/live-stack", ...packOptions);
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
    });

    it("refuses the format from before versioning with one line; --migrate adds the header, nothing else changes", () => {
        fs.writeFileSync(path.join(tests, "unlabelled", "expect.yaml"), UNLABELLED_BODY);
        const old = pkoGuardTest("policy-tests", ...packOptions);
        assert.strictEqual(old.status, 2, old.stdout + old.stderr);
        assert.match(
            old.stderr,
            /^pko-guard: \S*expect\.yaml:1: no apiVersion: pko-guard\/v1 and kind: Fixture \(the format from before versioning\): run pko-guard test --migrate\n$/,
        );
        const r = pkoGuardTest("--migrate", "policy-tests");
        assert.strictEqual(r.status, 0, r.stderr);
        assert.match(r.stdout, /^1 migrated, 2 already pko-guard\/v1$/m);
        const text = fs.readFileSync(path.join(tests, "unlabelled", "expect.yaml"), "utf8");
        assert.strictEqual(
            text,
            "# yaml-language-server: $schema=../../node_modules/pko-guard/schemas/pko-guard/fixture-v1.schema.json\napiVersion: pko-guard/v1\nkind: Fixture\n" +
                UNLABELLED_BODY,
        );
        const run = pkoGuardTest("policy-tests", ...packOptions);
        assert.strictEqual(run.status, 0, run.stdout + run.stderr);
    });
});
