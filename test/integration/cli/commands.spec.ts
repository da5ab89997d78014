/**
 * The small commands users expect, run as users run them: from a temporary project folder outside the
 * repository (--version, rules, explain, init), and the gate's reports when it cannot run.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { packPolicies, parsePackConfig, reconcilePackConfig } from "../../../evaluation/pack-config";
import { policies } from "../../../policies";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";
import { runResourcePolicy, runStackPolicy } from "../../support/helpers";

const CLI = CLI_ENTRY;
const VERSION = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;

describe("pko-guard commands from a user's project", function () {
    this.timeout(120000);
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-user-project-"));
    const run = (args: string[], env: NodeJS.ProcessEnv = process.env) => {
        const r = spawnSync(process.execPath, [CLI, ...args], { cwd: project, env, encoding: "utf8" });
        return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    before(() => fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: shop\nruntime: yaml\n"));
    after(() => fs.rmSync(project, { recursive: true, force: true }));

    it("--version prints the package's version", () => {
        for (const flag of ["--version", "-V"]) {
            const r = run([flag]);
            assert.strictEqual(r.code, 0, r.stderr);
            assert.strictEqual(r.stdout.trim(), VERSION);
        }
    });

    it("rules lists every rule with level and severity, and --json", () => {
        const r = run(["rules"]);
        assert.strictEqual(r.code, 0, r.stderr);
        for (const p of policies)
            assert.match(r.stdout, new RegExp(`^${p.name} +${p.enforcementLevel} +${p.severity} `, "m"));
        const json = JSON.parse(run(["rules", "--json"]).stdout);
        assert.deepStrictEqual(
            json.map((x: { name: string }) => x.name),
            policies.map((p) => p.name),
        );
        assert.deepStrictEqual(Object.keys(json[0]), ["name", "level", "severity", "description", "doc", "helpUri"]);
        // Each rule's documentation: its section of the rule reference, which exists, and its page under the
        // package's own repository (package.json repository).
        const reference = fs.readFileSync(path.join(REPO_ROOT, "docs", "rules.md"), "utf8");
        for (const x of json) {
            assert.strictEqual(x.doc, `docs/rules.md#rule-${x.name}`);
            assert.strictEqual(
                x.helpUri,
                `https://github.com/pko-guard/pko-guard/blob/main/docs/rules.md#rule-${x.name}`,
            );
            assert.ok(reference.includes(`<a id="rule-${x.name}"></a>`), x.name);
        }
    });

    it("explain shows what, why, fix, config keys with defaults and an example, for every rule", () => {
        for (const p of policies) {
            const r = run(["explain", p.name]);
            assert.strictEqual(r.code, 0, r.stderr);
            for (const section of [
                /^What: /m,
                /^Why: /m,
                /^Fix: /m,
                /^Config keys/m,
                /^ {2}enforcementLevel \[/m,
                /^ {4}remediate: /m,
                /^ {2}waivers \[\[\]\]/m,
                /^An example that passes/m,
                /^Documentation: \S+docs\/rules\.md#rule-/m,
            ]) {
                assert.match(r.stdout, section, `${p.name}: ${section}`);
            }
            for (const [k, s] of Object.entries(
                (p.configSchema?.properties ?? {}) as Record<string, { default?: unknown }>,
            )) {
                assert.ok(r.stdout.includes(`  ${k} [${JSON.stringify(s.default ?? null)}]`), `${p.name}: ${k}`);
            }
        }
        const bad = run(["explain", "no-such-rule"]);
        assert.strictEqual(bad.code, 2);
        assert.strictEqual(bad.stderr, 'pko-guard: "no-such-rule" is not a rule of this pack (see pko-guard rules)\n');
    });

    it("every rule's example passes its rule", () => {
        for (const p of policies) {
            const example = p.about.example;
            assert.ok(example && example.length > 0, `${p.name} has no example`);
            const found =
                "validateStack" in p
                    ? runStackPolicy(p as never, example)
                    : example.flatMap((r) => runResourcePolicy(p as never, r));
            assert.deepStrictEqual(found, [], p.name);
        }
    });

    it("init writes a config with every policy and its defaults that the config reconciler accepts, and never overwrites", () => {
        const r = run(["init", "policy/pko-guard.json"]);
        assert.strictEqual(r.code, 0, r.stderr);
        const file = path.join(project, "policy", "pko-guard.json");
        const text = fs.readFileSync(file, "utf8");
        const parsed = parsePackConfig(text, file);
        assert.deepStrictEqual(
            Object.keys(parsed),
            policies.map((p) => p.name),
        );
        const reconciled = reconcilePackConfig(packPolicies(), parsed, file);
        for (const p of policies) assert.strictEqual(reconciled[p.name].enforcementLevel, p.enforcementLevel);
        assert.deepStrictEqual(JSON.parse(text)["pko-stack-resync-floor"], {
            enforcementLevel: "advisory",
            minResyncFrequencySeconds: 60,
            waivers: [],
            allowAnnotationWaivers: false,
        });
        assert.match(
            fs.readFileSync(path.join(project, "policy", "pko-guard.md"), "utf8"),
            /## pko-stack-resync-floor/,
        );
        const again = run(["init", "policy/pko-guard.json"]);
        assert.strictEqual(again.code, 2);
        assert.match(again.stderr, /exists \(use --force to overwrite\)\n$/);
        assert.strictEqual(run(["init", "policy/pko-guard.json", "--force"]).code, 0);
    });

    it("init in a git repository's subfolder points the root's .pko-guard.yaml at it; check and test find it", () => {
        const repo = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-init-repo-"));
        try {
            assert.strictEqual(spawnSync("git", ["init", "-q", "."], { cwd: repo }).status, 0);
            fs.mkdirSync(path.join(repo, "apps"));
            const inApps = (args: string[]) =>
                spawnSync(process.execPath, [CLI, ...args], { cwd: path.join(repo, "apps"), encoding: "utf8" });
            const init = inApps(["init"]);
            assert.strictEqual(init.status, 0, init.stderr);
            assert.deepStrictEqual(init.stdout.split("\n"), [
                "wrote policy/pko-guard.json (every rule at its defaults) and policy/pko-guard.md",
                "wrote config: apps/policy/pko-guard.json in ../.pko-guard.yaml, so check, the pre-commit hook and test read it",
                "",
            ]);
            // Every rule mandatory, so the advisory binding below blocks only when check reads this config.
            fs.writeFileSync(path.join(repo, "apps", "policy", "pko-guard.json"), '{"all": "mandatory"}\n');
            fs.writeFileSync(
                path.join(repo, "apps", "binding.yaml"),
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: { name: web }\n" +
                    "roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }\n" +
                    "subjects: [{ kind: ServiceAccount, name: web, namespace: apps }]\n",
            );
            const check = inApps(["check", "."]);
            assert.strictEqual(check.status, 1, check.stdout + check.stderr);
            assert.match(check.stdout, /^BLOCKING {2}rbac-no-cluster-admin-serviceaccount/m);
            // The config file is the run's own: never listed as a skipped manifest.
            assert.doesNotMatch(check.stderr, /skipped/);
            const printed = inApps(["check", "--print-config"]);
            assert.match(printed.stdout, /config +\S*apps\/policy\/pko-guard\.json \(\.pko-guard\.yaml\)/);
        } finally {
            fs.rmSync(repo, { recursive: true, force: true });
        }
    });

    it("a gate that cannot run still writes every requested report, valid and saying why, then exits 2 with one line", async () => {
        const summary = path.join(project, "summary.md");
        const env = {
            ...process.env,
            PATH: path.dirname(process.execPath),
            PKO_GUARD_TOOLCHAIN_BIN: path.join(project, "no-toolchain"),
            GITHUB_ACTIONS: "true",
            GITHUB_STEP_SUMMARY: summary,
        };
        const r = run(
            [
                "gate",
                ".",
                "-s",
                "dev",
                "--report",
                "sarif=out/g.sarif",
                "--report",
                "junit=out/g.xml",
                "--report",
                "json=out/g.json",
            ],
            env,
        );
        assert.strictEqual(r.code, 2);
        assert.match(r.stderr, /^pko-guard: Pulumi toolchain not found[^\n]*\n$/);
        const sarif = JSON.parse(fs.readFileSync(path.join(project, "out", "g.sarif"), "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        assert.strictEqual(sarif.runs[0].invocations[0].executionSuccessful, false);
        const notes = sarif.runs[0].invocations[0].toolExecutionNotifications;
        assert.strictEqual(notes.length, 1, JSON.stringify(notes));
        assert.match(notes[0].message.text, /toolchain not found/);
        const xml = fs.readFileSync(path.join(project, "out", "g.xml"), "utf8");
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<error /);
        const json = JSON.parse(fs.readFileSync(path.join(project, "out", "g.json"), "utf8"));
        assert.deepStrictEqual(jsonReportErrors(json), []);
        assert.strictEqual(json.projects[0].outcome, "error");
        assert.strictEqual(json.projects[0].project, "shop");
        assert.match(r.stdout, /^::error title=pko-guard%3A shop::Pulumi toolchain not found/m);
        assert.match(fs.readFileSync(summary, "utf8"), /### shop \(stack dev\): \*\*ERROR\*\*/);
    });

    it("without a command: the commands and an example on stderr, exit 2; help: on stdout, exit 0", () => {
        const none = run([]);
        assert.strictEqual(none.code, 2);
        assert.strictEqual(none.stdout, "");
        for (const c of ["check", "gate", "audit", "webhook", "rules", "explain", "init"])
            assert.match(none.stderr, new RegExp(`^  ${c} .*\\S$`, "m"), c);
        assert.match(none.stderr, /^Examples:$/m);
        const help = run(["help"]);
        assert.deepStrictEqual([help.code, help.stdout, help.stderr], [0, none.stderr, ""]);
        const typo = run(["chek"]);
        assert.deepStrictEqual(
            [typo.code, typo.stderr],
            [2, "pko-guard: unknown command 'chek' (did you mean check?)\n"],
        );
    });

    it("audit without a kubeconfig says so, naming where it looked", () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-home-"));
        try {
            const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
            delete env.KUBECONFIG;
            const r = run(["audit"], env);
            assert.strictEqual(r.code, 2);
            assert.strictEqual(
                r.stderr,
                `pko-guard: no kubeconfig found: KUBECONFIG is not set, there is no ${path.join(home, ".kube", "config")}, and no in-cluster service account (/var/run/secrets/kubernetes.io/serviceaccount/token); give --kubeconfig FILE\n`,
            );
        } finally {
            fs.rmSync(home, { recursive: true, force: true });
        }
    });
});
