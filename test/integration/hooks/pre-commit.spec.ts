/**
 * The pre-commit hook (.pre-commit-hooks.yaml, hooks/pko-guard-check.sh) run by the real `pre-commit` on a real
 * git repository, from a hook repository pinned at a commit, as users install it (`pre-commit install`, then
 * `git commit`). The hook judges the commit in its repository's context, as `pko-guard check .` does: a staged
 * cluster-admin binding for a production Stack's service account, whose Stack and Application are in files not
 * staged, blocks the commit; a commit of the policy config alone runs the
 * hook and passes (the config is never taken for a manifest). Skipped, saying so, when pre-commit is not installed
 * (Debian and Ubuntu package it: apt-get install pre-commit).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";

const ADMIN_BINDING = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: webapp:cluster-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: webapp
    namespace: pulumi
`;

describe("the pre-commit hook, run by pre-commit on a real repository", function () {
    this.timeout(300000);
    let tmp: string;
    let env: NodeJS.ProcessEnv;
    let user: string;
    const git = (cwd: string, ...args: string[]) => {
        const r = spawnSync("git", args, { cwd, env, encoding: "utf8" });
        assert.strictEqual(r.status, 0, `git ${args.join(" ")}: ${r.stderr}`);
        return r.stdout.trim();
    };
    /** `git commit`, which runs the installed hook: its status and everything it printed (pre-commit's to stderr). */
    const commit = (message: string) => {
        const r = spawnSync("git", ["commit", "-q", "-m", message], { cwd: user, env, encoding: "utf8" });
        return { status: r.status, out: `${r.stdout}${r.stderr}` };
    };

    before(function () {
        const version = spawnSync("pre-commit", ["--version"], { encoding: "utf8" });
        if (version.status !== 0) {
            process.stderr.write("      skipped: pre-commit is not installed (apt-get install pre-commit)\n");
            this.skip();
        }
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-pre-commit-"));
        env = {
            ...process.env,
            PRE_COMMIT_HOME: path.join(tmp, "pre-commit-home"),
            GIT_AUTHOR_NAME: "t",
            GIT_AUTHOR_EMAIL: "t@example.com",
            GIT_COMMITTER_NAME: "t",
            GIT_COMMITTER_EMAIL: "t@example.com",
            GIT_CONFIG_GLOBAL: path.join(tmp, "gitconfig"),
            GITHUB_ACTIONS: "",
            NO_COLOR: "1",
        };
        fs.writeFileSync(env.GIT_CONFIG_GLOBAL!, "[init]\n\tdefaultBranch = main\n");
        // The hook repository at a commit: this repository's hook files, with the packed command's install linked
        // in (as after the hook's first-run install: <clone>/.pko-guard/node_modules/pko-guard and its marker).
        const hooks = path.join(tmp, "pko-guard");
        fs.mkdirSync(hooks);
        for (const f of [".pre-commit-hooks.yaml", "hooks", "package.json"])
            fs.cpSync(path.join(REPO_ROOT, f), path.join(hooks, f), { recursive: true });
        const installed = path.join(tmp, "installed");
        fs.mkdirSync(path.join(installed, "node_modules"), { recursive: true });
        fs.symlinkSync(REPO_ROOT, path.join(installed, "node_modules", "pko-guard"));
        fs.writeFileSync(path.join(installed, ".installed"), "");
        fs.symlinkSync(installed, path.join(hooks, ".pko-guard"));
        git(hooks, "init", "-q", ".");
        git(hooks, "add", "-A");
        git(hooks, "commit", "-q", "-m", "hook");
        const rev = git(hooks, "rev-parse", "HEAD");
        // The user's repository: a governed GitOps layout (passes check .), its policy config, the hook installed.
        user = path.join(tmp, "infra");
        fs.cpSync(path.join(REPO_ROOT, "fixtures", "gitops-guide-governed", "manifests"), user, { recursive: true });
        fs.mkdirSync(path.join(user, "policy"));
        fs.writeFileSync(path.join(user, "policy", "pko-guard.json"), "{}\n");
        fs.writeFileSync(
            path.join(user, ".pre-commit-config.yaml"),
            `repos:\n  - repo: ${hooks}\n    rev: ${rev}\n    hooks:\n      - id: pko-guard-check\n        args: [--config, policy/pko-guard.json]\n`,
        );
        git(user, "init", "-q", ".");
        // What its Applications name as their repository (check reads only sources of this repository).
        git(user, "remote", "add", "origin", "https://github.com/myorg/webapp-manifests.git");
        git(user, "add", "-A");
        git(user, "commit", "-q", "-m", "governed");
        const install = spawnSync("pre-commit", ["install"], { cwd: user, env, encoding: "utf8" });
        assert.strictEqual(install.status, 0, install.stderr);
    });
    after(() => tmp && fs.rmSync(tmp, { recursive: true, force: true }));

    it("blocks a staged cluster-admin binding for the production Stack's account, whose Stack is not staged", () => {
        const file = path.join("manifests", "production", "admin.yaml");
        fs.writeFileSync(path.join(user, file), ADMIN_BINDING);
        git(user, "add", file);
        const r = commit("add an admin binding");
        assert.strictEqual(r.status, 1, r.out);
        assert.match(r.out, /pko-guard check\.+Failed/);
        assert.match(r.out, /BLOCKING {2}pko-stack-no-cluster-admin/);
        assert.match(r.out, /Stack "Stack\/pulumi\/webapp-production"/);
        assert.match(r.out, /manifests\/production\/admin\.yaml/);
        // `pre-commit run --all-files` and `check .` say the same.
        const all = spawnSync("pre-commit", ["run", "--all-files"], { cwd: user, env, encoding: "utf8" });
        assert.strictEqual(all.status, 1, all.stdout);
        const check = spawnSync(process.execPath, [CLI_ENTRY, "check", "."], { cwd: user, env, encoding: "utf8" });
        assert.strictEqual(check.status, 1, check.stdout);
        git(user, "rm", "-q", "--cached", file);
        fs.rmSync(path.join(user, file));
    });

    it("a commit of the policy config alone runs the hook, which reads it as config and passes", () => {
        fs.writeFileSync(path.join(user, "policy", "pko-guard.json"), '{\n  "all": "mandatory"\n}\n');
        git(user, "add", "policy/pko-guard.json");
        const r = commit("make every rule mandatory");
        assert.strictEqual(r.status, 0, r.out);
        assert.match(r.out, /pko-guard check\.+Passed/);
        assert.strictEqual(git(user, "log", "-1", "--format=%s"), "make every rule mandatory");
    });

    it("a commit that touches no YAML, JSON or jsonnet skips the hook", () => {
        fs.writeFileSync(path.join(user, "NOTES.md"), "notes\n");
        git(user, "add", "NOTES.md");
        const r = commit("add notes");
        assert.strictEqual(r.status, 0, r.out);
        assert.match(r.out, /pko-guard check\.+\(no files to check\)Skipped/);
    });
});
