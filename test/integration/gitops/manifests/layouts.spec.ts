/**
 * `pko-guard check .` on the layouts real repositories use (issue 35 items 1, 3 and 8), each copied from
 * test/data/layouts/ into a temporary git repository: risky and corrected, never exit 2 for a layout.
 * - one kustomize base sent to two clusters by two Applications: two objects, each judged and attributed;
 * - per-cluster folders and an example copy no Application syncs: judged in each place, an advisory duplicate,
 *   excluded with `exclude:` of `.pko-guard.yaml` or `--exclude`; overlays of one base, each duplicate naming its
 *   overlay;
 * - an ApplicationSet whose git generator names another repository: not expanded (fails closed naming the field);
 * - an Application of another repository whose path exists here: not read (fails closed naming
 *   spec.source.repoURL) until the origin remote, in any of its URL forms, or a declared URL is that repository.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../../support/paths";

const DATA = path.join(REPO_ROOT, "test", "data", "layouts");
const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

interface Row {
    policy: string;
    resource: string;
    file: string;
    level: string;
    field?: string;
    syncedBy?: string;
    message: string;
}

describe("check on real repository layouts", function () {
    this.timeout(180000);
    let tmp: string;
    let repo: string;
    /** A copy of one layout as a git repository, with `origin` when given. */
    const layout = (name: string, origin?: string) => {
        repo = path.join(tmp, name);
        fs.cpSync(path.join(DATA, name), repo, { recursive: true });
        assert.strictEqual(spawnSync("git", ["init", "-q", "."], { cwd: repo }).status, 0);
        if (origin) assert.strictEqual(spawnSync("git", ["remote", "add", "origin", origin], { cwd: repo }).status, 0);
    };
    // --offline: these layouts are about which repository a source is read from; another repository is not
    // fetched (what check fetches, and how: test/integration/gitops/fetch/).
    const check = (args: string[]) => {
        const r = spawnSync(process.execPath, [CLI_ENTRY, "check", "--offline", ...args], {
            cwd: repo,
            encoding: "utf8",
            timeout: 120000,
            env: { ...process.env, GITHUB_ACTIONS: "" },
        });
        return { code: r.status, out: r.stdout, err: r.stderr };
    };
    const rows = (args: string[] = []) => {
        const r = check([".", "--format", "json", ...args]);
        assert.notStrictEqual(r.code, 2, r.err);
        return { code: r.code, err: r.err, rows: JSON.parse(r.out).projects[0].findings as Row[] };
    };
    /** The one argocd-app-rendered finding's message (where check says why a source was not read). */
    const renderedMessage = (found: Row[]) => {
        const messages = found.filter((x) => x.policy === "argocd-app-rendered").map((x) => x.message);
        assert.strictEqual(messages.length, 1, messages.join("\n"));
        return messages[0];
    };
    const edit = (rel: string, from: string, to: string) => {
        const f = path.join(repo, rel);
        fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(from, to));
    };
    beforeEach(() => (tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-layouts-")))));
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("one overlay base sent to two clusters: judged once in each cluster (risky), passes corrected", () => {
        layout("overlay-two-clusters", "git@github.com:acme/manifests.git");
        const risky = rows();
        assert.strictEqual(risky.code, 1);
        assert.deepStrictEqual(
            risky.rows.filter((x) => x.level === "mandatory").map((x) => [x.policy, x.resource, x.file, x.syncedBy]),
            [
                [
                    "pko-stack-prod-pinned-commit",
                    "Stack/pulumi/ledger",
                    "base/stack.yaml",
                    "Application argocd/ledger-east",
                ],
                [
                    "pko-stack-prod-pinned-commit",
                    "Stack/pulumi/ledger",
                    "base/stack.yaml",
                    "Application argocd/ledger-west",
                ],
            ],
        );
        assert.ok(!risky.rows.some((x) => x.policy === "pko-guard-duplicate-object"));
        edit("base/stack.yaml", "branch: main", `commit: ${SHA}`);
        const corrected = rows();
        assert.strictEqual(corrected.code, 0, JSON.stringify(corrected.rows));
        // Both clusters sending to one: two definitions of one object in one cluster, each reported (advisory).
        edit("apps/west.yaml", "https://west.example.com", "https://east.example.com");
        const one = rows();
        assert.deepStrictEqual(
            one.rows.filter((x) => x.policy === "pko-guard-duplicate-object").map((x) => [x.resource, x.syncedBy]),
            [
                ["Stack/pulumi/ledger", "Application argocd/ledger-east"],
                ["Stack/pulumi/ledger", "Application argocd/ledger-west"],
            ],
        );
        assert.match(
            one.rows.find((x) => x.policy === "pko-guard-duplicate-object")!.message,
            /in cluster "https:\/\/east\.example\.com"/,
        );
    });

    it("per-cluster folders and an example copy: never exit 2; advisory duplicates until excluded", () => {
        layout("per-cluster");
        const risky = rows();
        assert.strictEqual(risky.code, 0, risky.err);
        assert.deepStrictEqual(
            risky.rows.map((x) => [x.policy, x.file, x.level]),
            [
                ["pko-guard-duplicate-object", "clusters/a/deployer.yaml", "advisory"],
                ["pko-guard-duplicate-object", "clusters/b/deployer.yaml", "advisory"],
                ["pko-guard-duplicate-object", "examples/deployer.yaml", "advisory"],
            ],
        );
        assert.strictEqual(check([".", "--fail-on-advisory"]).code, 1);
        // Corrected: the clusters go to their own scopes' checks, the examples are left out.
        const flag = rows(["--exclude", "examples/**", "--exclude", "clusters/b"]);
        assert.deepStrictEqual(flag.rows, []);
        fs.writeFileSync(path.join(repo, ".pko-guard.yaml"), "exclude:\n  - examples\n  - clusters/b/**\n");
        const file = check(["."]);
        assert.strictEqual(file.code, 0, file.err);
        assert.match(file.out, /1 object\(s\) in 1 file\(s\).*0 violation\(s\)/);
        assert.doesNotMatch(file.err, /\.pko-guard\.yaml/);
        const printed = check(["--print-config"]);
        assert.strictEqual(printed.code, 0, printed.err);
        assert.match(printed.out, /^exclude {13}examples \(\.pko-guard\.yaml\)$/m);
        // An invalid field: one line each, exit 2, and no run.
        fs.writeFileSync(path.join(repo, ".pko-guard.yaml"), "exclude: examples\nexclud: [x]\n");
        const bad = check(["."]);
        assert.deepStrictEqual(
            [bad.code, bad.err.split("\n").slice(0, 2)],
            [
                2,
                [
                    'pko-guard: .pko-guard.yaml: "exclude": must be a list of strings',
                    'pko-guard: .pko-guard.yaml: "exclud": unknown field (did you mean exclude?)',
                ],
            ],
        );
    });

    it("overlays of one base that nothing syncs: each duplicate names the overlay that rendered it", () => {
        layout("overlays-no-gitops");
        const r = rows();
        assert.strictEqual(r.code, 0, r.err);
        const dup = r.rows.filter((x) => x.policy === "pko-guard-duplicate-object");
        // One file and line for both definitions: the overlay is what tells them apart.
        assert.deepStrictEqual(
            dup.map((x) => [x.resource, x.file, x.level]),
            [
                ["ServiceAccount/pulumi/deployer", "base/deployer.yaml", "advisory"],
                ["ServiceAccount/pulumi/deployer", "base/deployer.yaml", "advisory"],
            ],
        );
        assert.match(
            dup[0].message,
            /defined 2 times in the files no Application syncs: "base\/deployer\.yaml:2" \(rendered from "overlays\/production" with defaults\), "base\/deployer\.yaml:2" \(rendered from "overlays\/staging" with defaults\); /,
        );
        assert.strictEqual(dup[1].message, dup[0].message);
    });

    it("an Application of another repository whose path exists here fails closed until its repoURL is this repository", () => {
        layout("other-repo", "https://github.com/acme/manifests.git");
        const risky = rows();
        assert.strictEqual(risky.code, 1);
        assert.deepStrictEqual(
            risky.rows.filter((x) => x.level === "mandatory").map((x) => [x.policy, x.resource, x.field]),
            [
                ["argocd-app-rendered", "Application/argocd/web", "spec.source.repoURL"],
                // Not synced by the Application (not read for it): judged as a file no Application syncs.
                ["pko-stack-prod-pinned-commit", "Stack/pulumi/web", "spec.branch"],
            ],
        );
        // Why, once: in the fail-closed finding (not again on stderr).
        assert.match(
            renderedMessage(risky.rows),
            /spec\.source\.repoURL "https:\/\/github\.com\/acme\/web-manifests" is another repository/,
        );
        assert.doesNotMatch(risky.err, /another repository/);
        // Declared as the same repository (a mirror's URL, say): read from here, judged as synced.
        const declared = rows(["--repository", "HTTPS://GitHub.com/acme/web-manifests.git/"]);
        assert.deepStrictEqual(
            declared.rows.filter((x) => x.level === "mandatory").map((x) => [x.policy, x.syncedBy]),
            [["pko-stack-prod-pinned-commit", "Application argocd/web"]],
        );
        // Or the origin remote is that repository, in the scp form.
        spawnSync("git", ["remote", "set-url", "origin", "git@github.com:acme/web-manifests.git"], { cwd: repo });
        edit("apps/web/stack.yaml", "branch: main", `commit: ${SHA}`);
        const corrected = rows();
        assert.deepStrictEqual(
            corrected.rows.filter((x) => x.level === "mandatory"),
            [],
        );
        assert.ok(
            corrected.rows.every(
                (x) => x.syncedBy === "Application argocd/web" || x.resource.startsWith("Application/"),
            ),
        );
    });

    it("an ApplicationSet whose git generator reads another repository fails closed, naming the nested field", () => {
        layout("appset-other-repo", "https://github.com/acme/manifests.git");
        const risky = rows();
        assert.strictEqual(risky.code, 1);
        assert.deepStrictEqual(
            risky.rows.filter((x) => x.level === "mandatory").map((x) => [x.policy, x.resource, x.field]),
            [
                [
                    "argocd-app-rendered",
                    "ApplicationSet/argocd/web",
                    "spec.generators[0].matrix.generators[1].git.repoURL",
                ],
                // Not generated from here: judged as a file no Application syncs.
                ["pko-stack-prod-pinned-commit", "Stack/pulumi/web", "spec.branch"],
            ],
        );
        assert.match(
            renderedMessage(risky.rows),
            /git\.repoURL "https:\/\/github\.com\/acme\/web-manifests\.git" is another repository/,
        );
        // The generator's repository is this one: its folders are read, and the Application it makes syncs the Stack.
        spawnSync("git", ["remote", "set-url", "origin", "git@github.com:acme/web-manifests.git"], { cwd: repo });
        const same = rows();
        assert.deepStrictEqual(
            same.rows.filter((x) => x.level === "mandatory").map((x) => [x.policy, x.resource, x.syncedBy]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/web", "Application argocd/web-east"]],
        );
    });

    it("no origin remote and nothing declared: every source fails closed, and one notice says why", () => {
        layout("other-repo");
        const r = check(["."]);
        assert.strictEqual(r.code, 1, r.err);
        assert.strictEqual(r.out.match(/notice: this repository's URL is not known/g)?.length, 1, r.out);
        // Each source's reason is its finding's, said once (stderr repeats none of it).
        assert.match(
            renderedMessage(rows().rows),
            /this repository's URL is not known \(no origin remote, none declared\)/,
        );
        assert.doesNotMatch(r.err, /not known/);
    });
});
