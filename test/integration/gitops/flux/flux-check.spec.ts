/**
 * `pko-guard check` on Flux repositories, as a user runs it (a temporary repository outside this one): Flux
 * Kustomizations built by the toolchain's flux-build (Flux's own fluxcd/pkg/kustomize; without it these tests fail,
 * never skip), entry points as clusters, files Flux renders judged as rendered, a self-managed flux-system placed
 * once, Flux's strict substitution, the substitution opt-out, another repository's source failing closed, the
 * source's artifact as source-controller archives it (.sourceignore, spec.ignore, Flux's default excludes); and
 * the flux CLI's `flux build kustomization` (toolchain/flux, built by `npm run setup`) as the reference for what
 * flux-build gives.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { CLI_ENTRY } from "../../../../support/paths";
import { findTool } from "../../../../gitops/render/tools";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
const REPO = "https://github.com/myorg/fleet.git";

const gitRepository = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: ${REPO}, ref: {branch: main}}
`;
const kustomization = (name: string, p: string, extra = "") => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: flux-system}
spec:
  interval: 10m
  path: ${p}
  prune: false
  sourceRef: {kind: GitRepository, name: flux-system}
${extra}`;
const stack = (name: string, stackName: string, ref: string) => `apiVersion: pulumi.com/v1
kind: Stack
metadata: {name: ${name}, namespace: pulumi}
spec:
  stack: ${stackName}
  projectRepo: https://github.com/myorg/ledger.git
  ${ref}
`;

/** A HelmRelease of the ledger chart in the GitRepository above; `tail` ends its chart spec. */
const ledgerRelease = (tail = "") => `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ledger, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: pulumi
  chart:
    spec:
      chart: ./charts/ledger
      sourceRef: {kind: GitRepository, name: flux-system}
${tail}`;

describe("pko-guard check applies Flux as Flux does", function () {
    this.timeout(180000);
    let tmp: string;
    const write = (rel: string, text: string) => {
        const f = path.join(tmp, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
    };
    const check = (args: string[] = []) => {
        const report = path.join(tmp, "..", `report-${path.basename(tmp)}.json`);
        const r = spawnSync(
            process.execPath,
            [CLI_ENTRY, "check", "--repo-root", ".", "--repository", REPO, ...args, ".", "--report", `json=${report}`],
            { cwd: tmp, encoding: "utf8", timeout: 120000 },
        );
        const rows = fs.existsSync(report)
            ? (JSON.parse(fs.readFileSync(report, "utf8")).projects[0].findings as {
                  policy: string;
                  resource: string;
                  file: string;
                  syncedBy?: string;
                  message: string;
              }[])
            : [];
        fs.rmSync(report, { force: true });
        return { code: r.status, err: r.stderr, out: r.stdout, rows };
    };

    before(() => assert.ok(findTool("flux-build"), "flux-build is missing: run npm run setup"));
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-flux-"));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("judges a bootstrap layout per cluster: generated kustomizations, nested ones, no duplicate", () => {
        for (const c of ["production", "staging"]) {
            write(
                `clusters/${c}/flux-system/gotk-sync.yaml`,
                `${gitRepository}---\n${kustomization("flux-system", `./clusters/${c}`)}`,
            );
            write(`clusters/${c}/flux-system/kustomization.yaml`, "resources: [gotk-sync.yaml]\n");
            write(`clusters/${c}/apps.yaml`, kustomization("apps", `./apps/${c}`));
        }
        // No kustomization at apps/<cluster>: Flux generates one; the nested folder with one is a single entry.
        write("apps/production/ledger.yaml", stack("ledger", "myorg/ledger/production", "branch: release"));
        write("apps/production/nested/kustomization.yaml", "resources: [billing.yaml]\n");
        write("apps/production/nested/billing.yaml", stack("billing", "myorg/billing/production", `commit: ${SHA}`));
        write("apps/staging/ledger.yaml", stack("ledger", "myorg/ledger/staging", "branch: main"));
        const r = check();
        assert.strictEqual(r.code, 1, r.err);
        const pinned = r.rows.filter((x) => x.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((x) => [x.resource, x.file, x.syncedBy]),
            [
                [
                    "Stack/pulumi/ledger",
                    "apps/production/ledger.yaml",
                    "Flux Kustomization flux-system/apps via Flux Kustomization flux-system/flux-system",
                ],
            ],
        );
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "pko-guard-duplicate-object"),
            [],
            "each cluster's copies are its own",
        );
    });

    it("a cluster folder before flux bootstrap: the finding says where bootstrap writes the source", () => {
        // A template repository (stefanprodan/gitops-istio): clusters/my-cluster names bootstrap's source, which
        // `flux bootstrap --path=clusters/my-cluster` writes on first use.
        write("clusters/my-cluster/apps.yaml", kustomization("apps", "./apps"));
        write("apps/ledger.yaml", stack("ledger", "myorg/ledger/production", `commit: ${SHA}`));
        let r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "argocd-app-rendered").map((x) => [x.resource, x.file]),
            [["Kustomization/flux-system/apps", "clusters/my-cluster/apps.yaml"]],
        );
        assert.match(
            r.rows.find((x) => x.policy === "argocd-app-rendered")!.message,
            /spec\.sourceRef names GitRepository "flux-system\/flux-system", which is not among the objects check read, so what it applies is not known; flux bootstrap writes it into "clusters\/my-cluster\/flux-system\/gotk-sync\.yaml": commit that file \(bootstrap's placeholder is enough\) and check reads this repository for it;/,
        );
        write("clusters/my-cluster/flux-system/gotk-sync.yaml", "# flux bootstrap writes this file\n");
        r = check();
        assert.strictEqual(r.code, 0, `${r.err}\n${r.out}`);
    });

    it("a Kustomization with kubeConfig reads its source in its own cluster and applies to the other one", () => {
        // A hub cluster (flux2-hub-spoke-example's layout): bootstrap's placeholder, and per-spoke Kustomizations
        // in the hub whose kubeConfig sends what they build to the spoke; the source is the hub's flux-system.
        write("hub/flux-system/gotk-sync.yaml", "# flux bootstrap writes this file\n");
        for (const c of ["production", "staging"]) {
            write(
                `hub/${c}.yaml`,
                `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${c}}\n---\n` +
                    kustomization("apps", `./clusters/${c}`, "  kubeConfig: {secretRef: {name: cluster-kubeconfig}}\n")
                        .replace("prune: false", "prune: true")
                        .replace("namespace: flux-system}", `namespace: ${c}}`)
                        .replace("name: flux-system}", "name: flux-system, namespace: flux-system}"),
            );
            write(`clusters/${c}/kustomization.yaml`, "resources: [../../deploy]\n");
        }
        write("deploy/kustomization.yaml", "resources: [ledger.yaml]\n");
        write(
            "deploy/ledger.yaml",
            stack("ledger", "myorg/ledger/production", "branch: release\n  destroyOnFinalize: true"),
        );
        const r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "argocd-app-rendered"),
            [],
            "the hub's flux-system source is found",
        );
        // Each Kustomization is judged with what it applies: it prunes a production Stack that destroys on deletion.
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "argocd-app-pko-sync-order").map((x) => x.resource),
            ["Kustomization/production/apps", "Kustomization/staging/apps"],
        );
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "pko-stack-prod-pinned-commit").map((x) => [x.file, x.syncedBy]),
            [
                ["deploy/ledger.yaml", "Flux Kustomization production/apps"],
                ["deploy/ledger.yaml", "Flux Kustomization staging/apps"],
            ],
        );
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "pko-guard-duplicate-object"),
            [],
        );
    });

    it("substitutes strictly, leaves an opted-out object as written, and fails closed on another repository", () => {
        write(
            "clusters/prod/apps.yaml",
            `${gitRepository}---\n${kustomization("apps", "./apps", "  postBuild:\n    substitute: {env: production}\n")}`,
        );
        write(
            "apps/stacks.yaml",
            `${stack("ledger", "myorg/ledger/${env}", `commit: ${SHA}`)}---\n` +
                `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: literal\n  namespace: pulumi\n` +
                `  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\n` +
                `spec: {stack: "myorg/literal/\${env}", projectRepo: "https://github.com/myorg/x.git", branch: main}\n`,
        );
        let r = check();
        // ${env} became production on ledger (pinned: passes); literal keeps "${env}" (not production: passes).
        assert.strictEqual(r.code, 0, `${r.err}\n${r.out}`);
        write("apps/more.yaml", stack("more", "myorg/more/${region}", `commit: ${SHA}`));
        r = check();
        assert.strictEqual(r.code, 2);
        assert.match(
            r.err,
            /Kustomization "flux-system\/apps" \(flux build\): flux-build failed: post build failed for Stack more: .*variable not set \(strict mode\)/,
        );
        fs.rmSync(path.join(tmp, "apps/more.yaml"));
        write(
            "clusters/prod/apps.yaml",
            `${gitRepository.replace(REPO, "https://github.com/other/repo.git")}---\n${kustomization("apps", "./apps")}`,
        );
        r = check();
        assert.strictEqual(r.code, 1);
        const rendered = r.rows.filter((x) => x.policy === "argocd-app-rendered");
        assert.strictEqual(rendered.length, 1);
        assert.strictEqual(rendered[0].resource, "Kustomization/flux-system/apps");
        assert.match(rendered[0].message, /url "https:\/\/github\.com\/other\/repo\.git" is another repository/);
    });

    it("builds from the source's artifact: Flux's default excludes, or the .sourceignore files and spec.ignore", () => {
        write("clusters/prod/apps.yaml", `${gitRepository}---\n${kustomization("apps", "./")}`);
        write("apps/ledger.yaml", stack("ledger", "myorg/ledger/production", "branch: main"));
        write("apps/drafts/next.yaml", stack("next", "myorg/next/production", "branch: next"));
        // A GitHub workflow is YAML but no Kubernetes object: in the artifact, the generated kustomization fails.
        write(".github/workflows/ci.yaml", "on: push\njobs: {}\n");
        // What the working tree installs is not in a checkout, so not in the artifact either.
        write("node_modules/tool/config.yaml", "on: push\n");
        const pinned = (rows: { policy: string; resource: string }[]) =>
            rows.filter((x) => x.policy === "pko-stack-prod-pinned-commit").map((x) => x.resource);
        // No ignore file: the default excludes leave .github/ out.
        let r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(pinned(r.rows), ["Stack/pulumi/ledger", "Stack/pulumi/next"]);
        // A .sourceignore replaces the defaults (only the VCS ones stay): .github/ is in the artifact again.
        write("apps/.sourceignore", "drafts/\n");
        r = check();
        assert.strictEqual(r.code, 2, r.out);
        assert.match(r.err, /Kustomization "flux-system\/apps" \(flux build\): flux-build failed: .*ci\.yaml/);
        write(".sourceignore", "# CI is not applied\n/.github/\n");
        r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(pinned(r.rows), ["Stack/pulumi/ledger"], "the ignored draft is not judged");
        // spec.ignore adds to the .sourceignore files (root-relative): nothing production is left.
        write(
            "clusters/prod/apps.yaml",
            `${gitRepository.replace("ref: {branch: main}", "ref: {branch: main}, ignore: /apps/ledger.yaml")}---\n` +
                kustomization("apps", "./"),
        );
        r = check();
        assert.strictEqual(r.code, 0, `${r.err}\n${r.out}`);
        assert.deepStrictEqual(pinned(r.rows), []);
        // A path the artifact does not hold at all: kustomize-controller cannot build it, nor can check.
        write(
            "clusters/prod/apps.yaml",
            `${gitRepository.replace("ref: {branch: main}", "ref: {branch: main}, ignore: /apps/")}---\n` +
                kustomization("apps", "./apps"),
        );
        r = check();
        assert.strictEqual(r.code, 2, r.out);
        assert.strictEqual(
            r.err,
            `pko-guard: Kustomization "flux-system/apps" (flux build): spec.path "./apps" is not in the source's artifact (its files are all ignored)\n`,
        );
    });

    it("builds each source's artifact from the same checkout: one source's ignored files are another's", () => {
        const source = (name: string, ignore: string) =>
            `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: ${name}, namespace: flux-system}\nspec: {interval: 1m, url: ${REPO}, ref: {branch: main}${ignore}}\n`;
        const apps = (name: string) => kustomization("apps", "./apps").replace("name: flux-system}", `name: ${name}}`);
        write(
            "clusters/a/apps.yaml",
            `${source("drafts-left-out", ", ignore: drafts/")}---\n${apps("drafts-left-out")}`,
        );
        write("clusters/b/apps.yaml", `${source("everything", "")}---\n${apps("everything")}`);
        write("apps/ledger.yaml", stack("ledger", "myorg/ledger/production", "branch: main"));
        write("apps/drafts/next.yaml", stack("next", "myorg/next/production", "branch: next"));
        const r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(
            r.rows
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit")
                .map((x) => `${x.resource} ${x.file}`)
                .sort(),
            [
                "Stack/pulumi/ledger apps/ledger.yaml",
                "Stack/pulumi/ledger apps/ledger.yaml",
                "Stack/pulumi/next apps/drafts/next.yaml",
            ],
        );
        assert.ok(fs.existsSync(path.join(tmp, "apps/drafts/next.yaml")), "the checkout is never changed");
    });

    it("renders a HelmRelease's chart from the GitRepository's artifact: .sourceignore and spec.ignore apply", () => {
        const release = ledgerRelease();
        write("clusters/prod/ledger.yaml", `${gitRepository}---\n${release}`);
        write("charts/ledger/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        write("charts/ledger/values.yaml", `commit: ${SHA}\n`);
        const template = (name: string) =>
            stack(
                name,
                `myorg/${name}/production`,
                "{{ if .Values.commit }}commit: {{ .Values.commit }}{{ else }}branch: main{{ end }}",
            );
        write("charts/ledger/templates/stack.yaml", template("ledger"));
        write(
            "charts/ledger/templates/drafts/next.yaml",
            template("next").replace(/commit: \{\{[^}]*\}\}/, "branch: next"),
        );
        const judged = (rows: { policy: string; resource: string; message: string }[]) =>
            rows
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit" || x.policy === "argocd-app-rendered")
                .map((x) => `${x.policy} ${x.resource}`);
        // No ignore pattern: Flux's default excludes only; the draft template is in the chart.
        let r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(judged(r.rows), ["pko-stack-prod-pinned-commit Stack/pulumi/next"]);
        // A .sourceignore in the chart's folder leaves the draft out of the artifact, so out of the chart.
        write("charts/ledger/.sourceignore", "templates/drafts/\n");
        r = check();
        assert.strictEqual(r.code, 0, `${r.err}\n${r.out}`);
        assert.deepStrictEqual(judged(r.rows), []);
        // spec.ignore leaves the chart's values.yaml out: the template's default (a branch) is what is applied.
        write(
            "clusters/prod/ledger.yaml",
            `${gitRepository.replace("ref: {branch: main}", "ref: {branch: main}, ignore: /charts/ledger/values.yaml")}---\n${release}`,
        );
        r = check();
        assert.strictEqual(r.code, 1, r.err);
        assert.deepStrictEqual(judged(r.rows), ["pko-stack-prod-pinned-commit Stack/pulumi/ledger"]);
        assert.deepStrictEqual(
            r.rows.filter((x) => x.policy === "pko-stack-prod-pinned-commit").map((x) => x.file),
            ["charts/ledger/templates/stack.yaml"],
            "attributed to the template as written",
        );
        // A Chart.yaml the source leaves out: no chart in the artifact, so nothing known is applied (fails closed).
        write("charts/ledger/.sourceignore", "Chart.yaml\n");
        r = check();
        assert.strictEqual(r.code, 1, r.err);
        const closed = r.rows.filter((x) => x.policy === "argocd-app-rendered");
        assert.deepStrictEqual(
            closed.map((x) => x.resource),
            ["HelmRelease/flux-system/ledger"],
        );
        assert.match(closed[0].message, /is not a chart in the source's artifact/);
        assert.ok(fs.existsSync(path.join(tmp, "charts/ledger/values.yaml")), "the checkout is never changed");
    });

    it("replaces the chart's values with its valuesFiles, merged in order, as source-controller builds the chart", () => {
        const release = (valuesFiles: string, extra = "") =>
            ledgerRelease(`      valuesFiles: ${valuesFiles}\n${extra}`);
        write("charts/ledger/Chart.yaml", "apiVersion: v2\nname: ledger\nversion: 0.1.0\n");
        // The chart's own values pin the Stack; values-prod.yaml names the stack, and pins nothing.
        write("charts/ledger/values.yaml", `commit: ${SHA}\nstage: staging\n`);
        write("charts/ledger/values-prod.yaml", "stage: production\n");
        write(
            "charts/ledger/templates/stack.yaml",
            stack(
                "ledger",
                "myorg/ledger/{{ .Values.stage }}",
                "{{ if .Values.commit }}commit: {{ .Values.commit }}{{ else }}branch: main{{ end }}",
            ),
        );
        const judged = (files: string, extra = "") => {
            write("clusters/prod/ledger.yaml", `${gitRepository}---\n${release(files, extra)}`);
            const r = check();
            return r.rows
                .filter((x) => x.policy === "pko-stack-prod-pinned-commit" || x.policy === "argocd-app-rendered")
                .map((x) => `${x.policy} ${x.resource}`);
        };
        // values.yaml is not among them: it is replaced, so the commit is gone.
        assert.deepStrictEqual(judged("[charts/ledger/values-prod.yaml]"), [
            "pko-stack-prod-pinned-commit Stack/pulumi/ledger",
        ]);
        // Listed first, the chart's values are merged under the later file: pinned.
        assert.deepStrictEqual(judged("[charts/ledger/values.yaml, charts/ledger/values-prod.yaml]"), []);
        // Only values.yaml: the chart as it is (staging).
        assert.deepStrictEqual(judged("[values.yaml]"), []);
        // A file the source does not hold fails the chart's build: closed, unless ignoreMissingValuesFiles.
        assert.deepStrictEqual(judged("[charts/ledger/values.yaml, charts/ledger/nope.yaml]"), [
            "argocd-app-rendered HelmRelease/flux-system/ledger",
        ]);
        assert.deepStrictEqual(
            judged(
                "[charts/ledger/values.yaml, charts/ledger/values-prod.yaml, charts/ledger/nope.yaml]\n      ignoreMissingValuesFiles: true",
            ),
            [],
        );
        assert.strictEqual(
            fs.readFileSync(path.join(tmp, "charts/ledger/values.yaml"), "utf8"),
            `commit: ${SHA}\nstage: staging\n`,
        );
    });

    it("gives what `flux build kustomization` gives", () => {
        const flux = findTool("flux");
        assert.ok(flux, "the flux CLI is missing: run npm run setup");
        write("apps/ledger.yaml", stack("ledger", "myorg/ledger/${env:=staging}", "branch: main"));
        write("apps/sub/kustomization.yaml", "resources: [billing.yaml]\n");
        write("apps/sub/billing.yaml", stack("billing", "myorg/billing/${env}", `commit: ${SHA}`));
        const ks = kustomization(
            "apps",
            "./apps",
            "  targetNamespace: prod\n  namePrefix: p-\n  postBuild:\n    substitute: {env: production}\n" +
                "  patches:\n    - target: {kind: Stack}\n      patch: |\n        - op: add\n          path: /spec/destroyOnFinalize\n          value: true\n",
        );
        write("ks.yaml", ks);
        const ref = spawnSync(
            flux!.path,
            ["build", "kustomization", "apps", "--path", "./apps", "--kustomization-file", "./ks.yaml", "--dry-run"],
            { cwd: tmp, encoding: "utf8", timeout: 120000 },
        );
        assert.strictEqual(ref.status, 0, ref.stderr);
        const input = JSON.stringify({
            root: tmp,
            path: path.join(tmp, "apps"),
            kustomization: YAML.parse(ks),
            objects: [],
            strict: true,
        });
        const own = spawnSync(findTool("flux-build")!.path, [], { input, encoding: "utf8", timeout: 120000 });
        assert.strictEqual(own.status, 0, own.stderr);
        const objects = (text: string) =>
            YAML.parseAllDocuments(text)
                .map((d) => d.toJS())
                .filter((o) => o)
                .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
        // `flux build` also sets the owner labels kustomize-controller applies with, which check sets when the
        // objects land (gitops/manifests/flux-placement.ts): flux-build's output is everything else.
        const landed = objects(own.stdout).map((o) => ({
            ...o,
            metadata: {
                ...o.metadata,
                labels: {
                    ...(o.metadata.labels ?? {}),
                    "kustomize.toolkit.fluxcd.io/name": "apps",
                    "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
                },
            },
        }));
        assert.deepStrictEqual(landed, objects(ref.stdout));
        assert.deepStrictEqual(
            landed.map((o) => [o.metadata.name, o.metadata.namespace, o.spec.stack, o.spec.destroyOnFinalize]),
            [
                ["p-billing", "prod", "myorg/billing/production", true],
                ["p-ledger", "prod", "myorg/ledger/production", true],
            ],
        );
    });
});
