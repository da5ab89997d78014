/**
 * The harness's real API server: etcd and kube-apiserver start on loopback, answer /readyz, serve the
 * PKO CRDs and kubectl with the admin kubeconfig, and stop leaving no process and no folder behind.
 */
import * as assert from "assert";
import * as fs from "fs";
import { installPkoCrds, missingDeployBinaries, startApiServer } from "../../harness/apiserver";
import { alive } from "../processes";
import { requireCluster } from "./cluster";

describe("harness API server (etcd + kube-apiserver)", function () {
    this.timeout(600_000);
    before(function () {
        requireCluster(this);
    });

    it("starts on loopback, serves the CRDs and kubectl, and stops leaving nothing behind", async () => {
        const server = await startApiServer();
        let stopped = false;
        try {
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
            const { dir, pids } = server;
            await server.stop();
            stopped = true;
            assert.ok(!fs.existsSync(dir), "the data folder is removed");
            for (const pid of pids) assert.ok(!alive(pid), `process ${pid} is gone`);
        } finally {
            if (!stopped) await server.stop();
        }
    });

    it("with controllers, deletes wait on no finalizer forever: a namespace and its objects, deleted in the foreground, are gone", async function () {
        const missing = missingDeployBinaries();
        if (missing.length > 0) {
            if (process.env.PKO_GUARD_SKIP_REAL === "1") this.skip();
            throw new Error(`missing ${missing.join(", ")}: run npm run setup`);
        }
        const server = await startApiServer({ controllers: true });
        let stopped = false;
        try {
            assert.strictEqual(server.pids.length, 3, "etcd, kube-apiserver and kube-controller-manager");
            await server.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}\n");
            // What the Kubernetes provider does on destroy: foreground propagation, then a wait until gone.
            const cm = await server.kubectl(["delete", "configmap", "c", "-n", "team", "--cascade=foreground", "--wait=true", "--timeout=120s"]);
            assert.strictEqual(cm.code, 0, cm.stderr);
            const ns = await server.kubectl(["delete", "namespace", "team", "--cascade=foreground", "--wait=true", "--timeout=120s"]);
            assert.strictEqual(ns.code, 0, ns.stderr);
            assert.match((await server.kubectl(["get", "namespace", "team"])).stderr, /NotFound/);
            const { dir, pids } = server;
            await server.stop();
            stopped = true;
            assert.ok(!fs.existsSync(dir), "the data folder is removed");
            for (const pid of pids) assert.ok(!alive(pid), `process ${pid} is gone`);
        } finally {
            if (!stopped) await server.stop();
        }
    });
});
