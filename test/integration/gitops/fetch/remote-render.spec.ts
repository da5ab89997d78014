/**
 * What check renders from fetched sources, against a git server on loopback that this spec starts (git's own
 * http-backend): a kustomization's remote base, and an Application whose repoURL is another repository, each
 * judged as that repository's content at the revision it resolved to; `--offline` with an empty cache keeps
 * today's lines exactly; a fetch that fails is the fail-closed note, one line.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { loadManifests } from "../../../../gitops/manifests/load";
import { evaluateManifests } from "../../../../gitops/manifests/evaluate-manifests";
import { packConfig } from "../../../../evaluation/pack-config";
import { fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { FLOATING_SOURCE } from "../../../../policies/model/origin";
import { BadInputError } from "../../../../support/errors";
import {
    TestServer,
    helm,
    makeRepository,
    serverProcess,
    writeChart,
    writeFiles,
} from "../../../support/source-servers";

const STACK =
    "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ledger\n  namespace: pulumi\nspec:\n  stack: org/ledger/prod\n  projectRepo: https://github.com/org/ledger\n  commit: 2b0889718d3e63feeb6079ccd5e4488d8601e353\n";

describe("check renders fetched sources from a git server on loopback", function () {
    this.timeout(120_000);
    let root: string;
    let git: TestServer;
    let charts: TestServer;
    let commit: string;
    let n = 0;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-remote-render-"));
        commit = makeRepository(path.join(root, "repos"), "platform", {
            "base/kustomization.yaml": "resources: [stack.yaml]\n",
            "base/stack.yaml": STACK,
            "prod/stack.yaml": STACK,
            "values/prod.yaml": "stackName: from-values\n",
            "config/ledger.json": '{"team": "ledger", "dir": "prod"}\n',
        });
        // Its own process: check's rendering waits for each fetch synchronously.
        git = await serverProcess("git", path.join(root, "repos"));
        const chartRepo = path.join(root, "charts");
        fs.mkdirSync(chartRepo);
        helm(chartRepo, "package", writeChart(root, "ledger", "1.2.0"), "-d", chartRepo);
        const valued = writeChart(root, "valued", "0.1.0");
        fs.writeFileSync(
            path.join(valued, "templates", "stack.yaml"),
            'apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: {{ .Values.stackName | default "chart" }}}\nspec: {stack: org/x/dev}\n',
        );
        // kustomize's Helm chart generator reads a chart's values.yaml (helm template does not need one).
        fs.writeFileSync(path.join(valued, "values.yaml"), "{}\n");
        helm(chartRepo, "package", valued, "-d", chartRepo);
        fs.mkdirSync(path.join(chartRepo, "values"));
        fs.writeFileSync(path.join(chartRepo, "values", "prod.yaml"), "stackName: from-url\n");
        charts = await serverProcess("files", chartRepo);
        helm(chartRepo, "repo", "index", ".", "--url", charts.url);
    });
    after(async () => {
        await Promise.all([git?.close(), charts?.close()]);
        fs.rmSync(root, { recursive: true, force: true });
    });

    /** A repository of `files` checked with a fetch policy (`allow`: whether the git server is listed). */
    const check = (files: Record<string, string>, o: { allow?: boolean; offline?: boolean; cache?: string } = {}) => {
        const repo = path.join(root, `repo-${n++}`);
        writeFiles(repo, files);
        const fetch = fetchPolicy({
            allowHosts: o.allow === false ? [] : [`127.0.0.1:${git.port}`, `127.0.0.1:${charts.port}`],
            cacheDir: o.cache ?? path.join(root, `cache-${n}`),
            offline: o.offline,
            repoRoot: repo,
            limits: { timeoutMs: 30_000 },
        });
        const load = loadManifests(["."], {
            repoRoot: repo,
            cwd: repo,
            fetch,
            repository: { urls: [{ url: "https://git.example.com/me/manifests", from: "test" }] },
        });
        return { load, rows: evaluateManifests(load, packConfig()) };
    };
    const kustomization = () => ({
        "app/kustomization.yaml": `resources:\n  - ${git.url}/platform//base?ref=main\n`,
    });

    it("builds a kustomization with a remote base, its Stack named by the source and marked floating", () => {
        const { load, rows } = check(kustomization());
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${git.url}/platform@${commit}/base/stack.yaml`);
        const annotations = (stack.object.metadata as { annotations: Record<string, string> }).annotations;
        assert.strictEqual(annotations[FLOATING_SOURCE], `${git.url}/platform at "main", resolved to ${commit}`);
        const pinned = rows.filter((r) => r.policy === "pko-stack-prod-pinned-commit");
        assert.strictEqual(pinned.length, 1);
        assert.match(pinned[0].message, /a reference that can move/);
        assert.strictEqual(pinned[0].file, `${git.url}/platform@${commit}/base/stack.yaml`);
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.url, s.ref, s.resolved]),
            [["git", `${git.url}/platform`, "main", commit]],
        );
    });

    it("keeps today's line with --offline and nothing cached, and uses the cache once it holds the base", () => {
        const cache = path.join(root, "shared-cache");
        assert.throws(
            () => check(kustomization(), { offline: true, cache }),
            (e: Error) =>
                e instanceof BadInputError &&
                e.message ===
                    "app (kustomize): a remote base needs the network, which check does not use; vendor it into the repository",
        );
        check(kustomization(), { cache });
        const { load } = check(kustomization(), { offline: true, cache });
        assert.ok(load.objects.some((o) => o.kind === "Stack"));
        assert.strictEqual(load.fetched?.[0].fromCache, true, "offline, the cache answered");
    });

    it("judges an Application's other repository at its targetRevision, pinned to a commit", () => {
        const app = (revision: string) =>
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: "${git.url}/platform", path: prod, targetRevision: "${revision}"}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`;
        const pinned = check({ "apps/ledger.yaml": app(commit) });
        const stack = pinned.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${git.url}/platform@${commit}/prod/stack.yaml`);
        assert.strictEqual(stack.syncedBy, "Application argocd/ledger");
        assert.deepStrictEqual(
            pinned.rows.filter((r) => r.level === "mandatory").map((r) => r.policy),
            [],
            "a pinned production Stack from a pinned source passes the mandatory rules",
        );
        const floating = check({ "apps/ledger.yaml": app("main") });
        assert.deepStrictEqual(
            floating.rows.filter((r) => r.level === "mandatory").map((r) => r.policy),
            ["pko-stack-prod-pinned-commit"],
        );
    });

    it("builds a chart's dependency from a chart repository, as helm dependency build would", () => {
        const { load } = check({
            "c/Chart.yaml": `apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n  - {name: ledger, version: "~1.2.0", repository: "${charts.url}"}\n`,
            "c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n",
        });
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${charts.url}#ledger@1.2.0/templates/stack.yaml`);
        assert.ok(load.objects.some((o) => o.kind === "ConfigMap"));
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.ref, s.resolved, s.floating]),
            [["helm", "~1.2.0", "1.2.0", true]],
        );
    });

    it("reads a multi-source ref source's value files from the other repository at its revision", () => {
        const { load } = check({
            "apps/ledger.yaml": `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  sources:\n    - {repoURL: "${git.url}/platform", targetRevision: "${commit}", ref: values}\n    - repoURL: https://git.example.com/me/manifests\n      path: chart\n      helm: {valueFiles: [$values/values/prod.yaml]}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
            "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
            "chart/templates/stack.yaml":
                "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: {{ .Values.stackName }}}\nspec: {stack: org/x/dev}\n",
        });
        assert.deepStrictEqual(load.notRendered, []);
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.identity, "Stack/pulumi/from-values");
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.resolved, s.floating]),
            [["git", commit, false]],
        );
    });

    it("fails closed with one line when the fetch is refused", () => {
        const { load, rows } = check(
            {
                "apps/ledger.yaml": `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: "${git.url}/platform", path: prod}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
            },
            { allow: false },
        );
        assert.deepStrictEqual(load.notRendered, [
            `Application "ledger": spec.source could not be fetched: ${git.url}/platform: refused, plain http:// (list the host with --allow-host to fetch it without TLS)`,
        ]);
        assert.deepStrictEqual(
            rows.filter((r) => r.level === "mandatory").map((r) => r.policy),
            ["argocd-app-rendered"],
        );
    });

    /** An Application rendering this repository's `chart` with `valueFiles`. */
    const valuesApp = (valueFiles: string[]) => ({
        "apps/ledger.yaml": `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/me/manifests\n    path: chart\n    helm: {valueFiles: ${JSON.stringify(valueFiles)}}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
        "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
        "chart/templates/stack.yaml":
            'apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: {{ .Values.stackName | default "own" }}}\nspec: {stack: org/x/dev}\n',
    });

    it("fetches an http(s) value file as Argo CD's repo server does, and records it", () => {
        const { load } = check(valuesApp([`${charts.url}/values/prod.yaml?token=not-shown`]));
        assert.deepStrictEqual(load.notRendered, []);
        assert.strictEqual(load.objects.find((o) => o.kind === "Stack")!.identity, "Stack/pulumi/from-url");
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.url, s.floating]),
            [["file", `${charts.url}/values/prod.yaml`, true]],
        );
        // The record and what the Stack says of its origin never hold the URL's query (it can hold a token).
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.ok(!JSON.stringify([load.fetched, stack.file, stack.object]).includes("not-shown"));
    });

    it("fails the Application closed, one line, on a value file it cannot fetch or a scheme only a plugin reads", () => {
        const refused = check(valuesApp([`${charts.url}/values/prod.yaml`]), { allow: false });
        assert.deepStrictEqual(refused.load.notRendered, [
            `Application "ledger": spec.source.helm.valueFiles: a value file could not be fetched: ${charts.url}/values/prod.yaml: refused, plain http:// (list the host with --allow-host to fetch it without TLS)`,
        ]);
        assert.ok(!refused.load.objects.some((o) => o.kind === "Stack"), "nothing of the source is guessed");
        assert.deepStrictEqual(
            refused.rows.filter((r) => r.level === "mandatory").map((r) => [r.policy, r.resource]),
            [["argocd-app-rendered", "Application/argocd/ledger"]],
        );
        const missing = check(valuesApp([`${charts.url}/values/none.yaml`]));
        assert.deepStrictEqual(missing.load.notRendered, [
            `Application "ledger": spec.source.helm.valueFiles: a value file could not be fetched: ${charts.url}/values/none.yaml: not found (404)`,
        ]);
        const offline = check(valuesApp([`${charts.url}/values/prod.yaml`]), { offline: true });
        assert.deepStrictEqual(offline.load.notRendered, [
            `Application "ledger": spec.source.helm.valueFiles: "${charts.url}/values/prod.yaml" is fetched over the network, which check does not do in this run (--offline, nothing cached)`,
        ]);
        const plugin = check(valuesApp(["secrets+gpg-import://values/prod.yaml"]));
        assert.deepStrictEqual(plugin.load.notRendered, [
            'Application "ledger": spec.source.helm.valueFiles: "secrets+gpg-import://values/prod.yaml" is read through the URL scheme "secrets+gpg-import", which only a Helm plugin of Argo CD\'s repo server reads (helm.valuesFileSchemes); check runs none',
        ]);
    });

    it("fails closed on a jsonnet source that imports a URL or names a URL as a lib, which Argo CD never fetches", () => {
        const app = (jsonnet: string) =>
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/me/manifests\n    path: jsonnet\n${jsonnet}  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`;
        const imported = check({
            "apps/ledger.yaml": app(""),
            "jsonnet/main.jsonnet": `local s = import "${charts.url}/stack.libsonnet";\ns\n`,
        });
        assert.deepStrictEqual(imported.load.notRendered, [
            'Application "ledger": spec.source: jsonnet file "jsonnet/main.jsonnet": an import cannot be opened in the repository (Argo CD\'s jsonnet reads only the repository\'s files and its libs folders, never a URL: vendor it)',
        ]);
        assert.deepStrictEqual(
            imported.rows.filter((r) => r.level === "mandatory").map((r) => [r.policy, r.resource]),
            [["argocd-app-rendered", "Application/argocd/ledger"]],
        );
        const lib = check({
            "apps/ledger.yaml": app(`    directory: {jsonnet: {libs: ["${charts.url}/lib"]}}\n`),
            "jsonnet/main.jsonnet": "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}}\n",
        });
        assert.deepStrictEqual(lib.load.notRendered, [
            `Application "ledger": spec.source.directory.jsonnet.libs: "${charts.url}/lib" is a URL; Argo CD's jsonnet libs are folders of the repository, never fetched`,
        ]);
    });

    /** An ApplicationSet whose git generator (`generator`'s YAML) names the platform repository at `revision`. */
    const appSet = (generator: string, source: string) =>
        `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: teams, namespace: argocd}\nspec:\n  generators:\n    - git:\n        repoURL: "${git.url}/platform"\n        revision: "${commit}"\n${generator}  template:\n    metadata: {name: 'team-{{path.basename}}'}\n    spec:\n      project: default\n      source: {repoURL: "${git.url}/platform", targetRevision: "${commit}", path: '${source}'}\n      destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`;

    it("expands a git generator of another repository at its revision and renders what it generates", () => {
        const dirs = check({ "apps/set.yaml": appSet("        directories: [{path: prod}]\n", "{{path}}") });
        assert.deepStrictEqual(dirs.load.notRendered, []);
        const app = dirs.load.objects.find((o) => o.kind === "Application")!;
        assert.strictEqual(app.identity, "Application/argocd/team-prod");
        const stack = dirs.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${git.url}/platform@${commit}/prod/stack.yaml`);
        assert.strictEqual(stack.syncedBy, "Application argocd/team-prod");
        // The files generator reads the other repository's file; its parameters choose the folder.
        const files = check({ "apps/set.yaml": appSet("        files: [{path: config/*.json}]\n", "{{dir}}") });
        assert.deepStrictEqual(files.load.notRendered, []);
        assert.deepStrictEqual(
            files.load.objects.filter((o) => o.kind === "Application").map((o) => o.identity),
            ["Application/argocd/team-config"],
        );
        assert.strictEqual(
            files.load.objects.find((o) => o.kind === "Stack")!.file,
            `${git.url}/platform@${commit}/prod/stack.yaml`,
        );
        assert.deepStrictEqual(
            files.load.fetched?.map((s) => [s.kind, s.url, s.resolved]),
            [["git", `${git.url}/platform`, commit]],
        );
    });

    it("fails the ApplicationSet closed, one line, when its other repository cannot be fetched", () => {
        const { load, rows } = check(
            { "apps/set.yaml": appSet("        directories: [{path: prod}]\n", "{{path}}") },
            { allow: false },
        );
        assert.deepStrictEqual(load.notRendered, [
            `ApplicationSet "teams": spec.generators[0].git could not be fetched: ${git.url}/platform: refused, plain http:// (list the host with --allow-host to fetch it without TLS)`,
        ]);
        assert.deepStrictEqual(
            rows.filter((r) => r.level === "mandatory").map((r) => [r.policy, r.resource]),
            [["argocd-app-rendered", "ApplicationSet/argocd/teams"]],
        );
    });

    it("resolves a floating reference once a run: the generator and the Applications it makes share one fetch", async () => {
        const floating = appSet("        directories: [{path: prod}, {path: base}]\n", "{{path}}")
            .replace(`revision: "${commit}"`, 'revision: "main"')
            .replace(`targetRevision: "${commit}"`, 'targetRevision: "main"');
        git.seen.length = 0;
        const { load } = check({ "apps/set.yaml": floating });
        assert.deepStrictEqual(load.notRendered, []);
        assert.deepStrictEqual(
            load.objects.filter((o) => o.kind === "Application").map((o) => o.identity),
            ["Application/argocd/team-base", "Application/argocd/team-prod"],
        );
        // The server's log is in order: once a request made after the run shows, every request of the run has.
        await new Promise<void>((resolve) => http.get(`${git.url}/after-the-run`, () => resolve()));
        while (!git.seen.some((r) => r.path === "/after-the-run")) await new Promise((r) => setImmediate(r));
        const advertised = git.seen.filter((r) => r.method === "GET" && r.path.includes("/info/refs"));
        assert.strictEqual(advertised.length, 1, JSON.stringify(git.seen));
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.url, s.ref, s.resolved]),
            [[`${git.url}/platform`, "main", commit]],
        );
    });

    it("renders a repository's chart with $values files of this repository's ref source", () => {
        const { load } = check({
            "apps/ledger.yaml": `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  sources:\n    - repoURL: "${charts.url}"\n      chart: valued\n      targetRevision: 0.1.0\n      helm: {valueFiles: [$values/values/prod.yaml]}\n    - {repoURL: https://git.example.com/me/manifests, ref: values}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
            "values/prod.yaml": "stackName: mine\n",
        });
        assert.deepStrictEqual(load.notRendered, []);
        assert.strictEqual(load.objects.find((o) => o.kind === "Stack")!.identity, "Stack/pulumi/mine");
    });
    it("fetches the charts of a kustomization's helmCharts when argocd-cm enables Helm, and fails closed otherwise", () => {
        const files = (version: string) => ({
            "apps/ledger.yaml": `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: https://git.example.com/me/manifests, path: app}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
            "app/kustomization.yaml": `helmCharts:\n  - {name: valued, repo: "${charts.url}", version: "${version}", releaseName: ledger, valuesInline: {stackName: inline}}\n`,
            "argocd/argocd-cm.yaml":
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {kustomize.buildOptions: --enable-helm}\n",
        });
        const cache = path.join(root, "helm-charts-cache");
        const { load } = check(files("0.1.0"), { cache });
        assert.deepStrictEqual(load.notRendered, []);
        // Rendered by kustomize's generator with the Application's destination and the entry's inline values.
        assert.deepStrictEqual(
            load.objects.filter((o) => o.kind === "Stack").map((o) => o.identity),
            ["Stack/pulumi/inline"],
        );
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.url, s.ref, s.resolved]),
            [["helm", `${charts.url}#valued`, "0.1.0", "0.1.0"]],
        );
        // --offline: the cache answers; with nothing cached, the Application fails closed on one line.
        const cached = check(files("0.1.0"), { cache, offline: true });
        assert.deepStrictEqual(cached.load.notRendered, []);
        assert.strictEqual(cached.load.fetched?.[0].fromCache, true);
        const empty = check(files("0.1.0"), { offline: true });
        assert.deepStrictEqual(empty.load.notRendered, [
            `Application "ledger": spec.source: helmCharts: chart "valued" from "${charts.url}/" is fetched over the network, which check does not do in this run (--offline, nothing cached); vendor it into "app/charts/valued-0.1.0/valued"`,
        ]);
        // In a local base: fetched into the base's chart home, where kustomize's generator looks for it.
        const inBase = files("0.1.0");
        const based = check(
            {
                "apps/ledger.yaml": inBase["apps/ledger.yaml"],
                "argocd/argocd-cm.yaml": inBase["argocd/argocd-cm.yaml"],
                "app/kustomization.yaml": "resources: [../base]\n",
                "base/kustomization.yaml": inBase["app/kustomization.yaml"],
            },
            { cache },
        );
        assert.deepStrictEqual(based.load.notRendered, []);
        assert.deepStrictEqual(
            based.load.objects.filter((o) => o.kind === "Stack").map((o) => o.identity),
            ["Stack/pulumi/inline"],
        );
        // A version the repository does not hold: the fetch's own line, failing closed.
        const missing = check(files("9.9.9"));
        assert.strictEqual(missing.load.notRendered.length, 1);
        assert.match(
            missing.load.notRendered[0],
            /^Application "ledger": spec\.source: helmCharts: chart "valued" from "[^"]+" could not be fetched: /,
        );
        assert.deepStrictEqual(
            missing.rows.filter((r) => r.level === "mandatory").map((r) => r.policy),
            ["argocd-app-rendered"],
        );
    });
});
