/**
 * A message that fails closed because of the repository root names the root in use and --repo-root: a manifests
 * folder inside another repository is judged against that repository's root unless the user says otherwise.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { applicationOutput } from "../../../../gitops/argocd/applications";
import { tempRepository } from "../../../support/temp-repository";

describe("an Application's source outside the repository root in use", () => {
    const repo = tempRepository("app-root");

    const ctx = (repoRoot: string) => repo.context(repoRoot);
    const app = (source: Record<string, unknown>) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: { source, destination: { namespace: "web" } },
    });

    it("names the root it used and --repo-root when the source path is no folder under it", () => {
        // The manifests repository is `inner`, inside `outer`; judged from outer's root, its path is not there.
        fs.mkdirSync(path.join(repo.root, "inner", "apps", "web"), { recursive: true });
        const outer = applicationOutput(
            app({ repoURL: "https://git.example/inner", path: "apps/web" }),
            ctx(repo.root),
        );
        assert.deepStrictEqual(outer.notes, [
            `spec.source.path "apps/web" is not a folder of this repository (another repository's path is not read; the repository root in use is ${repo.root}; --repo-root sets another)`,
        ]);
        const inner = applicationOutput(
            app({ repoURL: "https://git.example/inner", path: "apps/web" }),
            ctx(path.join(repo.root, "inner")),
        );
        assert.deepStrictEqual(inner.notes, []);
    });

    it("names them when a value file is outside the repository", () => {
        fs.mkdirSync(path.join(repo.root, "chart"), { recursive: true });
        fs.writeFileSync(path.join(repo.root, "chart", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 1.0.0\n");
        assert.throws(
            () =>
                applicationOutput(
                    app({ repoURL: "https://git.example/r", path: "chart", helm: { valueFiles: ["../../v.yaml"] } }),
                    ctx(repo.root),
                ),
            new RegExp(
                `^Error: Application "web": a value file or file parameter is outside the repository \\(the repository root in use is ${repo.root}; --repo-root sets another\\)$`,
            ),
        );
    });
});

describe("an Application's source check cannot render", () => {
    const repo = tempRepository("app-unrenderable");
    const ctx = () => repo.context();
    const app = (source: Record<string, unknown>) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: { source: { repoURL: "https://git.example/r", ...source }, destination: { namespace: "web" } },
    });

    it("fails closed on a chart with a dependency from a chart repository, its folder claimed (not exit 2)", () => {
        fs.mkdirSync(path.join(repo.root, "wp"));
        fs.writeFileSync(
            path.join(repo.root, "wp", "Chart.yaml"),
            "apiVersion: v2\nname: wp\nversion: 1.0.0\ndependencies:\n  - name: wordpress\n    version: 9.0.3\n    repository: https://charts.example.com\n",
        );
        const out = applicationOutput(app({ path: "wp" }), ctx());
        assert.deepStrictEqual(out.notes, [
            'spec.source is a chart whose dependency "wordpress" comes from a chart repository (helm dependency build needs the network, which check does not use)',
        ]);
        assert.deepStrictEqual(out.rendered, [path.join(repo.root, "wp")]);
        assert.strictEqual(out.renders, 0);
    });

    it("claims a plugin source's folder, so it is not rendered again with defaults", () => {
        fs.mkdirSync(path.join(repo.root, "p"));
        fs.writeFileSync(path.join(repo.root, "p", "kustomization.yaml"), "resources: [all.yaml]\n");
        const out = applicationOutput(app({ path: "p", plugin: { name: "kustomized-helm" } }), ctx());
        assert.deepStrictEqual(out.notes, [
            'spec.source.plugin: a config management plugin renders "p", which check does not run',
        ]);
        assert.deepStrictEqual(out.rendered, [path.join(repo.root, "p")]);
    });
});
