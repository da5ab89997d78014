/**
 * `pko-guard check` on Argo CD repositories, as a user runs it (a temporary repository outside this one):
 * Applications rendered with the real kustomize, Helm and jsonnet (built by `npm run setup`; without them
 * these tests fail, never skip), objects placed in the destination namespace, ApplicationSets expanded,
 * folders that need rendering never read raw, and the bad-input lines: a missing tool, a remote base, a chart
 * that fails (without echoing a value), a generator that is not expanded.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../core/paths";
import { findTool } from "../../core/render/tools";

const CLI = path.join(REPO_ROOT, "bin", "cli", "pko-guard.js");
const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
const CANARY = "canary-secret-5d1c0e";

const stack = (extra: string, ns = "  namespace: pulumi\n") =>
    `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ledger-production\n${ns}spec:\n  serviceAccountName: ledger\n  stack: myorg/ledger/production\n  projectRepo: https://github.com/myorg/ledger.git\n${extra}  refresh: true\n  environment: [aws-credentials]\n`;
const app = (name: string, p: string, source = "") =>
    `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ${name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://example.com/repo.git\n    path: ${p}\n${source}  destination:\n    server: https://kubernetes.default.svc\n    namespace: pulumi\n`;

/** An ApplicationSet "ledger" whose git generator takes `directories`, then `generators` (more generators' YAML), one Application a folder. */
const gitAppSet = (directories: string, generators = "") =>
    `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  generators:\n    - git:\n        repoURL: https://example.com/repo.git\n        directories: ${directories}\n${generators}  template:\n    metadata: {name: 'ledger-{{path.basename}}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: '{{path}}'}\n      destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n`;

describe("pko-guard check renders what Argo CD renders", function () {
    this.timeout(180000);
    let tmp: string;
    const write = (rel: string, text: string) => {
        const f = path.join(tmp, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
    };
    const check = (args: string[], env: NodeJS.ProcessEnv = process.env) => {
        const r = spawnSync(process.execPath, [CLI, "check", "--repo-root", ".", ...args], { cwd: tmp, encoding: "utf8", env, timeout: 120000 });
        return { code: r.status, out: r.stdout, err: r.stderr };
    };
    const rows = (file: string) => JSON.parse(fs.readFileSync(path.join(tmp, file), "utf8")).projects[0].findings as { policy: string; resource: string; file: string; line: number; syncedBy?: string }[];

    before(() => {
        for (const t of ["kustomize", "helm", "jsonnet"] as const) assert.ok(findTool(t), `${t} is missing: run npm run setup`);
    });
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-render-"));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("an Application's own kustomize patch decides the verdict, attributed to the base file's object", () => {
        write(
            "apps/ledger.yaml",
            app(
                "ledger",
                "ledger",
                "    kustomize:\n      namePrefix: eu-\n      patches:\n        - target: {kind: Stack}\n          patch: |-\n            - op: add\n              path: /spec/branch\n              value: release\n",
            ),
        );
        write("ledger/kustomization.yaml", "resources: [stack.yaml]\n");
        write("ledger/stack.yaml", `# the base\n${stack(`  commit: ${SHA}\n`, "")}`);
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err);
        const pinned = rows("r.json").filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((x) => [x.resource, x.file, x.line]),
            [["Stack/pulumi/eu-ledger-production", "ledger/stack.yaml", 6]], // spec: (the patch added spec.branch),
        );
        assert.match(r.out, /1 rendered/);
    });

    it("Helm value files from a ref source, and a chart given directly renders with its defaults", () => {
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write("chart/values.yaml", `pin: "commit: ${SHA}"\n`);
        write("chart/templates/stack.yaml", stack("  {{ .Values.pin }}\n", "  namespace: {{ .Release.Namespace }}\n"));
        write("values/prod.yaml", "pin: 'branch: release'\n");
        write(
            "apps/ledger.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  sources:\n    - repoURL: https://example.com/repo.git\n      ref: values\n    - repoURL: https://example.com/repo.git\n      path: chart\n      helm:\n        valueFiles: [$values/values/prod.yaml]\n  destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n",
        );
        const r = check(["apps", "chart"]);
        // Rendered by the Application (branch from the ref value file): blocking.
        assert.strictEqual(r.code, 1, r.err + r.out);
        const direct = check(["chart"]);
        // The chart alone, with its default values: pinned, clean (namespace from --namespace unset: default).
        assert.strictEqual(direct.code, 0, direct.err + direct.out);
    });

    it("Helm is told the cluster serves PKO and Argo CD (and --api-versions, --kube-version), unless the Application says otherwise", () => {
        // A chart that renders its Stack only where the cluster serves the Stack API, and picks the source by
        // the cluster's version: what Argo CD applies on a cluster that runs PKO is a Stack on a branch.
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write(
            "chart/templates/stack.yaml",
            `{{- if .Capabilities.APIVersions.Has "pulumi.com/v1/Stack" }}\n${stack(`{{- if semverCompare ">=1.31.0-0" .Capabilities.KubeVersion.Version }}\n  commit: ${SHA}\n{{- else }}\n  branch: release\n{{- end }}\n`, "")}{{- end }}\n`,
        );
        write("chart/templates/widget.yaml", '{{- if .Capabilities.APIVersions.Has "example.com/v1/Widget" }}\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: widget}\n{{- end }}\n');
        write("apps/ledger.yaml", app("ledger", "chart"));
        const pinned = (file: string) =>
            rows(file)
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit")
                .map((x) => [x.policy, x.resource]);
        const old = check([".", "--kube-version", "v1.30.2-eks-1", "--report", "json=old.json"]);
        assert.strictEqual(old.code, 1, old.err + old.out);
        assert.deepStrictEqual(pinned("old.json"), [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger-production"]]);
        assert.match(old.out, /^2 object\(s\) in /m); // the Application and the Stack
        const current = check([".", "--kube-version", "1.31", "--api-versions", "example.com/v1/Widget", "-v", "--report", "json=new.json"]);
        assert.strictEqual(current.code, 0, current.err + current.out);
        assert.deepStrictEqual(pinned("new.json"), []);
        assert.match(current.out, /^3 object\(s\) in /m); // and the ServiceAccount the Widget API brings
        // The Application's own apiVersions replace the cluster's, as in Argo CD: no Stack API, no Stack.
        write("apps/ledger.yaml", app("ledger", "chart", "    helm:\n      apiVersions: [example.com/v1/Widget]\n      kubeVersion: v1.29.0\n"));
        const own = check([".", "-v"]);
        assert.strictEqual(own.code, 0, own.err + own.out);
        assert.doesNotMatch(own.out, /ledger-production/);
        assert.match(own.out, /^2 object\(s\) in /m); // the Application and the ServiceAccount
        const bad = check([".", "--kube-version", "latest"]);
        assert.deepStrictEqual([bad.code, bad.err], [2, "pko-guard: --kube-version: not a Kubernetes version (expected e.g. 1.31 or v1.31.4)\n"]);
    });

    it("a finding names what syncs its object: the Application, or the ApplicationSet for a generated Application", () => {
        // One chart, two Applications (staging pinned by its values, production on a branch): the finding says which.
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write("chart/values.yaml", `pin: "commit: ${SHA}"\n`);
        write("chart/templates/stack.yaml", stack("  {{ .Values.pin }}\n  destroyOnFinalize: true\n", ""));
        write("apps/staging.yaml", app("ledger-staging", "chart", `    helm:\n      releaseName: ledger\n`).replace("namespace: pulumi\n", "namespace: staging\n"));
        write("apps/production.yaml", app("ledger-prod", "chart", `    helm:\n      releaseName: ledger\n      values: "pin: 'branch: release'"\n`));
        write(
            "appsets/projects.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: projects, namespace: argocd}\nspec:\n  generators:\n    - list: {elements: [{env: qa}]}\n  template:\n    metadata: {name: 'ledger-{{env}}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: chart}\n      destination: {server: https://kubernetes.default.svc, namespace: '{{env}}'}\n      syncPolicy: {automated: {prune: true}}\n",
        );
        const r = check([".", "--report", "json=r.json", "--report", "sarif=r.sarif"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        const pinned = rows("r.json").filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((x) => [x.resource, x.file, x.syncedBy]),
            [["Stack/pulumi/ledger-production", "chart/templates/stack.yaml", "Application argocd/ledger-prod"]],
        );
        assert.match(r.out, /resource: Stack\/pulumi\/ledger-production \(chart\/templates\/stack\.yaml:\d+:\d+; synced by Application argocd\/ledger-prod\)/);
        const sarif = JSON.parse(fs.readFileSync(path.join(tmp, "r.sarif"), "utf8")).runs[0].results as { ruleId: string; properties: { syncedBy?: string } }[];
        assert.deepStrictEqual(
            sarif.filter((x) => x.ruleId === "pko-stack-prod-pinned-commit").map((x) => x.properties.syncedBy),
            ["Application argocd/ledger-prod"],
        );
        // The same template, three Stacks: each finding names its own Application.
        assert.deepStrictEqual(
            rows("r.json")
                .filter((x) => x.policy === "pko-stack-destroy-on-finalize-nonprod")
                .map((x) => [x.resource, x.syncedBy])
                .sort(),
            [
                ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod"],
                ["Stack/qa/ledger-production", "Application argocd/ledger-qa"],
                ["Stack/staging/ledger-production", "Application argocd/ledger-staging"],
            ],
        );
        // The generated Application's own finding (automated prune over a production Stack that destroys) names its set.
        assert.deepStrictEqual(
            rows("r.json")
                .filter((x) => x.resource.startsWith("Application/"))
                .map((x) => [x.policy, x.resource, x.syncedBy]),
            [["argocd-app-pko-sync-order", "Application/argocd/ledger-qa", "ApplicationSet argocd/projects"]],
        );
    });

    it("objects without a namespace land in the destination namespace, for the RBAC rules", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write("ledger/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ledger\n");
        write("ledger/stack.yaml", stack(`  commit: ${SHA}\n`, ""));
        write(
            "ledger/admin.yaml",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ledger-admin\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: ledger, namespace: pulumi}]\n",
        );
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        assert.ok(rows("r.json").some((x) => x.policy === "pko-stack-no-cluster-admin" && x.resource === "ClusterRoleBinding/ledger-admin"));
    });

    it("ApplicationSet list and git-directory generators create Applications; others are named and counted", () => {
        write("envs/prod/stack.yaml", stack("  branch: release\n", ""));
        write("envs/dev/readme.json", "{}\n");
        write("appsets/ledger.yaml", gitAppSet("[{path: envs/*}, {path: envs/dev, exclude: true}]", "    - clusters: {}\n"));
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        assert.ok(rows("r.json").some((x) => x.policy === "pko-stack-prod-pinned-commit" && x.resource === "Stack/pulumi/ledger-production"));
        assert.match(r.err, /ApplicationSet "ledger": the clusters generator is not expanded/);
        assert.match(r.out, /1 not rendered/);
    });

    it("git directories paths match as Go's path.Match does; a malformed one matches nothing, as Argo CD skips it", () => {
        write("envs/prod/stack.yaml", stack("  branch: release\n", ""));
        write("envs/qa/stack.yaml", stack("  branch: qa\n", "").replace("ledger-production", "ledger-qa"));
        write("appsets/ledger.yaml", gitAppSet("[{path: 'envs/[^q]*'}, {path: 'envs/[q'}, {path: 'envs/\\qa'}]"));
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        const pinned = rows("r.json").filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        // `envs/[^q]*` takes prod; `envs/\qa` (an escaped q) takes qa; `envs/[q` is malformed and takes nothing.
        assert.deepStrictEqual(pinned.map((x) => x.resource).sort(), ["Stack/pulumi/ledger-production", "Stack/pulumi/ledger-qa"]);
        assert.ok(
            pinned.every((x) => x.syncedBy !== undefined),
            JSON.stringify(pinned),
        );
    });

    it("goTemplate ApplicationSets execute as Go templates with Argo CD's functions, values and path prefix", () => {
        write("envs/Prod_EU/stack.yaml", stack("  branch: release\n", ""));
        write("envs/dev/stack.yaml", stack(`  commit: ${SHA}\n`, "").replace("ledger-production", "ledger-dev").replace("myorg/ledger/production", "myorg/ledger/dev"));
        const appset = (extra: string, name = "ledger-{{ .env.path.basenameNormalized }}") =>
            `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  goTemplate: true\n  goTemplateOptions: ["missingkey=error"]\n  generators:\n    - git:\n        repoURL: https://example.com/repo.git\n        pathParamPrefix: env\n        directories: [{path: envs/*}]\n        values:\n          team: '{{ index .env.path.segments 0 | upper }}'\n  template:\n    metadata: {name: '${name}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: '{{ .env.path.path }}'}\n      destination: {server: https://kubernetes.default.svc, namespace: '{{ .env.path.basename | lower | replace "_" "-" }}-{{ .values.team | lower }}'}\n${extra}`;
        write("appsets/ledger.yaml", appset(""));
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        assert.strictEqual(r.err, "");
        // Each folder's Stack lands in the namespace the template computed, synced by the generated Application.
        assert.deepStrictEqual(
            rows("r.json")
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit")
                .map((x) => [x.resource, x.syncedBy]),
            [["Stack/prod-eu-envs/ledger-production", "Application argocd/ledger-prod-eu"]],
        );
        assert.match(r.out, /^5 object\(s\) in 3 file\(s\)/m); // the set, its two Applications, their two Stacks
        fs.rmSync(path.join(tmp, "r.json")); // not an input of the next runs
        // A template that does not execute (missingkey=error on a parameter that does not exist): named, nothing guessed.
        write("appsets/ledger.yaml", appset("", "ledger-{{ .env.path.nope }}"));
        const missing = check(["."]);
        assert.match(
            missing.err,
            /^pko-guard: ApplicationSet "ledger": 2 of its git generator's Applications do not render \(a template string does not execute \(a parameter it names does not exist\)\); Argo CD creates none of them either\n/,
        );
        // Hostile templates are bounded: a string that grows without end, an allocation of gigabytes (the helper's
        // address space is capped, so it ends, not the machine): one line, nothing of the template echoed.
        write("appsets/ledger.yaml", appset("", "{{ range until 1000000 }}ledger{{ end }}"));
        assert.match(check(["."]).err, /^pko-guard: ApplicationSet "ledger": 2 of its git generator's Applications do not render \(a template string renders more than 2097152 bytes\)/);
        write("appsets/ledger.yaml", appset("", '{{ repeat 3000000000 "ab" }}'));
        const bomb = check(["."]);
        assert.strictEqual(bomb.code, 2, bomb.err);
        assert.strictEqual(bomb.err.split("\n").length, 2, bomb.err);
        assert.match(bomb.err, /^pko-guard: ApplicationSet "ledger" \(goTemplate\): appset-template failed: .*out of memory/);
        // templatePatch is not applied: named, not expanded.
        write("appsets/ledger.yaml", appset("  templatePatch: |\n    spec: {}\n"));
        assert.match(check(["."]).err, /ApplicationSet "ledger": templatePatch is not applied/);
    });

    it("a jsonnet file of a directory source is evaluated; never read otherwise", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write(
            "ledger/stack.jsonnet",
            `{ apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: "ledger-production", namespace: "pulumi" }, spec: { stack: "myorg/ledger/production", projectRepo: "https://github.com/myorg/ledger.git", branch: "release", refresh: true, environment: ["aws-credentials"] } }\n`,
        );
        assert.strictEqual(check(["."]).code, 1);
        fs.rmSync(path.join(tmp, "apps"), { recursive: true });
        assert.strictEqual(check(["."]).code, 0);
    });

    it("bad input: missing tool, remote base, a failing chart (no value echoed), a timeout: one line, exit 2", () => {
        write("k/kustomization.yaml", "resources: [stack.yaml]\n");
        write("k/stack.yaml", stack(`  commit: ${SHA}\n`));
        const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-notools-"));
        try {
            const noTools = check(["k"], { ...process.env, PATH: path.dirname(process.execPath), PKO_GUARD_TOOLCHAIN_BIN: empty });
            assert.strictEqual(noTools.code, 2);
            assert.match(noTools.err, /^pko-guard: k \(kustomize\) needs kustomize, which is not installed: .*npm run setup.*\n$/);
        } finally {
            fs.rmSync(empty, { recursive: true, force: true });
        }
        write("r/kustomization.yaml", "resources: [https://github.com/example/repo//base?ref=main]\n");
        const remote = check(["r"]);
        assert.strictEqual(remote.code, 2);
        assert.match(remote.err, /^pko-guard: r \(kustomize\): a remote base needs the network, which check does not use/);
        write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
        write("c/values.yaml", `token: ${CANARY}\n`);
        write("c/templates/x.yaml", '{{ fail (printf "bad token %s" .Values.token) }}\n');
        const failing = check(["c"]);
        assert.strictEqual(failing.code, 2);
        assert.match(failing.err, /^pko-guard: c \(helm chart\): helm failed: /);
        assert.ok(!(failing.err + failing.out).includes(CANARY), failing.err);
        assert.strictEqual(failing.err.trim().split("\n").length, 1);
    });

    it("jsonnet: a remote import or one outside the repository is refused before evaluating", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write("ledger/stack.jsonnet", 'local lib = import "https://example.com/lib.libsonnet"; {}\n');
        const remote = check(["."]);
        assert.strictEqual(remote.code, 2);
        assert.strictEqual(remote.err, "pko-guard: ledger/stack.jsonnet (jsonnet): an import cannot be opened in the repository (a remote import needs the network, which check does not use: vendor it)\n");
        // Outside the repository, however it is reached: directly, from a nested import, through a verbatim
        // string, or through a link inside the repository; nothing of the file is shown.
        const outsideFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-outside-")), "secret.txt");
        fs.writeFileSync(outsideFile, CANARY);
        try {
            const rel = path.relative(path.join(tmp, "ledger"), outsideFile);
            const cases: [string, () => void][] = [
                ["direct", () => write("ledger/stack.jsonnet", `local p = importstr "${rel}"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: p } }\n`)],
                [
                    "nested",
                    () => {
                        write("ledger/lib/inner.libsonnet", `{ v: importstr "../${rel}" }\n`);
                        write("ledger/stack.jsonnet", 'local l = import "lib/inner.libsonnet"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: l.v } }\n');
                    },
                ],
                ["verbatim", () => write("ledger/stack.jsonnet", `local p = importstr@"${outsideFile}"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: p } }\n`)],
            ];
            for (const [name, arrange] of cases) {
                arrange();
                const outside = check(["."]);
                assert.deepStrictEqual([outside.code, outside.err], [2, "pko-guard: ledger/stack.jsonnet (jsonnet): an import reaches outside the repository (Argo CD refuses it)\n"], name);
                assert.ok(!outside.out.includes(CANARY), name);
            }
            // A link out of the repository, anywhere in it, stops rendering as it stops Argo CD's repo server:
            // here a chart that would put the file into a Stack's repository URL (which a finding quotes).
            write("ledger/stack.jsonnet", "{}\n");
            write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
            write("chart/templates/stack.yaml", stack("  branch: '{{ .Files.Get \"files/leak\" }}'\n"));
            fs.mkdirSync(path.join(tmp, "chart", "files"));
            fs.symlinkSync(path.relative(path.join(tmp, "chart", "files"), outsideFile), path.join(tmp, "chart", "files", "leak"));
            const linked = check(["."]);
            assert.deepStrictEqual([linked.code, linked.err], [2, "pko-guard: chart/files/leak: a symbolic link that points outside the repository (Argo CD refuses to render a repository holding one)\n"]);
            assert.ok(!linked.out.includes(CANARY));
            // A link that stays inside is fine.
            fs.rmSync(path.join(tmp, "chart", "files", "leak"));
            write("chart/files/real", "release");
            fs.symlinkSync("real", path.join(tmp, "chart", "files", "leak"));
            assert.strictEqual(check(["."]).code, 1); // rendered: a production Stack on a branch
        } finally {
            fs.rmSync(path.dirname(outsideFile), { recursive: true, force: true });
        }
    });
});
