/**
 * The GitHub Action (action.yml at the repository root), as users run it (the pre-commit hook's spec is
 * test/integration/hooks/pre-commit.spec.ts):
 * - both workflow examples use the action (none installs pko-guard from a package registry) and lint clean with
 *   actionlint, which also checks every `with:` input against action.yml once `uses:` points at a local copy;
 * - the action installs pko-guard from its own checkout (`npm ci` in the action's folder) and its command step
 *   (action/run.sh) turns inputs into a command line, in a real repository layout, with a SARIF file for upload;
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../../support/paths";
import { actionlint } from "../../support/actionlint";

const EXAMPLES = path.join(REPO_ROOT, "examples", "github-actions");
const WORKFLOWS = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith(".yml"));
const ACTION_REF = /^[^/.]+\/pko-guard@.+$/;

/** A git repository in a temporary folder holding the Argo CD guide's manifests (a production Stack on a branch, cluster-admin). */
function manifestRepo(root: string): string {
    const repo = path.join(root, "repo");
    fs.cpSync(path.join(REPO_ROOT, "fixtures", "gitops-guide-example", "manifests"), repo, { recursive: true });
    fs.mkdirSync(path.join(repo, ".github", "workflows"), { recursive: true });
    fs.copyFileSync(
        path.join(EXAMPLES, "pko-guard-manifests.yml"),
        path.join(repo, ".github", "workflows", "pko-guard-manifests.yml"),
    );
    fs.writeFileSync(path.join(repo, ".pre-commit-config.yaml"), "repos: []\n");
    fs.writeFileSync(path.join(repo, "README.md"), "# infra\n");
    assert.strictEqual(spawnSync("git", ["init", "-q", "."], { cwd: repo }).status, 0);
    // What its Applications name as their repository (check reads only sources of this repository).
    const origin = ["remote", "add", "origin", "https://github.com/myorg/webapp-manifests.git"];
    assert.strictEqual(spawnSync("git", origin, { cwd: repo }).status, 0);
    assert.strictEqual(spawnSync("git", ["add", "-A"], { cwd: repo }).status, 0);
    return repo;
}

describe("the pko-guard GitHub Action", function () {
    this.timeout(900000);
    let tmp: string;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-action-"))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("action.yml runs the packed command: no build step, the job's Node unless asked, every report format", () => {
        const action = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, "action.yml"), "utf8"));
        assert.strictEqual(action.runs.using, "composite");
        const steps: {
            run?: string;
            uses?: string;
            if?: string;
            with?: Record<string, string>;
            env?: Record<string, string>;
        }[] = action.runs.steps;
        for (const s of steps) {
            assert.doesNotMatch(s.run ?? "", /npm (ci|run|install)|tsc|npx/, "no install or build in a step's script");
            // Inputs never become script text (injection); they travel as environment variables.
            assert.doesNotMatch(s.run ?? "", /\$\{\{\s*inputs\./);
        }
        assert.match(steps.find((s) => s.env?.PKO_GUARD_PACKAGE !== undefined)!.run!, /action\/install\.sh/);
        // The job's Node.js is left alone unless node-version asks for one.
        const setup = steps.find((s) => s.uses?.startsWith("actions/setup-node"))!;
        assert.strictEqual(setup.if, "inputs.node-version != ''");
        assert.strictEqual(action.inputs["node-version"].default, "");
        // A checkout packed once per content, cached; a given tarball skips both.
        const cache = steps.find((s) => s.uses?.startsWith("actions/cache"))!;
        assert.strictEqual(cache.if, "inputs.package == ''");
        assert.match(action.inputs.reports.description, /json, junit, sarif, policyreport/);
        const upload = steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif"))!;
        assert.match(upload.if!, /always\(\)/);
        assert.match(upload.if!, /inputs\.upload-sarif == 'true'/);
        for (const input of [
            "command",
            "paths",
            "config",
            "reports",
            "fail-on-advisory",
            "upload-sarif",
            "stack",
            "package",
        ])
            assert.ok(action.inputs[input], input);
        // The documented ref exists: a commit or main, never a tag this repository does not have.
        for (const doc of [
            "action.yml",
            "docs/ci.md",
            "README.md",
            ...WORKFLOWS.map((f) => `examples/github-actions/${f}`),
        ])
            assert.doesNotMatch(fs.readFileSync(path.join(REPO_ROOT, doc), "utf8"), /pko-guard@v\d/, doc);
    });

    it("the install step installs a packed tarball with its runtime dependencies only, then reuses it", () => {
        const work = path.join(tmp, "packed");
        fs.mkdirSync(work);
        // The package as `npm pack` makes it from the build (what a release asset holds).
        const pack = spawnSync("npm", ["pack", "--ignore-scripts", "--pack-destination", work], {
            cwd: REPO_ROOT,
            encoding: "utf8",
        });
        assert.strictEqual(pack.status, 0, pack.stderr);
        const tarball = fs.readdirSync(work).find((f) => f.endsWith(".tgz"))!;
        const dir = path.join(tmp, "installed");
        const outputs = path.join(work, "github-output");
        const install = (pkg: string) =>
            spawnSync("bash", [path.join(REPO_ROOT, "action", "install.sh")], {
                cwd: work,
                encoding: "utf8",
                env: {
                    ...process.env,
                    PKO_GUARD_PACKAGE: pkg,
                    PKO_GUARD_INSTALL_DIR: dir,
                    GITHUB_OUTPUT: outputs,
                    npm_config_prefer_offline: "true",
                },
            });
        const r = install(tarball);
        assert.strictEqual(r.status, 0, `${r.stdout}${r.stderr}`);
        const bin = path.join(dir, "node_modules", "pko-guard", "bin", "cli", "pko-guard.js");
        assert.strictEqual(fs.readFileSync(outputs, "utf8"), `bin=${bin}\n`);
        assert.match(r.stdout, /^pko-guard: 0\.\d+\.\d+ at /m);
        const modules = fs.readdirSync(path.join(dir, "node_modules"));
        for (const dev of ["typescript", "esbuild", "mocha", "ts-node"]) assert.ok(!modules.includes(dev), dev);
        assert.ok(fs.existsSync(path.join(dir, "node_modules", "@pulumi", "policy")), "runtime dependencies");
        // Without a package, an installed pack (the cache's) is used as is: no npm at all.
        const again = install("");
        assert.strictEqual(again.status, 0, again.stderr);
        assert.match(again.stdout, /^pko-guard: using the packed pko-guard cached for this action's commit$/m);
        fs.writeFileSync(path.join(work, "bin-path"), bin);
    });

    it("both workflow examples use the action at a pinned ref, and none installs pko-guard from a package registry", () => {
        assert.deepStrictEqual(WORKFLOWS.sort(), ["pko-guard-manifests.yml", "pko-guard.yml"]);
        for (const file of WORKFLOWS) {
            const text = fs.readFileSync(path.join(EXAMPLES, file), "utf8");
            assert.doesNotMatch(text, /npm (install|i)\b[^\n]*\bpko-guard\b|npx pko-guard/, file);
            const wf = YAML.parse(text);
            const uses = Object.values(wf.jobs as Record<string, { steps: { uses?: string }[] }>).flatMap((j) =>
                j.steps.map((s) => s.uses ?? ""),
            );
            assert.ok(
                uses.some((u) => ACTION_REF.test(u)),
                `${file} uses the pko-guard action`,
            );
        }
    });

    it("actionlint passes on both examples, also with every input checked against action.yml", function () {
        const lint = actionlint();
        if (typeof lint !== "string") {
            process.stderr.write(`      skipped: ${lint.reason}\n`);
            this.skip();
        }
        const run = (args: string[], cwd = REPO_ROOT) =>
            spawnSync(lint as string, ["-no-color", "-shellcheck=", "-pyflakes=", ...args], { encoding: "utf8", cwd });
        const plain = run(WORKFLOWS.map((f) => path.join(EXAMPLES, f)));
        assert.strictEqual(plain.status, 0, `${plain.stdout}${plain.stderr}`);
        // The same workflows in a repository that holds the action: `uses: ./` makes actionlint read action.yml.
        const repo = path.join(tmp, "lint");
        fs.mkdirSync(path.join(repo, ".github", "workflows"), { recursive: true });
        fs.copyFileSync(path.join(REPO_ROOT, "action.yml"), path.join(repo, "action.yml"));
        spawnSync("git", ["init", "-q", "."], { cwd: repo });
        const local = (text: string) => text.replace(/uses: [^/\s]+\/pko-guard@\S+/g, "uses: ./");
        for (const f of WORKFLOWS)
            fs.writeFileSync(
                path.join(repo, ".github", "workflows", f),
                local(fs.readFileSync(path.join(EXAMPLES, f), "utf8")),
            );
        const checked = run([], repo);
        assert.strictEqual(checked.status, 0, `${checked.stdout}${checked.stderr}`);
        // A misspelt input is caught, so the clean result above means something.
        const f = path.join(repo, ".github", "workflows", "pko-guard-manifests.yml");
        fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace("upload-sarif: true", "upload-sarf: true"));
        const broken = run([], repo);
        assert.notStrictEqual(broken.status, 0);
        assert.match(broken.stdout, /input "upload-sarf" is not defined in action/);
    });

    it("the action's command step runs check in a repository layout, writes the reports and the SARIF to upload", () => {
        const repo = manifestRepo(path.join(tmp, "run"));
        const outputs = path.join(tmp, "run", "github-output");
        fs.writeFileSync(outputs, "");
        const r = spawnSync("bash", [path.join(REPO_ROOT, "action", "run.sh")], {
            cwd: repo,
            encoding: "utf8",
            env: {
                ...process.env,
                GITHUB_ACTION_PATH: REPO_ROOT,
                GITHUB_OUTPUT: outputs,
                GITHUB_ACTIONS: "",
                // The packed command the install step put in place (the build's, if that spec did not run).
                ...(fs.existsSync(path.join(tmp, "packed", "bin-path"))
                    ? { PKO_GUARD_BIN: fs.readFileSync(path.join(tmp, "packed", "bin-path"), "utf8") }
                    : {}),
                PKO_GUARD_COMMAND: "check",
                PKO_GUARD_PATHS: "manifests\napplications\n",
                PKO_GUARD_REPORTS: "json=out/report.json\npolicyreport=out/policyreport.yaml\n",
                PKO_GUARD_FAIL_ON_ADVISORY: "false",
                PKO_GUARD_UPLOAD_SARIF: "true",
                PKO_GUARD_SARIF_FILE: "pko-guard.sarif",
            },
        });
        assert.strictEqual(r.status, 1, `blocking findings exit 1: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit/);
        const out = Object.fromEntries(
            fs
                .readFileSync(outputs, "utf8")
                .trim()
                .split("\n")
                .map((l) => l.split(/=(.*)/s).slice(0, 2)),
        );
        assert.strictEqual(out["exit-code"], "1");
        assert.strictEqual(out.sarif, path.join(repo, "pko-guard.sarif"));
        const sarif = JSON.parse(fs.readFileSync(out.sarif, "utf8"));
        // Exactly the branch-tracking production Stack's finding, as `check` reports it, uploaded once.
        const pinned = sarif.runs[0].results.filter(
            (x: { ruleId: string }) => x.ruleId === "pko-stack-prod-pinned-commit",
        );
        assert.deepStrictEqual(
            pinned.map((x: any) => [x.locations[0].logicalLocations?.[0]?.name, x.level]),
            [["Stack/pulumi/webapp-production", "error"]],
        );
        assert.ok(JSON.parse(fs.readFileSync(path.join(repo, "out", "report.json"), "utf8")));
        assert.match(
            fs.readFileSync(path.join(repo, "out", "policyreport.yaml"), "utf8"),
            /^kind: "?(Cluster)?PolicyReport"?$/m,
        );
        // A bad input is one annotation and exit 2.
        const bad = spawnSync("bash", [path.join(REPO_ROOT, "action", "run.sh")], {
            cwd: repo,
            encoding: "utf8",
            env: { ...process.env, GITHUB_ACTION_PATH: REPO_ROOT, GITHUB_OUTPUT: outputs, PKO_GUARD_COMMAND: "lint" },
        });
        assert.strictEqual(bad.status, 2);
        assert.match(bad.stdout, /^::error title=pko-guard::command must be check or gate$/m);
    });
});
