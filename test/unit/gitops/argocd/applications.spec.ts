/**
 * A message that fails closed because of the repository root names the root in use and --repo-root: a manifests
 * folder inside another repository is judged against that repository's root unless the user says otherwise.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { applicationOutput } from "../../../../gitops/argocd/applications";
import { RenderContext } from "../../../../gitops/render/render";

describe("an Application's source outside the repository root in use", () => {
    let tmp: string;
    beforeEach(() => {
        tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-app-root-")));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    const ctx = (repoRoot: string): RenderContext => ({
        deadline: Date.now() + 60_000,
        repoRoot,
        show: (abs) => path.relative(repoRoot, abs),
        scratch: {},
    });
    const app = (source: Record<string, unknown>) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: { source, destination: { namespace: "web" } },
    });

    it("names the root it used and --repo-root when the source path is no folder under it", () => {
        // The manifests repository is `inner`, inside `outer`; judged from outer's root, its path is not there.
        fs.mkdirSync(path.join(tmp, "inner", "apps", "web"), { recursive: true });
        const outer = applicationOutput(app({ repoURL: "https://git.example/inner", path: "apps/web" }), ctx(tmp));
        assert.deepStrictEqual(outer.notes, [
            `spec.source.path "apps/web" is not a folder of this repository (another repository's path is not read; the repository root in use is ${tmp}; --repo-root sets another)`,
        ]);
        const inner = applicationOutput(
            app({ repoURL: "https://git.example/inner", path: "apps/web" }),
            ctx(path.join(tmp, "inner")),
        );
        assert.deepStrictEqual(inner.notes, []);
    });

    it("names them when a value file is outside the repository", () => {
        fs.mkdirSync(path.join(tmp, "chart"), { recursive: true });
        fs.writeFileSync(path.join(tmp, "chart", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 1.0.0\n");
        assert.throws(
            () =>
                applicationOutput(
                    app({ repoURL: "https://git.example/r", path: "chart", helm: { valueFiles: ["../../v.yaml"] } }),
                    ctx(tmp),
                ),
            new RegExp(
                `^Error: Application "web": a value file or file parameter is outside the repository \\(the repository root in use is ${tmp}; --repo-root sets another\\)$`,
            ),
        );
    });
});

describe("an Application's source check cannot render", () => {
    let tmp: string;
    beforeEach(() => {
        tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-app-unrenderable-")));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const ctx = (): RenderContext => ({
        deadline: Date.now() + 60_000,
        repoRoot: tmp,
        show: (abs) => path.relative(tmp, abs),
        scratch: {},
    });
    const app = (source: Record<string, unknown>) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: { source: { repoURL: "https://git.example/r", ...source }, destination: { namespace: "web" } },
    });

    it("fails closed on a chart with a dependency from a chart repository, its folder claimed (not exit 2)", () => {
        fs.mkdirSync(path.join(tmp, "wp"));
        fs.writeFileSync(
            path.join(tmp, "wp", "Chart.yaml"),
            "apiVersion: v2\nname: wp\nversion: 1.0.0\ndependencies:\n  - name: wordpress\n    version: 9.0.3\n    repository: https://charts.example.com\n",
        );
        const out = applicationOutput(app({ path: "wp" }), ctx());
        assert.deepStrictEqual(out.notes, [
            'spec.source is a chart whose dependency "wordpress" comes from a chart repository (helm dependency build needs the network, which check does not use)',
        ]);
        assert.deepStrictEqual(out.rendered, [path.join(tmp, "wp")]);
        assert.strictEqual(out.renders, 0);
    });

    it("claims a plugin source's folder, so it is not rendered again with defaults", () => {
        fs.mkdirSync(path.join(tmp, "p"));
        fs.writeFileSync(path.join(tmp, "p", "kustomization.yaml"), "resources: [all.yaml]\n");
        const out = applicationOutput(app({ path: "p", plugin: { name: "kustomized-helm" } }), ctx());
        assert.deepStrictEqual(out.notes, [
            'spec.source.plugin: a config management plugin renders "p", which check does not run',
        ]);
        assert.deepStrictEqual(out.rendered, [path.join(tmp, "p")]);
    });
});
