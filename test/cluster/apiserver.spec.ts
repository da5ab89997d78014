/**
 * The harness's real API server: etcd and kube-apiserver start on loopback, answer /readyz, serve the
 * PKO CRDs and kubectl with the admin kubeconfig, and stop leaving no process and no folder behind.
 */
import * as assert from "assert";
import * as fs from "fs";
import { installPkoCrds, startApiServer } from "../../harness/apiserver";
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
});
