/**
 * Which repository an Application source names (gitops/render/repo-url.ts): URLs compared by host (any case, no
 * user information, no default port) and path (no `.git`, no trailing `/`, case kept), across schemes and the
 * scp form; and the gate in applicationOutput: a source (or a `ref` source whose `$ref/...` files a Helm source
 * reads) of another repository is not read and names its field.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { isThisRepository, normalizeRepoUrl, shownUrl } from "../../../../gitops/render/repo-url";
import { applicationOutput } from "../../../../gitops/argocd/applications";
import { RenderContext } from "../../../../gitops/render/render";

describe("repo-url: is a repoURL this repository", () => {
    it("normalizes scheme, scp form, .git, host case, user information and default ports", () => {
        const same = [
            "https://github.com/acme/manifests",
            "https://github.com/acme/manifests.git",
            "https://github.com/acme/manifests/",
            "HTTPS://GitHub.COM/acme/manifests.git/",
            "http://github.com/acme/manifests",
            "https://user:token@github.com/acme/manifests.git",
            "https://github.com:443/acme/manifests",
            "git@github.com:acme/manifests.git",
            "GIT@GITHUB.COM:acme/manifests",
            "github.com:acme/manifests",
            "ssh://git@github.com/acme/manifests.git",
            "ssh://git@github.com:22/acme/manifests",
            "git+ssh://git@github.com/acme/manifests",
            "git://github.com/acme/manifests.git",
            "  https://github.com/acme/manifests  ",
        ];
        for (const u of same) assert.strictEqual(normalizeRepoUrl(u), "github.com/acme/manifests", u);
        const other = [
            "https://github.com/acme/Manifests",
            "https://github.com/acme/manifests-prod",
            "https://gitlab.com/acme/manifests",
            "https://github.com:8443/acme/manifests",
            "https://github.com/acme",
        ];
        for (const u of other) assert.notStrictEqual(normalizeRepoUrl(u), "github.com/acme/manifests", u);
        for (const u of ["", "  ", "not a url", "https://", "ftp://x/y", "https://github.com/"])
            assert.strictEqual(normalizeRepoUrl(u), undefined, u);
    });

    it("matches against every URL of the repository; shows none with its token", () => {
        const repo = {
            urls: [
                { url: "git@github.com:acme/manifests.git", from: "origin remote" },
                { url: "https://mirror.example/acme/manifests", from: ".pko-guard.yaml" },
            ],
        };
        assert.ok(isThisRepository(repo, "https://github.com/acme/manifests"));
        assert.ok(isThisRepository(repo, "https://MIRROR.example/acme/manifests.git"));
        assert.ok(!isThisRepository(repo, "https://github.com/acme/other"));
        assert.ok(!isThisRepository(repo, "not a url"));
        assert.ok(!isThisRepository({ urls: [] }, "https://github.com/acme/manifests"));
        assert.strictEqual(shownUrl("https://x-access-token:s3cret@github.com/a/b"), "https://github.com/a/b");
    });
});

describe("applicationOutput: sources of another repository are not read", () => {
    let root: string;
    const ctx = (urls: string[] | undefined): RenderContext => ({
        repoRoot: root,
        show: (p) => path.relative(root, p),
        deadline: Date.now() + 60000,
        ...(urls ? { repository: { urls: urls.map((url) => ({ url, from: "test" })) } } : {}),
    });
    const app = (spec: object) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "web", namespace: "argocd" },
        spec: { ...spec, destination: { server: "https://kubernetes.default.svc", namespace: "pulumi" } },
    });
    beforeEach(() => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-repo-url-")));
        fs.mkdirSync(path.join(root, "apps", "web"), { recursive: true });
        fs.writeFileSync(path.join(root, "apps", "web", "sa.yaml"), "apiVersion: v1\nkind: ServiceAccount\n");
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("reads a source of this repository (risky counterpart below), in any of its URL forms", () => {
        const out = applicationOutput(
            app({ source: { repoURL: "git@github.com:acme/manifests.git", path: "apps/web" } }),
            ctx(["https://github.com/acme/manifests"]),
        );
        assert.deepStrictEqual(out.notes, []);
        assert.deepStrictEqual(out.files, [path.join(root, "apps", "web", "sa.yaml")]);
    });

    it("refuses another repository's path that exists here, naming spec.source.repoURL", () => {
        const out = applicationOutput(
            app({ source: { repoURL: "https://github.com/acme/other", path: "apps/web" } }),
            ctx(["https://github.com/acme/manifests"]),
        );
        assert.deepStrictEqual(out.files, []);
        assert.deepStrictEqual(out.notes, [
            'spec.source.repoURL "https://github.com/acme/other" is another repository than the one checked, so "apps/web" is not read from this one',
        ]);
    });

    it("with no URL known, every source fails closed and says why; without a repository (the harness) all are read", () => {
        const spec = {
            sources: [{ repoURL: "https://github.com/acme/manifests", path: "apps/web" }, { path: "apps/web" }],
        };
        assert.deepStrictEqual(applicationOutput(app(spec), ctx([])).notes, [
            'spec.sources[0].repoURL "https://github.com/acme/manifests" is another repository than the one checked; this repository\'s URL is not known (no origin remote, none declared), so "apps/web" is not read from this one',
            'spec.sources[1].repoURL is not set, so "apps/web" is not read from this one',
        ]);
        assert.deepStrictEqual(applicationOutput(app(spec), ctx(undefined)).notes, []);
    });

    it("a ref source of another repository: its $values files are never read from here", () => {
        fs.mkdirSync(path.join(root, "chart"));
        fs.writeFileSync(path.join(root, "chart", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 0.1.0\n");
        fs.mkdirSync(path.join(root, "values"));
        fs.writeFileSync(path.join(root, "values", "prod.yaml"), "x: 1\n");
        const spec = {
            sources: [
                { repoURL: "https://github.com/acme/values", ref: "values" },
                {
                    repoURL: "https://github.com/acme/manifests",
                    path: "chart",
                    helm: { valueFiles: ["$values/values/prod.yaml"] },
                },
            ],
        };
        const out = applicationOutput(app(spec), ctx(["https://github.com/acme/manifests"]));
        assert.deepStrictEqual(out.notes, [
            'spec.sources[0].repoURL "https://github.com/acme/values" is another repository than the one checked, so its files ($values/...) are not read',
            'spec.sources[1].helm.valueFiles: "$values/values/prod.yaml" is a file of spec.sources[0], another repository, which check does not read',
        ]);
        assert.strictEqual(out.renders, 0);
    });
});
