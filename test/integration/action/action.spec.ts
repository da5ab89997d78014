/**
 * The GitHub Action (action.yml at the repository root) and the pre-commit hook (.pre-commit-hooks.yaml), as
 * users run them:
 * - both workflow examples use the action (none installs pko-guard from a package registry) and lint clean with
 *   actionlint, which also checks every `with:` input against action.yml once `uses:` points at a local copy;
 * - the action installs pko-guard from its own checkout (`npm ci` in the action's folder) and its command step
 *   (action/run.sh) turns inputs into a command line, in a real repository layout, with a SARIF file for upload;
 * - the hook's entry runs the way pre-commit runs it: the script by its path in the hook repository, from the
 *   user's repository root, with the files the hook's `files`/`exclude` patterns select as arguments.
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

describe("the pko-guard GitHub Action and pre-commit hook", function () {
    this.timeout(900000);
    let tmp: string;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-action-"))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("action.yml is a composite action that installs pko-guard from its own checkout and uploads SARIF when asked", () => {
        const action = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, "action.yml"), "utf8"));
        assert.strictEqual(action.runs.using, "composite");
        const steps: {
            run?: string;
            uses?: string;
            if?: string;
            "working-directory"?: string;
            env?: Record<string, string>;
        }[] = action.runs.steps;
        const install = steps.find((s) => /npm ci\b/.test(s.run ?? ""))!;
        assert.strictEqual(install["working-directory"], "${{ github.action_path }}");
        for (const s of steps)
            assert.doesNotMatch(s.run ?? "", /npm (install|i) .*pko-guard|npx pko-guard/, "never from a registry");
        // Inputs never become script text (injection); they travel as environment variables.
        for (const s of steps) assert.doesNotMatch(s.run ?? "", /\$\{\{\s*inputs\./);
        const upload = steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif"))!;
        assert.match(upload.if!, /always\(\)/);
        assert.match(upload.if!, /inputs\.upload-sarif == 'true'/);
        for (const input of ["command", "paths", "config", "reports", "fail-on-advisory", "upload-sarif", "stack"])
            assert.ok(action.inputs[input], input);
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
                PKO_GUARD_COMMAND: "check",
                PKO_GUARD_PATHS: "manifests\napplications\n",
                PKO_GUARD_REPORTS: "json=out/report.json\n",
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
        // A bad input is one annotation and exit 2.
        const bad = spawnSync("bash", [path.join(REPO_ROOT, "action", "run.sh")], {
            cwd: repo,
            encoding: "utf8",
            env: { ...process.env, GITHUB_ACTION_PATH: REPO_ROOT, GITHUB_OUTPUT: outputs, PKO_GUARD_COMMAND: "lint" },
        });
        assert.strictEqual(bad.status, 2);
        assert.match(bad.stdout, /^::error title=pko-guard::command must be check or gate$/m);
    });

    it("the pre-commit hook's entry, run as pre-commit runs it (selected files as arguments, from the repository root)", () => {
        const hooks = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, ".pre-commit-hooks.yaml"), "utf8")) as {
            id: string;
            entry: string;
            language: string;
            files: string;
            exclude: string;
            pass_filenames?: boolean;
        }[];
        const hook = hooks.find((h) => h.id === "pko-guard-check")!;
        assert.ok(hook, "a pko-guard-check hook");
        // language: script: the entry is a script of this repository, run by its path inside pre-commit's clone.
        assert.strictEqual(hook.language, "script");
        assert.notStrictEqual(hook.pass_filenames, false);
        const repo = manifestRepo(path.join(tmp, "hook"));
        // pre-commit: the tracked files matching `files` and not `exclude` (Python regular expressions, searched).
        const tracked = spawnSync("git", ["ls-files"], { cwd: repo, encoding: "utf8" }).stdout.trim().split("\n");
        const files = tracked.filter((f) => new RegExp(hook.files).test(f) && !new RegExp(hook.exclude).test(f));
        assert.deepStrictEqual(
            files.filter((f) => f.startsWith(".") || f === "README.md"),
            [],
            "the workflow, pre-commit's own config and non-manifests are not given to check",
        );
        assert.ok(files.includes("manifests/production/stack.yaml"));
        // pre-commit runs <its clone of this repository>/<entry> <files...>; here the clone is this checkout,
        // already installed (the script's first-run `npm ci` is skipped when the install marker is there).
        const [script, ...args] = hook.entry.split(/\s+/);
        const exe = path.join(REPO_ROOT, script);
        fs.mkdirSync(path.join(REPO_ROOT, "node_modules"), { recursive: true });
        fs.writeFileSync(path.join(REPO_ROOT, "node_modules", ".pko-guard-installed"), "");
        const env = { ...process.env, GITHUB_ACTIONS: "" };
        const r = spawnSync(exe, [...args, ...files], { cwd: repo, encoding: "utf8", env });
        assert.strictEqual(r.status, 1, `${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /manifests\/production\/stack\.yaml/);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit/);
        // A commit that touches only a clean file passes.
        const clean = spawnSync(exe, [...args, "manifests/preview/stack.yaml"], { cwd: repo, encoding: "utf8", env });
        assert.strictEqual(clean.status, 0, `${clean.stdout}${clean.stderr}`);
        assert.doesNotMatch(clean.stdout, /pko-stack-prod-pinned-commit/);
    });
});
