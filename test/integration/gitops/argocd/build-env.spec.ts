/**
 * Argo CD's build environment substituted where its repo server substitutes it (gitops/argocd/build-env.ts), with
 * the real Helm, kustomize and jsonnet: Helm parameters (escaped after substitution, so a hostile revision name
 * with a comma stays one value), value files and file parameters; kustomize images, commonLabels and (only when
 * asked) commonAnnotations; jsonnet TLAs and ext vars; never a Helm release name or a kustomize name prefix. The
 * revision is the HEAD commit of the checked repository, read from a real git repository.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { applicationOutput } from "../../../../gitops/argocd/applications";
import { checkedRepository } from "../../../../gitops/manifests/repository";
import { tempRepository } from "../../../support/temp-repository";
import { findTool } from "../../../../gitops/render/tools";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
const URL = "https://example.com/repo.git";
type Obj = Record<string, any>;

describe("Argo CD's build environment in rendering", function () {
    this.timeout(120000);
    const repo = tempRepository("build-env");
    before(() => {
        for (const t of ["kustomize", "helm", "jsonnet"] as const) assert.ok(findTool(t), `${t} is missing`);
    });

    const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(repo.root, rel)), { recursive: true });
        fs.writeFileSync(path.join(repo.root, rel), text);
    };
    const ctx = (revision: string | undefined) =>
        repo.context(undefined, { repository: { urls: [{ url: URL, from: "test" }], revision } });
    const app = (source: Obj) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: {
            project: "payments",
            source: { repoURL: URL, targetRevision: "main", ...source },
            destination: { namespace: "web-prod" },
        },
    });
    const objects = (a: Obj): Obj[] => {
        const out = applicationOutput(a, ctx(SHA));
        assert.deepStrictEqual(out.notes, []);
        return out.streams.flatMap((s) => parseAllDocuments(s.text).map((d) => d.toJS() as Obj)).filter((o) => o);
    };
    const chart = () => {
        write("chart/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n");
        write(
            "chart/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n" +
                "  tag: {{ .Values.tag | quote }}\n  file: {{ .Values.file | quote }}\n  from: {{ .Values.from | quote }}\n" +
                "  extra: {{ .Values.extra | quote }}\n  destroyOnFinalize: {{ .Values.destroyOnFinalize | quote }}\n",
        );
        write("chart/values-web.yaml", "from: values-web\n");
        write("chart/payments.txt", "file of project payments\n");
    };

    it("Helm: parameters, value files and file parameters; never the release name or values", () => {
        chart();
        const [cm] = objects(
            app({
                path: "chart",
                targetRevision: "rel,destroyOnFinalize=true",
                helm: {
                    values: "extra: $ARGOCD_APP_NAME\n",
                    valueFiles: ["values-${ARGOCD_APP_NAME}.yaml"],
                    fileParameters: [{ name: "file", path: "$ARGOCD_APP_PROJECT_NAME.txt" }],
                    parameters: [
                        { name: "tag", value: "$ARGOCD_APP_REVISION_SHORT-$ARGOCD_APP_SOURCE_TARGET_REVISION-$$5" },
                    ],
                },
            }),
        );
        assert.strictEqual(cm.metadata.name, "web");
        assert.deepStrictEqual(cm.data, {
            tag: "2b08897-rel,destroyOnFinalize=true-$5",
            file: "file of project payments\n",
            from: "values-web",
            extra: "$ARGOCD_APP_NAME",
            destroyOnFinalize: null,
        });
    });

    it("Helm: the release name is not substituted (helm refuses the `$`, as in Argo CD)", () => {
        chart();
        assert.throws(
            () => objects(app({ path: "chart", helm: { releaseName: "$ARGOCD_APP_NAME-rel" } })),
            /invalid release name/,
        );
    });

    it("kustomize: images and commonLabels; commonAnnotations only with commonAnnotationsEnvsubst", () => {
        write("k/kustomization.yaml", "resources: [deploy.yaml]\n");
        write(
            "k/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector: {matchLabels: {app: web}}\n" +
                "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web}]\n",
        );
        const kustomize = (extra: Obj) =>
            objects(
                app({
                    path: "k",
                    // A hostile revision name: `kustomize edit add label rev:rel,b:c` (what Argo CD runs) sets
                    // one label `rev` to `rel,b:c` (kustomize v5.8.2, docs/contributing/verified-facts.md); so does check.
                    targetRevision: "rel,b:c",
                    kustomize: {
                        namePrefix: "$ARGOCD_APP_NAME-",
                        images: ["web=registry.example.com/web:$ARGOCD_APP_REVISION_SHORT_8"],
                        commonLabels: {
                            project: "$ARGOCD_APP_PROJECT_NAME",
                            ns: "$ARGOCD_APP_NAMESPACE",
                            rev: "$ARGOCD_APP_SOURCE_TARGET_REVISION",
                        },
                        commonAnnotations: { path: "$ARGOCD_APP_SOURCE_PATH" },
                        ...extra,
                    },
                }),
            )[0];
        const plain = kustomize({});
        assert.strictEqual(plain.metadata.name, "$ARGOCD_APP_NAME-web");
        assert.strictEqual(plain.spec.template.spec.containers[0].image, "registry.example.com/web:2b088971");
        assert.strictEqual(plain.metadata.labels.project, "payments");
        assert.strictEqual(plain.metadata.labels.ns, "web-prod");
        assert.deepStrictEqual(Object.keys(plain.metadata.labels).sort(), ["ns", "project", "rev"]);
        assert.strictEqual(plain.metadata.labels.rev, "rel,b:c");
        assert.strictEqual(plain.metadata.annotations.path, "$ARGOCD_APP_SOURCE_PATH");
        assert.strictEqual(kustomize({ commonAnnotationsEnvsubst: true }).metadata.annotations.path, "k");
    });

    it("jsonnet: TLAs and ext vars, a newline in a value kept", () => {
        write(
            "j/cm.jsonnet",
            "function(repo) { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { repo: repo, ns: std.extVar('ns') } }\n",
        );
        const [cm] = objects(
            app({
                path: "j",
                directory: {
                    jsonnet: {
                        tlas: [{ name: "repo", value: "$ARGOCD_APP_SOURCE_REPO_URL" }],
                        extVars: [{ name: "ns", value: "a\n$ARGOCD_APP_NAMESPACE" }],
                    },
                },
            }),
        );
        assert.deepStrictEqual(cm.data, { repo: URL, ns: "a\nweb-prod" });
    });

    it("fails closed, naming the field, when the revision is used and not known", () => {
        chart();
        const out = applicationOutput(
            app({ path: "chart", helm: { parameters: [{ name: "tag", value: "$ARGOCD_APP_REVISION" }] } }),
            ctx(undefined),
        );
        assert.strictEqual(out.streams.length, 0);
        assert.strictEqual(out.notes.length, 1);
        assert.match(out.notes[0], /^spec\.source uses \$ARGOCD_APP_REVISION/);
    });

    it("reads the revision from the checked repository's HEAD commit", () => {
        write("README.md", "x\n");
        const git = (...args: string[]) =>
            execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
                cwd: repo.root,
                encoding: "utf8",
            }).trim();
        assert.strictEqual(checkedRepository(repo.root, []).revision, undefined);
        git("init", "-q");
        assert.strictEqual(checkedRepository(repo.root, []).revision, undefined);
        git("add", ".");
        git("commit", "-q", "-m", "x");
        assert.strictEqual(checkedRepository(repo.root, []).revision, git("rev-parse", "HEAD"));
    });
});
