/**
 * Argo CD's example repository (the corpus snapshot test/data/corpus/argocd-example-apps) as another repository:
 * a configuration repository holds one Application naming the example's `apps` folder at `master`, as a team
 * that deploys the examples writes it. The example is served by git's own http-backend on loopback and its chart
 * dependency by a chart repository of stand-ins (packaged by the real helm); the snapshot's two upstream URLs are
 * rewritten to those servers in the served copy, the one change to it. check must fetch the repository, render
 * the app-of-apps chart found there, follow its fifteen Applications into the same repository (fetched once), and
 * fetch the wordpress chart of helm-dependency, judging what each renders.
 */
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { TestServer, fileServer, git, gitServer, helm } from "../../support/source-servers";

const ENTRY = path.join(REPO_ROOT, "test", "data", "corpus", "argocd-example-apps");
const UPSTREAM = "https://github.com/argoproj/argocd-example-apps";
const STABLE = "https://charts.helm.sh/stable";

/** Every file under `dir` with `from` replaced by `to`. */
function rewrite(dir: string, from: string, to: string): void {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) rewrite(p, from, to);
        else fs.writeFileSync(p, fs.readFileSync(p, "utf8").split(from).join(to));
    }
}

describe("pko-guard check on an Application naming Argo CD's example repository, fetched from loopback", function () {
    this.timeout(240_000);
    let root: string;
    let gitSrv: TestServer;
    let charts: TestServer;
    let commit: string;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-another-repo-"));
        const chartRepo = path.join(root, "charts");
        fs.mkdirSync(chartRepo);
        helm(root, "package", path.join(ENTRY, "charts", "wordpress"), "-d", chartRepo);
        helm(root, "repo", "index", chartRepo);
        [gitSrv, charts] = await Promise.all([gitServer(path.join(root, "repos")), fileServer(chartRepo)]);
        const example = path.join(root, "repos", "argocd-example-apps");
        fs.cpSync(path.join(ENTRY, "repo"), example, { recursive: true });
        rewrite(example, UPSTREAM, `${gitSrv.url}/argocd-example-apps`);
        rewrite(example, STABLE, charts.url);
        git(example, "init", "-q", "-b", "master");
        git(example, "add", "-A");
        git(example, "commit", "-q", "-m", "0d521c6e049889134f3122eb32d7ed342f43ca0d");
        commit = git(example, "rev-parse", "HEAD");
        const config = path.join(root, "config");
        fs.mkdirSync(config);
        fs.writeFileSync(
            path.join(config, "examples.yaml"),
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: examples, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: "${gitSrv.url}/argocd-example-apps", path: apps, targetRevision: master}\n  destination: {server: "https://kubernetes.default.svc", namespace: argocd}\n`,
        );
    });
    after(async () => {
        await Promise.all([gitSrv?.close(), charts?.close()]);
        if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    // Run without blocking this process: both servers answer from it.
    const checkIn = (cwd: string, ...args: string[]) =>
        new Promise<{ code: number | null; err: string }>((resolve) => {
            const child = spawn(process.execPath, [CLI_ENTRY, "check", ".", ...args], {
                cwd,
                env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1" },
            });
            let err = "";
            child.stderr.on("data", (c: Buffer) => (err += c.toString()));
            child.on("close", (code) => resolve({ code, err }));
        });
    const check = (...args: string[]) =>
        checkIn(path.join(root, "config"), "--repository", "https://git.example.com/team/config", ...args);

    it("fetches the repository and the chart, and reports only the three plugin Applications", async () => {
        const report = path.join(root, "report.json");
        const allow = [`127.0.0.1:${gitSrv.port}`, `127.0.0.1:${charts.port}`].flatMap((h) => ["--allow-host", h]);
        const r = await check(...allow, "--cache-dir", path.join(root, "cache"), "--report", `json=${report}`);
        assert.strictEqual(r.code, 1, r.err);
        const json = JSON.parse(fs.readFileSync(report, "utf8")) as {
            projects: {
                description: string;
                findings: { rule: string; status: string; resource: string; location?: string }[];
                sources: { kind: string; url: string; ref: string; resolved: string; floating: boolean }[];
            }[];
        };
        const [project] = json.projects;
        // The written Application, the fifteen the apps chart renders, and the 64 objects their sources render
        // (the stand-in wordpress chart's 7 among them): the whole tree, as with the snapshot checked out locally.
        assert.match(project.description, /\(80 object\(s\)\W/);
        const apps = `${gitSrv.url}/argocd-example-apps@${commit}/apps/templates/applications.yaml:1`;
        assert.deepStrictEqual(
            project.findings.map((f) => [f.rule, f.status, f.resource, f.location]),
            ["kasane", "kustomized-helm", "nix"].map((p) => [
                "argocd-app-rendered",
                "blocking",
                `Application/argocd/example.plugin-${p}`,
                apps,
            ]),
        );
        assert.deepStrictEqual(
            project.sources.map((s) => [s.kind, s.url, s.ref, s.resolved, s.floating]),
            [
                ["git", `${gitSrv.url}/argocd-example-apps`, "master", commit, true],
                ["helm", `${charts.url}#wordpress`, "9.0.3", "9.0.3", false],
            ],
        );
    });

    it("judges a fork whose Applications name the upstream: the upstream's content, never exit 2 on its folders", async () => {
        // A fork at the same commit: its `origin` is the fork, while the Applications its apps chart renders name
        // the upstream (served here). The fork's own plugins/kustomized-helm, which no kustomize builds as written
        // (its plugin renders all.yaml first), is what Application example.plugin-kustomized-helm names upstream.
        const fork = path.join(root, "fork");
        fs.cpSync(path.join(ENTRY, "repo"), fork, { recursive: true });
        rewrite(fork, UPSTREAM, `${gitSrv.url}/argocd-example-apps`);
        rewrite(fork, STABLE, charts.url);
        git(fork, "init", "-q", "-b", "master");
        git(fork, "remote", "add", "origin", "https://git.example.com/someone/argocd-example-apps.git");
        git(fork, "add", "-A");
        git(fork, "commit", "-q", "-m", "fork");
        const report = path.join(root, "fork-report.json");
        const allow = [`127.0.0.1:${gitSrv.port}`, `127.0.0.1:${charts.port}`].flatMap((h) => ["--allow-host", h]);
        const r = await checkIn(fork, ...allow, "--cache-dir", path.join(root, "cache"), "--report", `json=${report}`);
        assert.strictEqual(r.code, 1, r.err);
        assert.match(
            r.err,
            new RegExp(
                `^pko-guard: skipped plugins/kustomized-helm: rendering it with defaults fails \\(kustomize failed: .*\\); Application argocd/example\\.plugin-kustomized-helm names this path in ${gitSrv.url.replace(/\./g, "\\.")}/argocd-example-apps, whose content is what it applies$`,
                "m",
            ),
        );
        const json = JSON.parse(fs.readFileSync(report, "utf8")) as {
            projects: { findings: { rule: string; status: string; resource: string; location?: string }[] }[];
        };
        const blocking = json.projects[0].findings.filter((f) => f.status === "blocking");
        assert.deepStrictEqual(
            blocking.map((f) => [f.rule, f.resource, f.location]),
            ["kasane", "kustomized-helm", "nix"].map((p) => [
                "argocd-app-rendered",
                `Application/argocd/example.plugin-${p}`,
                "apps/templates/applications.yaml:1",
            ]),
        );
    });
});
