/**
 * Work proportional to the input: a `check` of plain files loads none of what places and renders (Argo CD's and
 * Flux's code, the renderers, remote sources: gitops/manifests/load.ts loads gitops/manifests/placement.ts on first
 * need) nor the RE2 engine (loaded for a pattern a user configures, policies/model/production.ts); an input that
 * needs one loads it. Each case runs `check` (tsc's output, module by module) in a process of its own and lists the
 * modules it loaded.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";

const BIN = path.join(REPO_ROOT, "bin");
/** What a run of plain files may load of the GitOps engines: which objects and folders need them, and light values. */
const LIGHT = [
    "gitops/argocd/argo-kinds.js",
    "gitops/argocd/destinations.js",
    "gitops/fetch/network-policy.js",
    "gitops/flux/flux-kinds.js",
    "gitops/render/capabilities.js",
    "gitops/render/folders.js",
    "gitops/render/repo-url.js",
];

const STACK = `apiVersion: pulumi.com/v1
kind: Stack
metadata: {name: app, namespace: team-a}
spec:
  stack: acme/app/live
  projectRepo: https://github.com/acme/app
  branch: main
  destroyOnFinalize: true
`;

const APPLICATION = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://github.com/acme/other.git", path: apps, targetRevision: main}
  destination: {server: "https://kubernetes.default.svc", namespace: team-a}
`;

const FLUX = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./nowhere
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`;

describe("check loads what places, renders and matches patterns only for an input that needs it", function () {
    this.timeout(60000);
    let tmp: string;

    before(() => {
        tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-on-need-")));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    /** A repository of `files` (name: text); `check` of `paths` in it: its findings' policies and what it loaded. */
    function run(name: string, files: Record<string, string>, paths = ["."], config?: object) {
        const dir = path.join(tmp, name);
        for (const [f, text] of Object.entries(files)) {
            fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
            fs.writeFileSync(path.join(dir, f), text);
        }
        if (config) fs.writeFileSync(path.join(dir, "policy-config.json"), JSON.stringify(config));
        const options = {
            paths,
            failOnAdvisory: false,
            repositories: [],
            offline: true,
            config: config && "policy-config.json",
        };
        const script = `require(${JSON.stringify(path.join(BIN, "support", "fatal.js"))});
const { runCheck } = require(${JSON.stringify(path.join(BIN, "cli", "check.js"))});
const loaded = () => Object.keys(require.cache);
runCheck(${JSON.stringify(options)}).then(
    (r) => process.stdout.write(JSON.stringify({ policies: r.subject.findings.map((f) => f.policy), loaded: loaded() })),
    (e) => process.stdout.write(JSON.stringify({ error: String(e.message), loaded: loaded() })),
);`;
        const r = spawnSync(process.execPath, ["-e", script], { cwd: dir, encoding: "utf8", timeout: 60000 });
        assert.strictEqual(r.status, 0, r.stderr);
        const out = JSON.parse(r.stdout) as { policies?: string[]; error?: string; loaded: string[] };
        const engines = out.loaded
            .filter((f) => f.startsWith(BIN + path.sep))
            .map((f) => path.relative(BIN, f).split(path.sep).join("/"))
            .filter((f) => /^gitops\/(argocd|flux|render|fetch)\/|^gitops\/manifests\/(flux-)?placement\.js$/.test(f))
            .filter((f) => !LIGHT.includes(f));
        const re2 = out.loaded.some((f) => f.includes(`${path.sep}re2js${path.sep}`));
        return { ...out, engines, re2 };
    }

    it("plain files: none of them, and the defaults' findings", () => {
        const r = run("plain", { "stack.yaml": STACK });
        assert.deepStrictEqual(r.engines, []);
        assert.strictEqual(r.re2, false);
        // acme/app/live is not production by the default pattern (written out: policies/model/builtin-patterns.ts).
        assert.ok(r.policies!.length > 0 && !r.policies!.includes("pko-stack-destroy-on-finalize-nonprod"));
    });

    it("a production pattern configured: the RE2 engine, and the Stack it names is production", () => {
        const r = run("pattern", { "stack.yaml": STACK }, ["stack.yaml"], {
            "pko-guard-production": { productionStackPatterns: ["(^|/)live$"] },
        });
        assert.strictEqual(r.re2, true);
        assert.deepStrictEqual(r.engines, []);
        assert.ok(r.policies!.includes("pko-stack-destroy-on-finalize-nonprod"), r.policies!.join(", "));
    });

    it("an Application: Argo CD's code and placing", () => {
        const r = run("application", { "stack.yaml": STACK, "apps/app.yaml": APPLICATION });
        assert.ok(r.engines.includes("gitops/manifests/placement.js"), r.engines.join(", "));
        assert.ok(r.engines.includes("gitops/argocd/applications.js"), r.engines.join(", "));
    });

    it("a Flux Kustomization: Flux's code and placing", () => {
        const r = run("flux", { "stack.yaml": STACK, "clusters/apps.yaml": FLUX });
        assert.ok(r.engines.includes("gitops/manifests/flux-placement.js"), r.engines.join(", "));
        assert.ok(r.engines.includes("gitops/flux/flux-kustomizations.js"), r.engines.join(", "));
    });

    it("a kustomization or a chart: the renderers", () => {
        for (const [name, file] of [
            ["kustomization", "base/kustomization.yaml"],
            ["chart", "chart/Chart.yaml"],
        ]) {
            const r = run(name, { "stack.yaml": STACK, [file]: "resources: []\n" });
            assert.ok(r.engines.includes("gitops/manifests/placement.js"), `${name}: ${r.engines.join(", ")}`);
            assert.ok(r.engines.includes("gitops/render/kustomize.js"), `${name}: ${r.engines.join(", ")}`);
        }
    });

    it("a .jsonnet file named: the jsonnet renderer", () => {
        const r = run("jsonnet", { "main.jsonnet": "[]\n" }, ["main.jsonnet"]);
        assert.ok(r.engines.includes("gitops/render/jsonnet.js"), r.engines.join(", "));
    });
});
