/**
 * The harness's real API server: etcd and kube-apiserver start on loopback, answer /readyz, serve the
 * PKO CRDs and kubectl with the admin kubeconfig, and stop leaving no process and no folder behind. With
 * controllers, foreground deletes complete; Argo CD's real Application CRD accepts every Application the
 * repository's manifests declare (strict server-side validation), and the harness's stand-in for Argo CD's
 * controller lets an Application with Argo CD's finalizer be deleted.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import {
    installApplicationCrd,
    installPkoCrds,
    missingDeployBinaries,
    startApiServer,
} from "../../../harness/apiserver";
import { startApplicationFinalizer } from "../../../harness/argocd-finalizers";
import { alive } from "../../support/processes";
import { requireCluster } from "../../support/cluster";

/**
 * Runs `body` against the server, then stops it and proves nothing of it is left: its data folder and every
 * process it started. A failing `body` still stops it.
 */
async function leavingNothing(
    server: Awaited<ReturnType<typeof startApiServer>>,
    body: () => Promise<void>,
): Promise<void> {
    try {
        await body();
    } catch (e) {
        await server.stop();
        throw e;
    }
    const { dir, pids } = server;
    await server.stop();
    assert.ok(!fs.existsSync(dir), "the data folder is removed");
    for (const pid of pids) assert.ok(!alive(pid), `process ${pid} is gone`);
}

/** The deploy leg's binaries (kube-controller-manager too) are required: missing, the spec fails (skipped only with PKO_GUARD_SKIP_REAL=1). */
function requireControllers(ctx: Mocha.Context): void {
    const missing = missingDeployBinaries();
    if (missing.length === 0) return;
    if (process.env.PKO_GUARD_SKIP_REAL === "1") ctx.skip();
    throw new Error(`missing ${missing.join(", ")}: run npm run setup`);
}

describe("harness API server (etcd + kube-apiserver)", function () {
    this.timeout(600_000);
    before(function () {
        requireCluster(this);
    });

    it("starts on loopback, serves the CRDs and kubectl, and stops leaving nothing behind", async () => {
        const server = await startApiServer();
        await leavingNothing(server, async () => {
            assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
            assert.ok(server.pids.every(alive), "etcd and kube-apiserver run");
            const v = await server.kubectl(["version", "-o", "json"]);
            assert.strictEqual(v.code, 0, v.stderr);
            const version = JSON.parse(v.stdout);
            assert.strictEqual(version.serverVersion.gitVersion, "v1.35.4");
            assert.strictEqual(version.serverVersion.minor, "35");
            await installPkoCrds(server);
            const got = await server.kubectl(["get", "crd", "stacks.pulumi.com", "-o", "jsonpath={.spec.group}"]);
            assert.strictEqual(got.stdout, "pulumi.com", got.stderr);
            // Service-account signing works: the API server issues a token for an account.
            await server.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: probe, namespace: default}\n");
            const token = await server.kubectl(["create", "token", "probe", "-n", "default"]);
            assert.strictEqual(token.code, 0, token.stderr);
            assert.strictEqual(token.stdout.trim().split(".").length, 3, "a signed JWT");
        });
    });

    it("with controllers, deletes wait on no finalizer forever: a namespace and its objects, deleted in the foreground, are gone", async function () {
        requireControllers(this);
        const server = await startApiServer({ controllers: true });
        await leavingNothing(server, async () => {
            assert.strictEqual(server.pids.length, 3, "etcd, kube-apiserver and kube-controller-manager");
            await server.apply(
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}\n",
            );
            // What the Kubernetes provider does on destroy: foreground propagation, then a wait until gone.
            const cm = await server.kubectl([
                "delete",
                "configmap",
                "c",
                "-n",
                "team",
                "--cascade=foreground",
                "--wait=true",
                "--timeout=120s",
            ]);
            assert.strictEqual(cm.code, 0, cm.stderr);
            const ns = await server.kubectl([
                "delete",
                "namespace",
                "team",
                "--cascade=foreground",
                "--wait=true",
                "--timeout=120s",
            ]);
            assert.strictEqual(ns.code, 0, ns.stderr);
            assert.match((await server.kubectl(["get", "namespace", "team"])).stderr, /NotFound/);
        });
    });

    it("Argo CD's Application CRD validates for real, and Applications with Argo CD's finalizers can be deleted", async function () {
        requireControllers(this);
        const server = await startApiServer({ controllers: true });
        try {
            await installApplicationCrd(server);
            await server.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: argocd}\n");
            // Every Application file of the fixtures and examples, as kubectl decodes it, with unknown fields an error.
            const files = (fs.readdirSync(REPO_ROOT, { recursive: true }) as string[])
                .filter((f) => /^(fixtures|examples)\//.test(f) && !f.includes("node_modules") && /\.ya?ml$/.test(f))
                .filter((f) => /^kind:\s*Application\s*$/m.test(fs.readFileSync(path.join(REPO_ROOT, f), "utf8")));
            assert.ok(files.length >= 20, `Application files found: ${files.length}`);
            const dry = await server.kubectl([
                "apply",
                "--dry-run=server",
                "--validate=strict",
                ...files.flatMap((f) => ["-f", path.join(REPO_ROOT, f)]),
            ]);
            assert.strictEqual(dry.code, 0, dry.stderr);
            assert.strictEqual(dry.stdout.match(/created \(server dry run\)/g)?.length, files.length, dry.stdout);
            // The schema is Argo CD's, not a permissive stand-in: a misplaced field and a wrong type are refused.
            const app = (spec: string) =>
                `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: probe, namespace: argocd}\nspec: ${spec}\n`;
            const unknown = await server.kubectl(
                ["apply", "--dry-run=server", "--validate=strict", "-f", "-"],
                app("{project: default, destination: {}, sources: [], repoURL: x}"),
            );
            assert.notStrictEqual(unknown.code, 0);
            assert.match(unknown.stderr, /unknown field "spec\.repoURL"/);
            const wrongType = await server.kubectl(
                ["apply", "--dry-run=server", "-f", "-"],
                app("{project: default, destination: {}, source: {repoURL: x, path: [a]}}"),
            );
            assert.notStrictEqual(wrongType.code, 0);
            assert.match(wrongType.stderr, /spec\.source\.path/);

            // Without Argo CD's controller, an Application deleted with its finalizer stays, marked for deletion.
            const withFinalizers = (name: string) =>
                `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ${name}, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io/background]}\nspec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: default}, source: {repoURL: "https://example.com/r.git", path: p}}\n`;
            await server.apply(withFinalizers("before"));
            const del = await server.kubectl(["delete", "application", "before", "-n", "argocd", "--wait=false"]);
            assert.strictEqual(del.code, 0, del.stderr);
            const held = await server.kubectl([
                "get",
                "application",
                "before",
                "-n",
                "argocd",
                "-o",
                "jsonpath={.metadata.deletionTimestamp} {.metadata.finalizers}",
            ]);
            assert.strictEqual(held.code, 0, held.stderr);
            assert.match(held.stdout, /^\S+Z \["resources-finalizer\.argocd\.argoproj\.io\/background"\]$/);
            // The stand-in finalizes the one already waiting (seen in its list) and one deleted later (its watch),
            // as the provider deletes: in the foreground, waiting until gone.
            const argoCd = await startApplicationFinalizer(server.kubeconfig);
            try {
                await server.apply(withFinalizers("after"));
                for (const name of ["before", "after"]) {
                    const r = await server.kubectl([
                        "delete",
                        "application",
                        name,
                        "-n",
                        "argocd",
                        "--cascade=foreground",
                        "--ignore-not-found",
                        "--wait=true",
                        "--timeout=120s",
                    ]);
                    assert.strictEqual(r.code, 0, r.stderr);
                    assert.match(
                        (await server.kubectl(["get", "application", name, "-n", "argocd"])).stderr,
                        /NotFound/,
                    );
                }
                assert.deepStrictEqual(argoCd.errors, []);
                assert.deepStrictEqual([...new Set(argoCd.finalized)].sort(), ["argocd/after", "argocd/before"]);
            } finally {
                await argoCd.stop();
            }
        } finally {
            await server.stop();
        }
    });
});
