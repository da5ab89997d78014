/**
 * Argo CD's `.argocd-source.yaml` / `.argocd-source-<app>.yaml`, merged into a source as the repo server merges
 * them (reposerver/repository/repository.go mergeSourceParameters): in order, as JSON merge patches, the
 * repository fields kept as written.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { instanceName, mergePatch, withOverrides } from "../../../../gitops/argocd/source-overrides";
import { tempRepository } from "../../../support/temp-repository";

describe("Argo CD source override files", () => {
    const repo = tempRepository("overrides");
    const ctx = () => repo.context();
    const app = (name: string, namespace?: string) => ({ metadata: { name, ...(namespace ? { namespace } : {}) } });
    const source = {
        repoURL: "https://example.com/r.git",
        path: "chart",
        targetRevision: "main",
        helm: { releaseName: "x" },
    };

    it("applies RFC 7386 merge patches: mappings merge, null removes, lists and scalars replace", () => {
        assert.deepStrictEqual(
            mergePatch({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3], e: "x" }, d: null, f: { g: null } }),
            { a: { b: 1, c: [3], e: "x" }, f: {} },
        );
        assert.deepStrictEqual(mergePatch({ a: 1 }, [1]), [1]);
    });
    it("names the app's file by its instance name (control plane namespace argocd)", () => {
        assert.strictEqual(instanceName(app("web")), "web");
        assert.strictEqual(instanceName(app("web", "argocd")), "web");
        assert.strictEqual(instanceName(app("web", "team-a")), "team-a_web");
    });
    it("merges .argocd-source.yaml, then the app's file; keeps repoURL, path, chart and targetRevision", () => {
        fs.writeFileSync(
            path.join(repo.root, ".argocd-source.yaml"),
            "helm:\n  parameters: [{name: a, value: '1'}]\n  releaseName: rel\n",
        );
        fs.writeFileSync(
            path.join(repo.root, ".argocd-source-web.yaml"),
            "path: elsewhere\nrepoURL: https://evil.example/x.git\nchart: c\nhelm:\n  parameters: [{name: b, value: '2'}]\n",
        );
        fs.writeFileSync(path.join(repo.root, ".argocd-source-other.yaml"), "plugin: {name: vault}\n");
        assert.deepStrictEqual(withOverrides(source, repo.root, app("web"), "Application web", ctx()), {
            repoURL: "https://example.com/r.git",
            path: "chart",
            targetRevision: "main",
            helm: { releaseName: "rel", parameters: [{ name: "b", value: "2" }] },
        });
        // A namespaced Application reads <namespace>_<name>; an override can change the type (a plugin here).
        fs.writeFileSync(path.join(repo.root, ".argocd-source-team-a_other.yaml"), "plugin: {name: vault}\n");
        assert.deepStrictEqual(
            withOverrides(source, repo.root, app("other", "team-a"), "Application other", ctx()).plugin,
            {
                name: "vault",
            },
        );
    });
    it("leaves a source with no files (or an empty one) as it is; a file that is no mapping is bad input", () => {
        assert.strictEqual(withOverrides(source, repo.root, app("web"), "Application web", ctx()), source);
        fs.writeFileSync(path.join(repo.root, ".argocd-source.yaml"), "");
        assert.deepStrictEqual(withOverrides(source, repo.root, app("web"), "Application web", ctx()), source);
        fs.writeFileSync(path.join(repo.root, ".argocd-source.yaml"), "- a\n");
        assert.throws(
            () => withOverrides(source, repo.root, app("web"), "Application web", ctx()),
            /Application web: \.argocd-source\.yaml is not a mapping of source fields/,
        );
        fs.writeFileSync(path.join(repo.root, ".argocd-source.yaml"), "a: [\n");
        assert.throws(
            () => withOverrides(source, repo.root, app("web"), "Application web", ctx()),
            /is not valid YAML \(Argo CD fails the source\)/,
        );
    });
});
