/**
 * Flux sources of other places fetched as Argo CD's are, from servers on loopback this spec starts (git's own
 * http-backend, a chart repository, an OCI registry): a Kustomization over another repository's GitRepository
 * judged as that repository's tree at the ref source-controller checks out (a branch floats, a full commit pins); a
 * HelmRelease's chart from a HelmRepository (HTTP or OCI), an OCIRepository or another repository, rendered with
 * its values; `--offline` with nothing cached and a host the policy does not list keep the fail-closed finding.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadManifests } from "../../../../gitops/manifests/load";
import { evaluateManifests } from "../../../../gitops/manifests/evaluate-manifests";
import { packConfig } from "../../../../evaluation/pack-config";
import { fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { FLOATING_SOURCE } from "../../../../policies/model/origin";
import { ChildProcess, spawnSync } from "child_process";
import * as crypto from "crypto";
import {
    TestServer,
    git,
    helm,
    makeRepository,
    registry,
    serverProcess,
    writeFiles,
} from "../../../support/source-servers";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
const stack = (extra: string) =>
    `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: ledger, namespace: pulumi}\nspec:\n  stack: org/ledger/prod\n  projectRepo: https://github.com/org/ledger\n  commit: ${SHA}\n${extra}`;

/**
 * Pushes a Flux OCI artifact of `files` (as `flux push artifact` lays it out: a flux config blob, one
 * gzip-compressed tarball layer) to the loopback registry at `port` as `repo:tag`; the manifest's digest.
 */
async function pushArtifact(port: number, repo: string, tag: string, files: Record<string, string>): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-artifact-"));
    try {
        writeFiles(path.join(dir, "src"), files);
        const made = spawnSync("tar", ["-czf", path.join(dir, "layer.tgz"), "-C", path.join(dir, "src"), "."]);
        assert.strictEqual(made.status, 0, String(made.stderr));
        const base = `http://127.0.0.1:${port}/v2/${repo}`;
        const upload = async (body: Buffer) => {
            const digest = `sha256:${crypto.createHash("sha256").update(body).digest("hex")}`;
            const started = await fetch(`${base}/blobs/uploads/`, { method: "POST" });
            const location = new URL(started.headers.get("location")!, base);
            location.searchParams.set("digest", digest);
            const put = await fetch(location, { method: "PUT", body: new Uint8Array(body) });
            assert.strictEqual(put.status, 201);
            return { digest, size: body.length };
        };
        const config = await upload(Buffer.from("{}"));
        const layer = await upload(fs.readFileSync(path.join(dir, "layer.tgz")));
        const manifest = Buffer.from(
            JSON.stringify({
                schemaVersion: 2,
                mediaType: "application/vnd.oci.image.manifest.v1+json",
                config: { mediaType: "application/vnd.cncf.flux.config.v1+json", ...config },
                layers: [{ mediaType: "application/vnd.cncf.flux.content.v1.tar+gzip", ...layer }],
            }),
        );
        const put = await fetch(`${base}/manifests/${tag}`, {
            method: "PUT",
            headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
            body: manifest,
        });
        assert.strictEqual(put.status, 201);
        return `sha256:${crypto.createHash("sha256").update(manifest).digest("hex")}`;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

describe("check fetches Flux sources of other places", function () {
    this.timeout(180_000);
    let root: string;
    let gitServer: TestServer;
    let charts: TestServer;
    let oci: { port: number; child: ChildProcess };
    let clean: string;
    let destroying: string;
    let chartCommit: string;
    let n = 0;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-flux-fetch-"));
        const repos = path.join(root, "repos");
        clean = makeRepository(repos, "platform", { "prod/stack.yaml": stack("") });
        fs.writeFileSync(path.join(repos, "platform", "prod/stack.yaml"), stack("  destroyOnFinalize: true\n"));
        git(path.join(repos, "platform"), "commit", "-qam", "destroy on finalize");
        destroying = git(path.join(repos, "platform"), "rev-parse", "HEAD");
        // Tags for spec.ref.semver: v1.0.0 the clean commit, v1.1.0 the destroying one; v2.0.0 and a tag that is no
        // version outside the ranges asked for.
        for (const [tag, commit] of [
            ["v1.0.0", clean],
            ["v1.1.0", destroying],
            ["v2.0.0", clean],
            ["latest", clean],
        ])
            git(path.join(repos, "platform"), "tag", tag, commit);
        chartCommit = makeRepository(repos, "chart-git", {
            "charts/ledger/Chart.yaml": "apiVersion: v2\nname: ledger\nversion: 0.1.0\n",
            "charts/ledger/templates/stack.yaml": `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ledger\nspec:\n  stack: org/ledger/prod\n  projectRepo: https://github.com/org/ledger\n  commit: ${SHA}\n`,
        });
        gitServer = await serverProcess("git", repos);
        const chartRepo = path.join(root, "charts");
        const chart = path.join(root, "chart-src", "ledger");
        fs.mkdirSync(path.join(chart, "templates"), { recursive: true });
        fs.writeFileSync(path.join(chart, "Chart.yaml"), "apiVersion: v2\nname: ledger\nversion: 1.4.0\n");
        fs.writeFileSync(path.join(chart, "values.yaml"), `source:\n  commit: ${SHA}\n`);
        fs.writeFileSync(
            path.join(chart, "templates", "stack.yaml"),
            "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ledger\nspec:\n  stack: org/ledger/prod\n  projectRepo: https://github.com/org/ledger\n  {{- toYaml .Values.source | nindent 2 }}\n",
        );
        fs.mkdirSync(chartRepo);
        helm(chartRepo, "package", chart, "-d", chartRepo);
        charts = await serverProcess("files", chartRepo);
        helm(chartRepo, "repo", "index", ".", "--url", charts.url);
        oci = await registry();
        const pushed = path.join(chartRepo, "ledger-1.4.0.tgz");
        helm(root, "push", pushed, `oci://127.0.0.1:${oci.port}/charts`, "--plain-http");
    });
    after(async () => {
        await Promise.all([gitServer?.close(), charts?.close()]);
        oci?.child.kill("SIGKILL");
        fs.rmSync(root, { recursive: true, force: true });
    });

    const check = (files: Record<string, string>, o: { allow?: boolean; offline?: boolean } = {}) => {
        const repo = path.join(root, `repo-${n++}`);
        writeFiles(repo, files);
        const fetch = fetchPolicy({
            allowHosts:
                o.allow === false
                    ? []
                    : [`127.0.0.1:${gitServer.port}`, `127.0.0.1:${charts.port}`, `127.0.0.1:${oci.port}`],
            cacheDir: path.join(root, `cache-${n}`),
            offline: o.offline,
            repoRoot: repo,
            limits: { timeoutMs: 30_000 },
        });
        const load = loadManifests(["."], {
            repoRoot: repo,
            cwd: repo,
            fetch,
            repository: { urls: [{ url: "https://git.example.com/me/fleet", from: "test" }] },
        });
        const rows = evaluateManifests(load, packConfig()).filter((r) => r.level === "mandatory");
        return { load, rows };
    };
    const kustomization = (ref: string) => ({
        "clusters/prod/apps.yaml":
            `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: platform, namespace: flux-system}\nspec: {interval: 1m, url: "${gitServer.url}/platform", ref: ${ref}}\n---\n` +
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./prod\n  prune: true\n  sourceRef: {kind: GitRepository, name: platform}\n",
    });
    const rendered = (rows: { policy: string; resource: string; message: string }[]) =>
        rows.filter((r) => r.policy === "argocd-app-rendered");

    it("judges another repository's branch as fetched: the Stack it destroys on finalize blocks, marked floating", () => {
        const { load, rows } = check(kustomization("{branch: main}"));
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${gitServer.url}/platform@${destroying}/prod/stack.yaml`);
        const annotations = (stack.object.metadata as { annotations: Record<string, string> }).annotations;
        assert.strictEqual(
            annotations[FLOATING_SOURCE],
            `${gitServer.url}/platform at "main", resolved to ${destroying}`,
        );
        assert.deepStrictEqual(rows.map((r) => [r.policy, r.resource]).sort(), [
            ["pko-stack-destroy-on-finalize-nonprod", "Stack/pulumi/ledger"],
            ["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"],
        ]);
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.kind, s.url, s.ref, s.resolved]),
            [["git", `${gitServer.url}/platform`, "main", destroying]],
        );
    });

    it("passes the same Kustomization at a full commit without the violation (commit wins over branch)", () => {
        const { load, rows } = check(kustomization(`{branch: main, commit: "${clean}"}`));
        const stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${gitServer.url}/platform@${clean}/prod/stack.yaml`);
        assert.deepStrictEqual(rows, []);
    });

    it("fails closed, one line, when the source is not fetched or cannot be", () => {
        const offline = rendered(check(kustomization("{branch: main}"), { offline: true }).rows);
        assert.deepStrictEqual(
            offline.map((r) => r.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(offline[0].message, /is another repository than the one checked, which check does not read/);
        const refused = rendered(check(kustomization("{branch: main}"), { allow: false }).rows);
        assert.deepStrictEqual(
            refused.map((r) => r.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(refused[0].message, /is another repository than the one checked, and it could not be fetched: /);
        assert.doesNotMatch(refused[0].message, /\n/);
        const none = rendered(check(kustomization('{semver: ">=3.0.0"}')).rows);
        assert.deepStrictEqual(
            none.map((r) => r.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(none[0].message, /could not be fetched: .*semver ">=3\.0\.0": no tag matches the semver range/);
    });

    it("copies an included GitRepository of another repository into this one's artifact, as source-controller does", () => {
        // This repository's `fleet` includes the other repository's `prod` folder at `apps/platform`; its own
        // apps/ledger.yaml is pinned, the included Stack is another repository's at its ref.
        const files = (ref: string, include: string) => ({
            "clusters/prod/apps.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: platform, namespace: flux-system}\nspec: {interval: 1m, url: "${gitServer.url}/platform", ref: ${ref}}\n---\n` +
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: fleet, namespace: flux-system}\nspec:\n  interval: 1m\n  url: https://git.example.com/me/fleet\n  ref: {branch: main}\n  include:\n    - ${include}\n---\n` +
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  sourceRef: {kind: GitRepository, name: fleet}\n",
            "apps/ledger.yaml": stack("").replace("name: ledger", "name: fleet-ledger"),
        });
        const into = "{repository: {name: platform}, fromPath: prod, toPath: apps/platform}";
        let { load, rows } = check(files("{branch: main}", into));
        const included = load.objects.find((o) => o.kind === "Stack" && o.identity === "Stack/pulumi/ledger")!;
        assert.strictEqual(included.file, `${gitServer.url}/platform@${destroying}/prod/stack.yaml`);
        assert.strictEqual(included.syncedBy, "Flux Kustomization flux-system/apps");
        assert.deepStrictEqual(
            load.objects
                .filter((o) => o.kind === "Stack")
                .map((o) => o.file)
                .sort(),
            ["apps/ledger.yaml", `${gitServer.url}/platform@${destroying}/prod/stack.yaml`],
        );
        // The included source floats (a branch): its production Stack is not pinned, and it destroys on finalize.
        assert.deepStrictEqual(rows.map((r) => [r.policy, r.resource]).sort(), [
            ["pko-stack-destroy-on-finalize-nonprod", "Stack/pulumi/ledger"],
            ["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"],
        ]);
        ({ rows } = check(files(`{commit: "${clean}"}`, into)));
        assert.deepStrictEqual(rows, [], "the included repository at a clean commit");
        // The default toPath is the included GitRepository's name, at the root: not below spec.path, not applied.
        ({ load, rows } = check(files("{branch: main}", "{repository: {name: platform}}")));
        assert.deepStrictEqual(rows, []);
        assert.deepStrictEqual(
            load.objects.filter((o) => o.kind === "Stack").map((o) => o.file),
            ["apps/ledger.yaml"],
        );
        // A toPath that is a folder of this repository already: source-controller's copy fails, so no artifact.
        const taken = rendered(
            check(files("{branch: main}", "{repository: {name: platform}, fromPath: prod, toPath: apps}")).rows,
        );
        assert.deepStrictEqual(
            taken.map((r) => r.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(taken[0].message, /cannot copy from "prod" to "apps": the folder is already in the source/);
        // Not fetched: the include is not known, so neither is the artifact.
        const offline = rendered(check(files("{branch: main}", into), { offline: true }).rows);
        assert.deepStrictEqual(
            offline.map((r) => r.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(offline[0].message, /spec\.include\[0\] names GitRepository "flux-system\/platform", whose url/);
    });

    it("checks out the highest tag a semver range matches, as source-controller does, and it still floats", () => {
        // >=1.0.0 <2.0.0: v1.1.0 (the commit that destroys on finalize), not v2.0.0, nor the tag "latest".
        let { load, rows } = check(kustomization('{semver: ">=1.0.0 <2.0.0", branch: main}'));
        let stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${gitServer.url}/platform@${destroying}/prod/stack.yaml`);
        assert.strictEqual(
            (stack.object.metadata as { annotations: Record<string, string> }).annotations[FLOATING_SOURCE],
            `${gitServer.url}/platform at "semver >=1.0.0 <2.0.0", resolved to ${destroying}`,
        );
        assert.deepStrictEqual(rows.map((r) => [r.policy, r.resource]).sort(), [
            ["pko-stack-destroy-on-finalize-nonprod", "Stack/pulumi/ledger"],
            ["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"],
        ]);
        // ~1.0: v1.0.0, the clean commit; the Stack pins its own commit, but its source floats: still not pinned.
        ({ load, rows } = check(kustomization('{semver: "~1.0"}')));
        stack = load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${gitServer.url}/platform@${clean}/prod/stack.yaml`);
        assert.deepStrictEqual(
            rows.map((r) => [r.policy, r.resource]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"]],
        );
        assert.deepStrictEqual(
            load.fetched?.map((s) => [s.ref, s.resolved, s.floating]),
            [["semver ~1.0", clean, true]],
        );
    });

    it("pulls a Kustomization's OCIRepository artifact by digest (pinned), semver or tag (floating)", async () => {
        const v1 = await pushArtifact(oci.port, "manifests/platform", "v1.0.0", { "prod/stack.yaml": stack("") });
        const v11 = await pushArtifact(oci.port, "manifests/platform", "v1.1.0", {
            "prod/stack.yaml": stack("  destroyOnFinalize: true\n"),
        });
        const files = (ref: string) => ({
            "clusters/prod/apps.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: platform, namespace: flux-system}\nspec: {interval: 5m, url: "oci://127.0.0.1:${oci.port}/manifests/platform", ref: ${ref}}\n---\n` +
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./prod\n  prune: true\n  sourceRef: {kind: OCIRepository, name: platform}\n",
        });
        // By digest (over the tag beside it): the clean artifact, pinned, nothing to report.
        let r = check(files(`{digest: "${v1}", tag: v1.1.0}`));
        let found = r.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(found.file, `oci://127.0.0.1:${oci.port}/manifests/platform@${v1}/prod/stack.yaml`);
        assert.deepStrictEqual(r.rows, []);
        // By semver: the highest matching tag, v1.1.0, which destroys on finalize; it floats, so it is not pinned.
        r = check(files('{semver: ">=1.0.0"}'));
        found = r.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(found.file, `oci://127.0.0.1:${oci.port}/manifests/platform@v1.1.0@${v11}/prod/stack.yaml`);
        assert.deepStrictEqual(r.rows.map((x) => [x.policy, x.resource]).sort(), [
            ["pko-stack-destroy-on-finalize-nonprod", "Stack/pulumi/ledger"],
            ["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"],
        ]);
        // semverFilter first: only v1.0.x tags count.
        r = check(files('{semver: ">=1.0.0", semverFilter: "^v1\\\\.0\\\\."}'));
        found = r.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(found.file, `oci://127.0.0.1:${oci.port}/manifests/platform@v1.0.0@${v1}/prod/stack.yaml`);
        // By tag: floats too.
        r = check(files("{tag: v1.0.0}"));
        assert.deepStrictEqual(
            r.rows.map((x) => [x.policy, x.resource]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"]],
        );
        // A tag the registry lacks, or a copy layer: fails closed on the Kustomization, one line.
        const missing = rendered(check(files("{tag: v9.9.9}")).rows);
        assert.deepStrictEqual(
            missing.map((x) => x.resource),
            ["Kustomization/flux-system/apps"],
        );
        assert.match(missing[0].message, /an OCI artifact that could not be fetched: .*no "v9\.9\.9" in the registry/);
        const offline = rendered(check(files(`{digest: "${v1}"}`), { offline: true }).rows);
        assert.match(offline[0].message, /an OCI artifact, which check does not pull in this run/);
    });

    it("renders a HelmRelease's chart from a HelmRepository with its values: a production Stack on a branch blocks", () => {
        const files = (values: string) => ({
            "clusters/prod/ledger.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: flux-system}\nspec: {interval: 1h, url: "${charts.url}"}\n---\n` +
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: ledger, namespace: pulumi}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ledger\n      version: 1.4.0\n      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}\n" +
                values,
        });
        const pinned = check(files(""));
        const stack = pinned.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${charts.url}#ledger@1.4.0/templates/stack.yaml`);
        assert.deepStrictEqual(pinned.rows, []);
        const branch = check(files("  values:\n    source: {branch: main}\n"));
        assert.deepStrictEqual(
            branch.rows.map((r) => [r.policy, r.resource]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"]],
        );
        const offline = rendered(check(files(""), { offline: true }).rows);
        assert.deepStrictEqual(
            offline.map((r) => r.resource),
            ["HelmRelease/pulumi/ledger"],
        );
        assert.match(offline[0].message, /is a chart of a Helm repository, which check does not fetch in this run/);
    });

    it("pulls a HelmRelease's chart from an OCI HelmRepository, and an OCIRepository's by tag (floating) or digest", () => {
        const release = (chart: string) =>
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: ledger, namespace: pulumi}\nspec:\n  interval: 10m\n" +
            chart;
        const fromRepo = check({
            "clusters/prod/ledger.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: pulumi}\nspec: {interval: 1h, type: oci, url: "oci://127.0.0.1:${oci.port}/charts"}\n---\n` +
                release(
                    "  chart:\n    spec:\n      chart: ledger\n      version: 1.4.0\n      sourceRef: {kind: HelmRepository, name: charts}\n",
                ),
        });
        assert.ok(fromRepo.load.objects.some((o) => o.kind === "Stack"));
        assert.deepStrictEqual(fromRepo.rows, []);
        const ociRepository = (ref: string) => ({
            "clusters/prod/ledger.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: ledger, namespace: pulumi}\nspec: {interval: 1h, url: "oci://127.0.0.1:${oci.port}/charts/ledger", ref: ${ref}}\n---\n` +
                release("  chartRef: {kind: OCIRepository, name: ledger}\n"),
        });
        const tagged = check(ociRepository('{semver: "~1.4.0"}'));
        const stack = tagged.load.objects.find((o) => o.kind === "Stack")!;
        const annotations = (stack.object.metadata as { annotations: Record<string, string> }).annotations;
        // The tag chosen as source-controller chooses it (Flux's version parsing), then pulled by helm.
        assert.match(annotations[FLOATING_SOURCE], /at "semver ~1\.4\.0", resolved to 1\.4\.0/);
        assert.deepStrictEqual(
            tagged.rows.map((r) => [r.policy, r.resource]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"]],
        );
        // By the digest the tag resolved to (digest wins over tag, as in source-controller): pinned, nothing floats.
        const manifest = tagged.load.fetched![0].digest;
        assert.match(manifest, /^sha256:[0-9a-f]{64}$/);
        const pinned = check(ociRepository(`{digest: "${manifest}", tag: "0.0.1"}`));
        const pinnedStack = pinned.load.objects.find((o) => o.kind === "Stack")!;
        const pinnedMeta = pinnedStack.object.metadata as { annotations?: Record<string, string> };
        assert.strictEqual(pinnedMeta.annotations?.[FLOATING_SOURCE], undefined);
        assert.deepStrictEqual(pinned.rows, []);
        assert.deepStrictEqual(
            pinned.load.fetched?.map((f) => [f.ref, f.resolved, f.floating]),
            [[manifest, manifest, false]],
        );
        // A digest the registry does not hold, or one that is no sha256 digest: fails closed, one line.
        const missing = rendered(check(ociRepository(`{digest: "sha256:${"0".repeat(64)}"}`)).rows);
        assert.deepStrictEqual(
            missing.map((r) => r.resource),
            ["HelmRelease/pulumi/ledger"],
        );
        assert.match(missing[0].message, /spec\.chartRef \(OCIRepository "pulumi\/ledger"\) could not be fetched: /);
        assert.doesNotMatch(missing[0].message, /\n/);
        const bad = rendered(check(ociRepository('{digest: "latest"}')).rows);
        assert.match(bad[0].message, /whose spec\.ref\.digest is not a sha256 digest/);
    });

    it("renders a HelmRelease's chart from another repository's GitRepository at its ref", () => {
        const files = (ref: string) => ({
            "clusters/prod/ledger.yaml":
                `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: chart-git, namespace: pulumi}\nspec: {interval: 1m, url: "${gitServer.url}/chart-git", ref: ${ref}}\n---\n` +
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: ledger, namespace: pulumi}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ./charts/ledger\n      sourceRef: {kind: GitRepository, name: chart-git}\n",
        });
        const pinned = check(files(`{commit: "${chartCommit}"}`));
        const stack = pinned.load.objects.find((o) => o.kind === "Stack")!;
        assert.strictEqual(stack.file, `${gitServer.url}/chart-git@${chartCommit}/charts/ledger/templates/stack.yaml`);
        assert.deepStrictEqual(pinned.rows, []);
        const branch = check(files("{branch: main}"));
        assert.deepStrictEqual(
            branch.rows.map((r) => [r.policy, r.resource]),
            [["pko-stack-prod-pinned-commit", "Stack/pulumi/ledger"]],
        );
    });
});
