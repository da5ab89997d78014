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
import { CLI_ENTRY } from "../../../../support/paths";
import { findTool } from "../../../../gitops/render/tools";
import { discoveredType } from "../../../../gitops/argocd/application-sources";

const CLI = CLI_ENTRY;
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
        // The Applications below name this repository https://example.com/repo.git (no origin remote here).
        const repo = ["--repository", "https://example.com/repo.git"];
        const r = spawnSync(process.execPath, [CLI, "check", "--repo-root", ".", ...repo, ...args], {
            cwd: tmp,
            encoding: "utf8",
            env,
            timeout: 120000,
        });
        return { code: r.status, out: r.stdout, err: r.stderr };
    };
    const rows = (file: string) =>
        JSON.parse(fs.readFileSync(path.join(tmp, file), "utf8")).projects[0].findings as {
            policy: string;
            resource: string;
            file: string;
            line: number;
            syncedBy?: string;
        }[];

    before(() => {
        for (const t of ["kustomize", "helm", "jsonnet"] as const)
            assert.ok(findTool(t), `${t} is missing: run npm run setup`);
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
        assert.match(r.out, /\d+ rendered from 1 source\(s\)/);
    });

    it("an Application's kustomize options keep the kustomization's quoted strings strings (kustomize reads YAML 1.1)", () => {
        write("apps/ledger.yaml", app("ledger", "ledger", "    kustomize:\n      namePrefix: eu-\n"));
        // Quoted, these are strings; plain, kustomize (sigs.k8s.io/yaml) would read booleans and refuse the labels.
        write("ledger/kustomization.yaml", 'resources: [stack.yaml]\ncommonLabels:\n  env: "on"\n  "y": "n"\n');
        write("ledger/stack.yaml", stack(""));
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err);
        const pinned = rows("r.json").filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((x) => [x.resource, x.file]),
            [["Stack/pulumi/eu-ledger-production", "ledger/stack.yaml"]],
        );
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

    it("a chart template that js-yaml reads but Kubernetes' decoder refuses (an unquoted {{ }} is a mapping as a key) is located, not an internal error", () => {
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write("chart/values.yaml", "destroy: false\n");
        write("chart/templates/stack.yaml", stack(`  commit: ${SHA}\n  destroyOnFinalize: {{ .Values.destroy }}\n`));
        write("values/prod.yaml", "destroy: true\n");
        write(
            "apps/ledger.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  sources:\n    - repoURL: https://example.com/repo.git\n      ref: values\n    - repoURL: https://example.com/repo.git\n      path: chart\n      helm:\n        valueFiles: [$values/values/prod.yaml]\n  destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n",
        );
        const r = check(["apps", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        const destroy = rows("r.json").filter((x) => x.policy === "pko-stack-destroy-on-finalize-nonprod");
        assert.deepStrictEqual(
            destroy.map((x) => [x.resource, x.file, x.syncedBy]),
            [["Stack/pulumi/ledger-production", "chart/templates/stack.yaml", "Application argocd/ledger"]],
        );
    });

    it("Helm is told the cluster serves PKO and Argo CD (and --api-versions, --kube-version), unless the Application says otherwise", () => {
        // A chart that renders its Stack only where the cluster serves the Stack API, and picks the source by
        // the cluster's version: what Argo CD applies on a cluster that runs PKO is a Stack on a branch.
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write(
            "chart/templates/stack.yaml",
            `{{- if .Capabilities.APIVersions.Has "pulumi.com/v1/Stack" }}\n${stack(`{{- if semverCompare ">=1.31.0-0" .Capabilities.KubeVersion.Version }}\n  commit: ${SHA}\n{{- else }}\n  branch: release\n{{- end }}\n`, "")}{{- end }}\n`,
        );
        write(
            "chart/templates/widget.yaml",
            '{{- if .Capabilities.APIVersions.Has "example.com/v1/Widget" }}\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: widget}\n{{- end }}\n',
        );
        write("apps/ledger.yaml", app("ledger", "chart"));
        const pinned = (file: string) =>
            rows(file)
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit")
                .map((x) => [x.policy, x.resource]);
        const old = check([".", "--kube-version", "v1.30.2-eks-1", "--report", "json=old.json"]);
        assert.strictEqual(old.code, 1, old.err + old.out);
        assert.deepStrictEqual(pinned("old.json"), [
            ["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger-production"],
        ]);
        assert.match(old.out, /^2 object\(s\)[ :]/m); // the Application and the Stack
        const current = check([
            ".",
            "--kube-version",
            "1.31",
            "--api-versions",
            "example.com/v1/Widget",
            "-v",
            "--report",
            "json=new.json",
        ]);
        assert.strictEqual(current.code, 0, current.err + current.out);
        assert.deepStrictEqual(pinned("new.json"), []);
        assert.match(current.out, /^3 object\(s\)[ :]/m); // and the ServiceAccount the Widget API brings
        // The Application's own apiVersions replace the cluster's, as in Argo CD: no Stack API, no Stack.
        write(
            "apps/ledger.yaml",
            app(
                "ledger",
                "chart",
                "    helm:\n      apiVersions: [example.com/v1/Widget]\n      kubeVersion: v1.29.0\n",
            ),
        );
        const own = check([".", "-v"]);
        assert.strictEqual(own.code, 0, own.err + own.out);
        assert.doesNotMatch(own.out, /ledger-production/);
        assert.match(own.out, /^2 object\(s\)[ :]/m); // the Application and the ServiceAccount
        const bad = check([".", "--kube-version", "latest"]);
        assert.deepStrictEqual(
            [bad.code, bad.err],
            [2, "pko-guard: --kube-version: not a Kubernetes version (expected e.g. 1.31 or v1.31.4)\n"],
        );
    });

    it("without --kube-version, Helm assumes the Kubernetes of its own release, as a released helm does", () => {
        // A chart that needs a current cluster (podinfo's own says >=1.23.0-0), rendered with defaults (no
        // Application): a helm built without its release's version stamp assumes 1.20 and refuses the chart.
        write("chart/Chart.yaml", 'apiVersion: v2\nname: ledger\nversion: 0.1.0\nkubeVersion: ">=1.23.0-0"\n');
        write(
            "chart/templates/stack.yaml",
            stack(
                `{{- if semverCompare ">=1.31.0-0" .Capabilities.KubeVersion.Version }}\n  commit: ${SHA}\n{{- else }}\n  branch: release\n{{- end }}\n`,
            ),
        );
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 0, r.err + r.out);
        // Pinned by commit: the chart saw a cluster of 1.31 or later.
        assert.deepStrictEqual(
            rows("r.json").filter((x) => x.policy === "pko-stack-prod-pinned-commit"),
            [],
        );
        assert.match(r.out, /^1 object\(s\)[ :]/m);
        // An older cluster, said on the command line, is still what the chart is checked against.
        const old = check([".", "--kube-version", "1.22"]);
        assert.strictEqual(old.code, 2);
        assert.match(
            old.err,
            /chart requires kubeVersion: >=1\.23\.0-0 which is incompatible with Kubernetes v1\.22\.0/,
        );
    });
    it("a finding names what syncs its object: the Application, or the ApplicationSet for a generated Application", () => {
        // One chart, two Applications (staging pinned by its values, production on a branch): the finding says which.
        write("chart/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write("chart/values.yaml", `pin: "commit: ${SHA}"\n`);
        write("chart/templates/stack.yaml", stack("  {{ .Values.pin }}\n  destroyOnFinalize: true\n", ""));
        write(
            "apps/staging.yaml",
            app("ledger-staging", "chart", `    helm:\n      releaseName: ledger\n`).replace(
                "namespace: pulumi\n",
                "namespace: staging\n",
            ),
        );
        write(
            "apps/production.yaml",
            app(
                "ledger-prod",
                "chart",
                `    helm:\n      releaseName: ledger\n      values: "pin: 'branch: release'"\n`,
            ),
        );
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
        assert.match(
            r.out,
            /resource: Stack\/pulumi\/ledger-production \(chart\/templates\/stack\.yaml:\d+:\d+; synced by Application argocd\/ledger-prod\)/,
        );
        const sarif = JSON.parse(fs.readFileSync(path.join(tmp, "r.sarif"), "utf8")).runs[0].results as {
            ruleId: string;
            properties: { syncedBy?: string };
        }[];
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
        assert.ok(
            rows("r.json").some(
                (x) => x.policy === "pko-stack-no-cluster-admin" && x.resource === "ClusterRoleBinding/ledger-admin",
            ),
        );
    });

    it("ApplicationSet list and git-directory generators create Applications; others are named and counted", () => {
        write("envs/prod/stack.yaml", stack("  branch: release\n", ""));
        write("envs/dev/readme.json", "{}\n");
        write(
            "appsets/ledger.yaml",
            gitAppSet("[{path: envs/*}, {path: envs/dev, exclude: true}]", "    - clusters: {}\n"),
        );
        const r = check([".", "--report", "json=r.json"]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        assert.ok(
            rows("r.json").some(
                (x) => x.policy === "pko-stack-prod-pinned-commit" && x.resource === "Stack/pulumi/ledger-production",
            ),
        );
        // The clusters generator fails closed on the set, at its field, in every report.
        assert.deepStrictEqual(
            rows("r.json")
                .filter((x) => x.policy === "argocd-app-rendered")
                .map((x) => [x.resource, x.line]),
            [["ApplicationSet/argocd/ledger", 9]], // its "- clusters" line,
        );
        // Said once, by the finding: not repeated on stderr.
        assert.match(
            (rows("r.json") as { policy: string; message?: string }[])
                .filter((x) => x.policy === "argocd-app-rendered")
                .map((x) => x.message)
                .join("\n"),
            /spec\.generators\[1\] \("clusters" generator\) is not expanded by check/,
        );
        assert.doesNotMatch(r.err, /is not expanded by check/);
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
        assert.deepStrictEqual(pinned.map((x) => x.resource).sort(), [
            "Stack/pulumi/ledger-production",
            "Stack/pulumi/ledger-qa",
        ]);
        assert.ok(
            pinned.every((x) => x.syncedBy !== undefined),
            JSON.stringify(pinned),
        );
    });

    it("goTemplate ApplicationSets execute as Go templates with Argo CD's functions, values and path prefix", () => {
        write("envs/Prod_EU/stack.yaml", stack("  branch: release\n", ""));
        write(
            "envs/dev/stack.yaml",
            stack(`  commit: ${SHA}\n`, "")
                .replace("ledger-production", "ledger-dev")
                .replace("myorg/ledger/production", "myorg/ledger/dev"),
        );
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
        const missing = check([".", "--format", "json"]);
        assert.strictEqual(missing.code, 1, missing.err + missing.out);
        // The reason is said once, by the finding (not again on stderr).
        const rendered = (r: { out: string }) =>
            (JSON.parse(r.out) as { projects: { findings: { policy: string; message: string }[] }[] }).projects
                .flatMap((p) => p.findings)
                .filter((f) => f.policy === "argocd-app-rendered")
                .map((f) => f.message)
                .join("\n");
        assert.match(
            rendered(missing),
            /spec\.template: 2 of the Applications of spec\.generators\[0\] do not render \(a template string does not execute \(a parameter it names does not exist\)\), so Argo CD creates none of them/,
        );
        assert.doesNotMatch(missing.err, /do not render/);
        // Hostile templates are bounded: a string that grows without end, an allocation of gigabytes (the helper's
        // address space is capped, so it ends, not the machine): one line, nothing of the template echoed.
        write("appsets/ledger.yaml", appset("", "{{ range until 1000000 }}ledger{{ end }}"));
        assert.match(
            rendered(check([".", "--format", "json"])),
            /spec\.template: 2 of the Applications of spec\.generators\[0\] do not render \(a template string renders more than 2097152 bytes\)/,
        );
        write("appsets/ledger.yaml", appset("", '{{ repeat 3000000000 "ab" }}'));
        const bomb = check(["."]);
        assert.strictEqual(bomb.code, 2, bomb.err);
        assert.strictEqual(bomb.err.split("\n").length, 2, bomb.err);
        assert.match(
            bomb.err,
            /^pko-guard: ApplicationSet "ledger" \(goTemplate\): appset-template failed: .*out of memory/,
        );
        // templatePatch is not applied: named, not expanded.
        write("appsets/ledger.yaml", appset("  templatePatch: |\n    spec: {}\n"));
        assert.match(rendered(check([".", "--format", "json"])), /spec\.templatePatch is not applied/);
    });

    it("git files and list elementsYaml generators: parameters as Argo CD computes them, in both syntaxes", () => {
        write(
            "envs/prod/config.json",
            '{"env": "prod", "cluster": {"namespace": "pulumi", "replicas": 1000000}, "tags": ["a", "b"]}\n',
        );
        write("envs/dev/config.yaml", "- env: dev\n  cluster: {namespace: dev}\n");
        write("envs/old/config.yaml", "env: old\n");
        write("stacks/prod/stack.yaml", stack("  branch: release\n", ""));
        write("stacks/old/stack.yaml", stack("  branch: release\n", "").replace("ledger-production", "ledger-old"));
        const set = (generator: string, template: string, extra = "") =>
            `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: ledger, namespace: argocd}\nspec:\n${extra}  generators:\n${generator}  template:\n${template}`;
        const names = (file: string) =>
            rows(file)
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit" && x.syncedBy !== undefined)
                .map((x) => [x.resource, x.syncedBy]);
        // Default syntax: the file's object flattened (numbers as Go prints them, lists by index), path parameters,
        // exclusions; Applications land in the set's namespace whatever the template says.
        write(
            "appsets/ledger.yaml",
            set(
                "    - git:\n        repoURL: https://example.com/repo.git\n        files: [{path: 'envs/*/config.*'}, {path: envs/old/config.yaml, exclude: true}]\n",
                "    metadata: {name: 'ledger-{{env}}-{{cluster.replicas}}-{{tags.1}}-{{path.basename}}-{{path.filenameNormalized}}', namespace: elsewhere}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: 'stacks/{{env}}'}\n      destination: {server: https://kubernetes.default.svc, namespace: '{{cluster.namespace}}'}\n",
            ),
        );
        const flat = check([".", "--report", "json=flat.json"]);
        assert.strictEqual(flat.code, 1, flat.err + flat.out);
        assert.deepStrictEqual(names("flat.json"), [
            ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod-1e+06-b-prod-config.json"],
        ]);
        fs.rmSync(path.join(tmp, "flat.json"));
        // goTemplate: the object as it is, the path parameters under pathParamPrefix.
        write(
            "appsets/ledger.yaml",
            set(
                "    - git:\n        repoURL: https://example.com/repo.git\n        pathParamPrefix: cfg\n        files: [{path: envs/prod/config.json}, {path: envs/old}]\n",
                "    metadata: {name: 'ledger-{{ .env }}-{{ .cfg.path.basename }}-{{ .cfg.path.filename | replace \".\" \"-\" }}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: 'stacks/{{ .env }}'}\n      destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n",
                "  goTemplate: true\n",
            ),
        );
        const go = check([".", "--report", "json=go.json"]);
        assert.strictEqual(go.code, 1, go.err + go.out);
        assert.deepStrictEqual(names("go.json").sort(), [
            ["Stack/pulumi/ledger-old", "Application argocd/ledger-old-old-config-yaml"],
            ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod-prod-config-json"],
        ]);
        fs.rmSync(path.join(tmp, "go.json"));
        // elementsYaml: appended to the elements.
        write(
            "appsets/ledger.yaml",
            set(
                "    - list:\n        elements: [{env: prod}]\n        elementsYaml: |\n          - env: old\n",
                "    metadata: {name: 'ledger-{{env}}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: 'stacks/{{env}}'}\n      destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n",
            ),
        );
        const yaml = check([".", "--report", "json=yaml.json"]);
        assert.strictEqual(yaml.code, 1, yaml.err + yaml.out);
        assert.deepStrictEqual(names("yaml.json").sort(), [
            ["Stack/pulumi/ledger-old", "Application argocd/ledger-old"],
            ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod"],
        ]);
        fs.rmSync(path.join(tmp, "yaml.json"));
        // A file or elementsYaml that is not a map (or list of maps) fails the generator, as in Argo CD: fail closed.
        write("envs/bad/config.yaml", "just a string\n");
        write(
            "appsets/ledger.yaml",
            set(
                "    - git:\n        repoURL: https://example.com/repo.git\n        files: [{path: 'envs/*/config.yaml'}]\n    - list:\n        elementsYaml: 'x: 1'\n",
                "    metadata: {name: 'ledger-{{env}}'}\n    spec: {project: default}\n",
            ),
        );
        const bad = check([".", "--report", "json=bad.json"]);
        assert.strictEqual(bad.code, 1, bad.err + bad.out);
        assert.deepStrictEqual(
            rows("bad.json")
                .filter((x) => x.policy === "argocd-app-rendered")
                .map((x) => (x as unknown as { field: string }).field),
            ["spec.generators[0].git.files", "spec.generators[1].list.elementsYaml"],
        );
        fs.rmSync(path.join(tmp, "bad.json"));
        // A set that would create more Applications than check's limit is bad input, one line.
        write(
            "appsets/ledger.yaml",
            set(
                `    - list:\n        elementsYaml: |\n${"          - {env: x}\n".repeat(10001)}`,
                "    metadata: {name: 'ledger-{{env}}'}\n    spec: {project: default}\n",
            ),
        );
        const big = check(["."]);
        assert.deepStrictEqual(
            [big.code, big.err],
            [
                2,
                'pko-guard: ApplicationSet "ledger": spec.generators[0] generates more than 10000 Applications (check\'s limit)\n',
            ],
        );
    });

    it("matrix and merge generators combine their children's parameters as Argo CD does, one nesting level deep", () => {
        write("envs/prod/config.json", '{"env": "prod", "ns": "pulumi"}\n');
        write("envs/dev/config.json", '{"env": "dev", "ns": "dev"}\n');
        write("stacks/prod/stack.yaml", stack("  branch: release\n", ""));
        const set = (generators: string, goTemplate = true) =>
            `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  goTemplate: ${goTemplate}\n  generators:\n${generators}  template:\n    metadata: {name: 'ledger-{{ .env }}-{{ .region }}-{{ .ns }}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/repo.git, path: '{{ .folder }}'}\n      destination: {server: https://kubernetes.default.svc, namespace: '{{ .ns }}'}\n`;
        const synced = (file: string) =>
            rows(file)
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit" && x.syncedBy !== undefined)
                .map((x) => [x.resource, x.syncedBy]);
        const found = (file: string) =>
            rows(file)
                .filter((x) => x.policy === "argocd-app-rendered")
                .map((x) => (x as unknown as { message: string }).message.replace(/; check could not.*$/, ""));
        // matrix: git files x list, the list templated with each file's parameters; the first generator's values win.
        write(
            "appsets/ledger.yaml",
            set(
                "    - matrix:\n        generators:\n          - git: {repoURL: https://example.com/repo.git, files: [{path: 'envs/*/config.json'}]}\n          - list: {elements: [{region: eu, env: ignored, folder: 'stacks/{{ .env }}'}]}\n",
            ),
        );
        const matrix = check([".", "--report", "json=m.json"]);
        assert.strictEqual(matrix.code, 1, matrix.err + matrix.out);
        assert.deepStrictEqual(synced("m.json"), [
            ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod-eu-pulumi"],
        ]);
        fs.rmSync(path.join(tmp, "m.json"));
        // merge: base sets overridden by later generators' sets with the same merge-key values.
        write(
            "appsets/ledger.yaml",
            set(
                "    - merge:\n        mergeKeys: [env]\n        generators:\n          - list: {elements: [{env: prod, region: eu, ns: staging, folder: stacks/prod}, {env: dev, region: eu, ns: dev, folder: stacks/dev}]}\n          - list: {elements: [{env: prod, ns: pulumi}]}\n",
            ),
        );
        const merge = check([".", "--report", "json=g.json"]);
        assert.strictEqual(merge.code, 1, merge.err + merge.out);
        assert.deepStrictEqual(synced("g.json"), [
            ["Stack/pulumi/ledger-production", "Application argocd/ledger-prod-eu-pulumi"],
        ]);
        fs.rmSync(path.join(tmp, "g.json"));
        // What Argo CD refuses fails closed: a matrix nested two levels, one of three generators, a duplicate merge key,
        // and (default syntax) two children that set one parameter differently.
        write(
            "appsets/ledger.yaml",
            set(
                "    - matrix:\n        generators:\n          - matrix:\n              generators:\n                - matrix: {generators: [{list: {elements: []}}, {list: {elements: []}}]}\n                - list: {elements: []}\n          - list: {elements: []}\n    - matrix: {generators: [{list: {elements: []}}, {list: {elements: []}}, {list: {elements: []}}]}\n    - merge: {mergeKeys: [env], generators: [{list: {elements: [{env: a}, {env: a}]}}, {list: {elements: []}}]}\n",
            ),
        );
        const refused = check([".", "--report", "json=r.json"]);
        assert.strictEqual(refused.code, 1, refused.err + refused.out);
        assert.deepStrictEqual(found("r.json"), [
            'ApplicationSet "argocd/ledger": spec.generators[0].matrix.generators[0].matrix.generators[0] nests matrix deeper than Argo CD allows (it fails the generator)',
            'ApplicationSet "argocd/ledger": spec.generators[1].matrix has 3 generators; Argo CD requires exactly two (it fails the generator)',
            'ApplicationSet "argocd/ledger": spec.generators[2].merge: two parameter sets of generators[0] have the same merge-key values, which fails the generator in Argo CD',
        ]);
        fs.rmSync(path.join(tmp, "r.json"));
        write(
            "appsets/ledger.yaml",
            set(
                "    - matrix: {generators: [{list: {elements: [{env: a}]}}, {list: {elements: [{env: b}]}}]}\n",
                false,
            ),
        );
        const conflict = check([".", "--report", "json=c.json"]);
        assert.strictEqual(conflict.code, 1, conflict.err + conflict.out);
        assert.deepStrictEqual(found("c.json"), [
            'ApplicationSet "argocd/ledger": spec.generators[0].matrix: both generators set the parameter "env" to different values, which fails the generator in Argo CD',
        ]);
        fs.rmSync(path.join(tmp, "c.json"));
        // A product past check's limit is bad input, one line, before it is built.
        const many = (n: number, key: string) =>
            `{list: {elements: [${Array.from({ length: n }, (_, i) => `{${key}: x${i}}`).join(", ")}]}}`;
        write(
            "appsets/ledger.yaml",
            set(`    - matrix: {generators: [${many(101, "env")}, ${many(100, "region")}]}\n`),
        );
        const big = check(["."]);
        assert.deepStrictEqual(
            [big.code, big.err],
            [
                2,
                'pko-guard: ApplicationSet "ledger": spec.generators[0] generates more than 10000 Applications (check\'s limit)\n',
            ],
        );
    });

    it("a source's type is decided at its root, as Argo CD discovers it; a recursive directory reads kustomizations below it as plain files", () => {
        // Argo CD applies ledger/sub/stack.yaml as written (pinned); the kustomization below the source's root,
        // which would prefix and patch it onto a branch, is never built, by this Application or with defaults.
        write("apps/ledger.yaml", app("ledger", "ledger", "    directory: {recurse: true}\n"));
        write("ledger/sub/stack.yaml", stack(`  commit: ${SHA}\n`, ""));
        write(
            "ledger/sub/kustomization.yaml",
            "resources: [stack.yaml]\nnamePrefix: patched-\npatches:\n  - target: {kind: Stack}\n    patch: |-\n      - op: add\n        path: /spec/branch\n        value: release\n",
        );
        const r = check([".", "-v"]);
        assert.strictEqual(r.code, 0, r.err + r.out);
        assert.doesNotMatch(r.out, /patched-/);
        assert.match(r.out, /^2 object\(s\) in /m); // the Application and the raw Stack
        // The root's files, in name order, the last one deciding: a name ending in Chart.yaml is Helm, a kustomization kustomize.
        const typeOf = (...files: string[]) => {
            const d = fs.mkdtempSync(path.join(tmp, "type-"));
            for (const f of files) fs.writeFileSync(path.join(d, f), "");
            fs.mkdirSync(path.join(d, "below"));
            fs.writeFileSync(path.join(d, "below", "kustomization.yaml"), "");
            return discoveredType(d);
        };
        assert.deepStrictEqual(
            [
                typeOf(),
                typeOf("Chart.yaml", "kustomization.yaml"),
                typeOf("kustomization.yaml", "zChart.yaml"),
                typeOf("MyChart.yaml"),
                typeOf("Kustomization"),
            ],
            ["directory", "kustomize", "helm", "helm", "kustomize"],
        );
    });

    it("what check cannot render fails closed on its Application, in every report, unless waived with allowFailClosed", () => {
        // A chart from a Helm repository, another repository's path, a plugin: each a mandatory finding on the
        // Application, naming the field; an empty not-rendered annotation written in the manifest hides nothing.
        write(
            "apps/remote.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: remote\n  namespace: argocd\n  annotations: {pko-guard/not-rendered: ''}\nspec:\n  project: default\n  sources:\n    - {repoURL: https://charts.example.com, chart: \"ledger\\e[31m\", targetRevision: 1.0.0}\n    - {repoURL: https://example.com/other.git, path: elsewhere}\n    - {repoURL: https://example.com/repo.git, path: ledger, plugin: {name: vault}}\n  destination: {server: https://kubernetes.default.svc, namespace: pulumi}\n",
        );
        write("ledger/stack.yaml", stack(`  commit: ${SHA}\n`));
        // --offline: what check cannot read without fetching (by default it fetches: gitops/fetch/).
        const r = check([
            ".",
            "--offline",
            "--cache-dir",
            path.join(tmp, ".no-cache"),
            "--report",
            "json=r.json",
            "--report",
            "sarif=r.sarif",
            "--report",
            "junit=r.xml",
        ]);
        assert.strictEqual(r.code, 1, r.err + r.out);
        const found = rows("r.json").filter((x) => x.policy === "argocd-app-rendered");
        assert.deepStrictEqual(
            found.map((x) => [
                x.resource,
                (x as unknown as { field: string }).field,
                (x as unknown as { status: string }).status,
            ]),
            [
                ["Application/argocd/remote", "spec.sources[0]", "blocking"],
                ["Application/argocd/remote", "spec.sources[1].repoURL", "blocking"],
                ["Application/argocd/remote", "spec.sources[2].plugin", "blocking"],
            ],
        );
        assert.ok(!(r.out + r.err).includes("\u001b"), "a control character reached the terminal");
        const sarif = fs.readFileSync(path.join(tmp, "r.sarif"), "utf8");
        assert.strictEqual(sarif.match(/argocd-app-rendered/g)!.length >= 3, true);
        assert.strictEqual(
            (fs.readFileSync(path.join(tmp, "r.xml"), "utf8").match(/spec\.sources\[\d\]/g) ?? []).length >= 3,
            true,
        );
        for (const f of ["r.json", "r.sarif", "r.xml"]) fs.rmSync(path.join(tmp, f));
        // Accepted by the existing waiver mechanism: only a waiver that allows fail-closed findings waives them.
        const config = (allowFailClosed: boolean) =>
            write(
                "config.json",
                JSON.stringify({
                    "argocd-app-rendered": {
                        waivers: [
                            { resource: "Application/argocd/remote", reason: "judged in its own CI", allowFailClosed },
                        ],
                    },
                }),
            );
        config(false);
        assert.strictEqual(check(["apps", "ledger", "--config", "config.json"]).code, 1);
        config(true);
        const waived = check(["apps", "ledger", "--config", "config.json"]);
        assert.strictEqual(waived.code, 0, waived.err + waived.out);
        assert.match(waived.out, /waived {2}argocd-app-rendered/);
    });

    it("a jsonnet file of a directory source is evaluated; never read otherwise", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write(
            "ledger/stack.jsonnet",
            `{ apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: "ledger-production", namespace: "pulumi" }, spec: { stack: "myorg/ledger/production", projectRepo: "https://github.com/myorg/ledger.git", branch: "release", refresh: true, environment: ["aws-credentials"] } }\n`,
        );
        assert.strictEqual(check(["."]).code, 1);
        fs.rmSync(path.join(tmp, "apps"), { recursive: true });
        // Nothing else in the repository: no object was read at all, and the line says why the .jsonnet was not.
        const alone = check(["."]);
        assert.deepStrictEqual(
            [alone.code, alone.err],
            [
                2,
                `pko-guard: no Kubernetes object found in . (0 file(s) read; 1 .jsonnet file(s) not evaluated: only an Application's source or a .jsonnet file named here is; repository root ${fs.realpathSync(tmp)})\n`,
            ],
        );
    });

    it("a .jsonnet file named on the command line is evaluated and judged; a .libsonnet is named as a library", () => {
        write(
            "lib/stack.libsonnet",
            `{ stack(name): { apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: name, namespace: "pulumi" }, spec: { stack: "myorg/ledger/production", projectRepo: "https://github.com/myorg/ledger.git", branch: "release", refresh: true, environment: ["aws-credentials"] } } }\n`,
        );
        write("lib/ledger.jsonnet", `local s = import "stack.libsonnet";\ns.stack("ledger-production")\n`);
        const named = check(["--format", "json", "lib/ledger.jsonnet"]);
        assert.strictEqual(named.code, 1, named.err);
        const findings = JSON.parse(named.out).projects[0].findings as {
            rule: string;
            resource: string;
            file: string;
        }[];
        assert.deepStrictEqual(
            findings.filter((f) => f.rule === "pko-stack-prod-pinned-commit").map((f) => [f.resource, f.file]),
            [["Stack/pulumi/ledger-production", "lib/ledger.jsonnet"]],
        );
        const library = check(["lib/stack.libsonnet"]);
        assert.deepStrictEqual(
            [library.code, library.err],
            [
                2,
                "pko-guard: lib/stack.libsonnet: a jsonnet library, evaluated only where a .jsonnet file imports it: name that file\n",
            ],
        );
        write("lib/bad.jsonnet", `error "boom"\n`);
        const bad = check(["lib/bad.jsonnet"]);
        assert.deepStrictEqual(
            [bad.code, bad.err],
            [2, "pko-guard: lib/bad.jsonnet (jsonnet): jsonnet failed: RUNTIME ERROR: boom\n"],
        );
    });

    it("a chart's template named on the command line: one line naming its chart, which renders it", () => {
        write("apps/Chart.yaml", "apiVersion: v2\nname: apps\nversion: 0.1.0\n");
        write("apps/templates/sub/stack.yaml", `{{- if true }}\n${stack(`  commit: ${SHA}\n`)}{{- end }}\n`);
        const template = check(["apps/templates/sub/stack.yaml"]);
        assert.deepStrictEqual(
            [template.code, template.err],
            [
                2,
                'pko-guard: apps/templates/sub/stack.yaml: a template of the Helm chart "apps", rendered only with its chart: name the chart\n',
            ],
        );
        const chart = check(["apps"]);
        assert.strictEqual(chart.code, 0, chart.err);
        assert.match(chart.out, /^1 object\(s\)[ :]/m);
    });

    it("a folder nothing renders that fails with defaults or cannot be fetched: exit 2 saying why check rendered it; --exclude leaves it", () => {
        write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: apps}\n");
        // What a config management plugin renders: a kustomization over a file the plugin writes first.
        write("plugin/kustomization.yaml", "resources: [all.yaml]\n");
        const walked = check(["."]);
        assert.strictEqual(walked.code, 2);
        assert.match(
            walked.err,
            /^pko-guard: plugin \(kustomize\): kustomize failed: .*; no Application of the run renders this folder, so check rendered it with defaults \(--exclude plugin if a config management plugin or an Application elsewhere renders it\)\n$/,
        );
        // Named on the command line, the folder is rendered because it was named: the tool's line alone.
        const named = check(["plugin"]);
        assert.strictEqual(named.code, 2);
        assert.match(named.err, /^pko-guard: plugin \(kustomize\): kustomize failed: [^;]*\n$/);
        const excluded = check([".", "--exclude", "plugin"]);
        assert.strictEqual(excluded.code, 0, excluded.err);
        // A remote base or chart dependency that cannot be fetched (here refused by the network policy, so nothing
        // is reached) says so too: an install kustomization or a chart whose Application is elsewhere.
        const hint = (dir: string) =>
            `; no Application of the run renders this folder, so check rendered it with defaults (--exclude ${dir} if a config management plugin or an Application elsewhere renders it)\n`;
        write("install/kustomization.yaml", "resources: [https://127.0.0.1:9/install.yaml]\n");
        const base = check([".", "--exclude", "plugin"]);
        assert.deepStrictEqual(
            [base.code, base.err],
            [
                2,
                "pko-guard: install (kustomize): a remote base: 127.0.0.1: refused, a loopback address; list the host with --allow-host 127.0.0.1:9 to fetch from it" +
                    hint("install"),
            ],
        );
        fs.rmSync(path.join(tmp, "install"), { recursive: true });
        write(
            "db/Chart.yaml",
            "apiVersion: v2\nname: db\nversion: 0.1.0\ndependencies:\n  - {name: mysql, version: 9.2.0, repository: https://127.0.0.1:9/charts}\n",
        );
        const dep = check([".", "--exclude", "plugin"]);
        assert.strictEqual(dep.code, 2);
        assert.match(
            dep.err,
            /^pko-guard: db \(helm chart\): dependency "mysql": [^\n]*; no Application of the run renders/,
        );
        assert.ok(dep.err.endsWith(hint("db")), dep.err);
    });

    it("helmCharts an Application renders: fails closed without argocd-cm's --enable-helm, rendered with it", () => {
        const chart = "charts/ledger-1.2.0/ledger";
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write(
            "ledger/kustomization.yaml",
            "helmCharts:\n  - {name: ledger, repo: https://charts.example.com, version: 1.2.0, releaseName: ledger}\n",
        );
        const reasons = (r: { out: string }) =>
            (
                JSON.parse(r.out) as {
                    projects: { findings: { policy: string; resource: string; message: string }[] }[];
                }
            ).projects[0].findings
                .filter((f) => f.policy === "argocd-app-rendered")
                .map((f) => [f.resource, f.message.replace(/; check could not.*$/, "")]);
        // No argocd-cm in the repository: Argo CD's setting is not known; one finding, never exit 2.
        const unknown = check([".", "--offline", "--format", "json"]);
        assert.strictEqual(unknown.code, 1, unknown.err);
        assert.doesNotMatch(unknown.err, /pko-guard:|enable-helm/);
        assert.deepStrictEqual(reasons(unknown), [
            [
                "Application/argocd/ledger",
                `Application "argocd/ledger": spec.source: the kustomization inflates Helm charts (helmCharts), which Argo CD builds only when argocd-cm's kustomize.buildOptions carries --enable-helm; check renders them when the repository holds that argocd-cm ConfigMap or the run says so (--kustomize-enable-helm), and does not guess this instance's setting`,
            ],
        ]);
        // Told so on the command line (the argocd-cm is kept elsewhere): the chart is what is missing now.
        const told = check([".", "--offline", "--kustomize-enable-helm", "--format", "json"]);
        assert.strictEqual(told.code, 1, told.err);
        assert.match(
            reasons(told)[0][1],
            /helmCharts: chart "ledger" from "https:\/\/charts\.example\.com\/" is fetched/,
        );
        // argocd-cm enables it, the chart is not vendored and --offline has nothing cached: fails closed, naming where.
        write(
            "argocd/argocd-cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n  kustomize.buildOptions: --load-restrictor LoadRestrictionsRootOnly --enable-helm\n",
        );
        const offline = check([".", "--offline", "--format", "json"]);
        assert.strictEqual(offline.code, 1, offline.err);
        assert.deepStrictEqual(reasons(offline), [
            [
                "Application/argocd/ledger",
                `Application "argocd/ledger": spec.source: helmCharts: chart "ledger" from "https://charts.example.com/" is fetched over the network, which check does not do in this run (--offline, nothing cached); vendor it into "ledger/${chart}"`,
            ],
        ]);
        // Vendored where kustomize's generator looks: rendered with --enable-helm, its Stack judged in the destination.
        const helm = findTool("helm")!.path;
        fs.mkdirSync(path.join(tmp, "ledger", path.dirname(chart)), { recursive: true });
        const made = spawnSync(helm, ["create", path.join(tmp, "ledger", chart)], { encoding: "utf8" });
        assert.strictEqual(made.status, 0, made.stderr);
        const templates = path.join(tmp, "ledger", chart, "templates");
        fs.rmSync(templates, { recursive: true });
        write(`ledger/${chart}/templates/stack.yaml`, stack(""));
        const vendored = check([".", "--offline", "--format", "json"]);
        assert.strictEqual(vendored.code, 1, vendored.err);
        const findings = (
            JSON.parse(vendored.out) as { projects: { findings: { policy: string; resource: string }[] }[] }
        ).projects[0].findings;
        assert.deepStrictEqual(reasons(vendored), []);
        assert.deepStrictEqual(
            findings.filter((f) => f.policy === "pko-stack-prod-pinned-commit").map((f) => f.resource),
            ["Stack/pulumi/ledger-production"],
        );
        // The scratch copy's kustomize edits never reach the repository.
        assert.deepStrictEqual(fs.readdirSync(path.join(tmp, "ledger", "charts")), ["ledger-1.2.0"]);
        // Reached by no Application: rendered with defaults, as before (exit 2, saying why check rendered it).
        fs.rmSync(path.join(tmp, "apps"), { recursive: true });
        const walked = check([".", "--offline"]);
        assert.strictEqual(walked.code, 2);
        assert.match(
            walked.err,
            /^pko-guard: ledger \(kustomize\): kustomize failed: .*must specify --enable-helm; no Application of the run renders this folder/,
        );
    });

    it("takes argocd-cm as the repository's kustomization of Argo CD builds it: a patch file, inline, a generator", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write("ledger/kustomization.yaml", "helmCharts:\n  - {name: ledger, releaseName: ledger}\n");
        write("ledger/charts/ledger/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 1.2.0\n");
        write("ledger/charts/ledger/values.yaml", "{}\n");
        write("ledger/charts/ledger/templates/stack.yaml", stack(""));
        // Argo CD installed by a kustomization: its install manifests hold argocd-cm without build options.
        write(
            "argocd/install.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  labels: {app.kubernetes.io/part-of: argocd}\ndata: {}\n",
        );
        const judged = () => {
            const r = check([".", "--offline", "--format", "json"]);
            assert.strictEqual(r.code, 1, r.err);
            return (
                JSON.parse(r.out) as { projects: { findings: { policy: string; resource: string }[] }[] }
            ).projects[0].findings
                .filter((f) => f.policy === "pko-stack-prod-pinned-commit" || f.policy === "argocd-app-rendered")
                .map((f) => `${f.policy} ${f.resource}`);
        };
        const enabled = ["pko-stack-prod-pinned-commit Stack/pulumi/ledger-production"];
        const unknown = ["argocd-app-rendered Application/argocd/ledger"];
        const install = (rest: string) =>
            write("argocd/kustomization.yaml", `namespace: argocd\nresources: [install.yaml]\n${rest}`);
        // A strategic merge patch in a file: as written, one argocd-cm has no options; as built, it has them.
        write(
            "argocd/argocd-cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  kustomize.buildOptions: --enable-helm\n",
        );
        install("patches:\n  - path: argocd-cm.yaml\n");
        assert.deepStrictEqual(judged(), enabled);
        fs.rmSync(path.join(tmp, "argocd/argocd-cm.yaml"));
        // An inline patch: no file holds the setting.
        install(
            "patches:\n  - patch: |-\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: argocd-cm}\n      data: {kustomize.buildOptions: --enable-helm}\n",
        );
        assert.deepStrictEqual(judged(), enabled);
        // A configMapGenerator merging into it.
        install(
            "generatorOptions: {disableNameSuffixHash: true}\nconfigMapGenerator:\n  - name: argocd-cm\n    behavior: merge\n    literals: [kustomize.buildOptions=--enable-helm]\n",
        );
        assert.deepStrictEqual(judged(), enabled);
        // A patch that sets other options: the build says Helm is off; not guessed.
        install(
            "patches:\n  - patch: |-\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: argocd-cm}\n      data: {kustomize.buildOptions: --load-restrictor LoadRestrictionsNone}\n",
        );
        assert.deepStrictEqual(judged(), unknown);
    });

    it("bad input: missing tool, remote base, a failing chart (no value echoed), a timeout: one line, exit 2", () => {
        write("k/kustomization.yaml", "resources: [stack.yaml]\n");
        write("k/stack.yaml", stack(`  commit: ${SHA}\n`));
        const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-notools-"));
        try {
            const noTools = check(["k"], {
                ...process.env,
                PATH: path.dirname(process.execPath),
                PKO_GUARD_TOOLCHAIN_BIN: empty,
            });
            assert.strictEqual(noTools.code, 2);
            assert.match(
                noTools.err,
                /^pko-guard: k \(kustomize\) needs kustomize, which is not installed: .*run: bash \S+\/toolchain\/install\.sh kustomize\n$/,
            );
        } finally {
            fs.rmSync(empty, { recursive: true, force: true });
        }
        write("r/kustomization.yaml", "resources: [https://github.com/example/repo//base?ref=main]\n");
        // --offline with an empty cache: today's line exactly (check fetches by default: gitops/fetch/).
        const remote = check(["r", "--offline", "--cache-dir", path.join(tmp, ".no-cache")]);
        assert.strictEqual(remote.code, 2);
        assert.match(
            remote.err,
            /^pko-guard: r \(kustomize\): a remote base needs the network, which check does not use/,
        );
        write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
        write("c/values.yaml", `token: ${CANARY}\n`);
        write("c/templates/x.yaml", '{{ fail (printf "bad token %s" .Values.token) }}\n');
        const failing = check(["c"]);
        assert.strictEqual(failing.code, 2);
        assert.match(failing.err, /^pko-guard: c \(helm chart\): helm failed: /);
        assert.ok(!(failing.err + failing.out).includes(CANARY), failing.err);
        assert.strictEqual(failing.err.trim().split("\n").length, 1);
        // kustomize quotes a generator's config over several lines, its reason after it: the reason, never the config.
        write(
            "h/kustomization.yaml",
            `helmCharts:\n  - name: ${CANARY}\n    repo: https://charts.example.com\n    version: 1.0.0\n`,
        );
        const helmCharts = check(["h"]);
        assert.strictEqual(helmCharts.code, 2);
        assert.match(
            helmCharts.err,
            /^pko-guard: h \(kustomize\): kustomize failed: .*HelmChartInflationGenerator.*`…`: must specify --enable-helm\n$/,
        );
        assert.ok(!(helmCharts.err + helmCharts.out).includes(CANARY), helmCharts.err);
    });

    it("Chart.yaml and kustomization files are read as Helm and kustomize read them (YAML 1.1, merge keys, a repeated key)", () => {
        // Helm takes a repeated key (its last value): so does check (a YAML 1.2 parse refused it, as an internal error).
        write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\nname: c\n");
        write("c/templates/stack.yaml", stack(`  commit: ${SHA}\n`));
        const repeated = check(["c"]);
        assert.strictEqual(repeated.err, "");
        assert.strictEqual(repeated.code, 0);
        assert.match(
            repeated.out,
            /resource: Stack\/pulumi\/ledger-production \(c\/templates\/stack\.yaml:7:3\)[^]*\n1 object\(s\): 0 from 0 file\(s\) as written, 1 rendered from 1 source\(s\) \(0 of kinds no rule reads\); 1 violation\(s\), 0 blocking: PASS\n$/,
        );
        // A dependency from a chart repository reached through a merge key is still the dependency line.
        write(
            "c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 0.1.0\nshared: &dep\n  name: ledger\n  repository: https://charts.example.com\ndependencies:\n  - <<: *dep\n",
        );
        const merged = check(["c", "--offline", "--cache-dir", path.join(tmp, ".no-cache")]);
        assert.strictEqual(merged.code, 2);
        assert.strictEqual(
            merged.err,
            'pko-guard: c (helm chart): dependency "ledger" comes from a chart repository (helm dependency build needs the network, which check does not use); vendor it into charts/\n',
        );
        // A Chart.yaml that does not decode is helm's to refuse (one line, exit 2), never an internal error.
        write(
            "c/Chart.yaml",
            `apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n  - name: x\n    repository: "https://${CANARY}@charts.example.com\n`,
        );
        const broken = check(["c"]);
        assert.strictEqual(broken.code, 2);
        assert.match(broken.err, /^pko-guard: c \(helm chart\): helm failed: cannot load Chart\.yaml: .*\n$/);
        assert.ok(!broken.err.includes(CANARY) && !broken.err.includes("internal error"), broken.err);
        write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies: [~]\n");
        const nullDep = check(["c"]);
        assert.strictEqual(nullDep.code, 2);
        assert.match(
            nullDep.err,
            /^pko-guard: c \(helm chart\): helm failed: validation: dependencies must not contain empty or null nodes\n$/,
        );
        // A remote base behind a merge key is refused before kustomize runs: the line says why, never the URL (it can hold a token).
        write(
            "r/kustomization.yaml",
            `<<: {resources: ["https://x:${CANARY}@github.com/example/repo//base?ref=main"]}\n`,
        );
        const remote = check(["r", "--offline", "--cache-dir", path.join(tmp, ".no-cache")]);
        assert.strictEqual(remote.code, 2);
        assert.strictEqual(
            remote.err,
            "pko-guard: r (kustomize): a remote base needs the network, which check does not use; vendor it into the repository\n",
        );
        // Fetching (the default), a URL that holds credentials is refused before anything is resolved, never shown.
        const online = check(["r", "--cache-dir", path.join(tmp, ".no-cache")]);
        assert.strictEqual(online.code, 2);
        assert.strictEqual(
            online.err,
            "pko-guard: r (kustomize): a remote base: https://github.com/example/repo: refused, it holds credentials (keep them in Helm's, Docker's or git's own configuration, never in a URL)\n",
        );
    });

    it("jsonnet: a remote import or one outside the repository is refused before evaluating", () => {
        write("apps/ledger.yaml", app("ledger", "ledger"));
        write("ledger/stack.jsonnet", 'local lib = import "https://example.com/lib.libsonnet"; {}\n');
        // Argo CD's jsonnet opens only the repository's files: the Application renders nothing there, and fails
        // closed; the file named on the command line is exit 2.
        const cannot =
            "an import cannot be opened in the repository (Argo CD's jsonnet reads only the repository's files and its libs folders, never a URL: vendor it)";
        const remote = check(["."]);
        assert.strictEqual(remote.code, 1, remote.err);
        assert.ok(
            remote.out.replace(/\s+/g, " ").includes(`spec.source: jsonnet file "ledger/stack.jsonnet": ${cannot}`),
            remote.out,
        );
        const direct = check(["ledger/stack.jsonnet"]);
        assert.deepStrictEqual(
            [direct.code, direct.err],
            [2, `pko-guard: ledger/stack.jsonnet (jsonnet): ${cannot}\n`],
        );
        // Outside the repository, however it is reached: directly, from a nested import, through a verbatim
        // string, or through a link inside the repository; nothing of the file is shown.
        const outsideFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-outside-")), "secret.txt");
        fs.writeFileSync(outsideFile, CANARY);
        try {
            const rel = path.relative(path.join(tmp, "ledger"), outsideFile);
            const cases: [string, () => void][] = [
                [
                    "direct",
                    () =>
                        write(
                            "ledger/stack.jsonnet",
                            `local p = importstr "${rel}"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: p } }\n`,
                        ),
                ],
                [
                    "nested",
                    () => {
                        write("ledger/lib/inner.libsonnet", `{ v: importstr "../${rel}" }\n`);
                        write(
                            "ledger/stack.jsonnet",
                            'local l = import "lib/inner.libsonnet"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: l.v } }\n',
                        );
                    },
                ],
                [
                    "verbatim",
                    () =>
                        write(
                            "ledger/stack.jsonnet",
                            `local p = importstr@"${outsideFile}"; { apiVersion: "v1", kind: "ConfigMap", metadata: { name: p } }\n`,
                        ),
                ],
            ];
            for (const [name, arrange] of cases) {
                arrange();
                const outside = check(["."]);
                assert.strictEqual(outside.code, 1, name);
                assert.ok(
                    outside.out
                        .replace(/\s+/g, " ")
                        .includes(
                            `spec.source: jsonnet file "ledger/stack.jsonnet": an import reaches outside the repository (Argo CD refuses it; the repository root in use is ${fs.realpathSync(tmp)}; --repo-root sets another)`,
                        ),
                    name,
                );
                assert.ok(!outside.out.includes(CANARY), name);
                const named = check(["ledger/stack.jsonnet"]);
                assert.deepStrictEqual(
                    [named.code, named.err],
                    [
                        2,
                        `pko-guard: ledger/stack.jsonnet (jsonnet): an import reaches outside the repository (Argo CD refuses it; the repository root in use is ${fs.realpathSync(tmp)}; --repo-root sets another)\n`,
                    ],
                    name,
                );
            }
            // A link out of the repository, anywhere in it, stops rendering as it stops Argo CD's repo server:
            // here a chart that would put the file into a Stack's repository URL (which a finding quotes).
            write("ledger/stack.jsonnet", "[]\n"); // yields nothing (`{}` has no kind: Argo CD fails it)
            write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
            write("chart/templates/stack.yaml", stack("  branch: '{{ .Files.Get \"files/leak\" }}'\n"));
            fs.mkdirSync(path.join(tmp, "chart", "files"));
            fs.symlinkSync(
                path.relative(path.join(tmp, "chart", "files"), outsideFile),
                path.join(tmp, "chart", "files", "leak"),
            );
            const linked = check(["."]);
            assert.deepStrictEqual(
                [linked.code, linked.err],
                [
                    2,
                    `pko-guard: chart/files/leak: a symbolic link that points outside the repository (Argo CD refuses to render a repository holding one; the repository root in use is ${fs.realpathSync(tmp)}; --repo-root sets another)\n`,
                ],
            );
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
