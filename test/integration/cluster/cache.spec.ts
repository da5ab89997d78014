/**
 * The cluster cache against a real API server, through a TCP relay the test can cut: every connection is
 * dropped and new ones refused while objects are created, updated and deleted behind its back; once the
 * relay is back, the cache holds exactly what the server holds (no update lost, no deleted object kept).
 * Waits are on conditions (the cache equal to the server's list), never on time.
 */
import * as assert from "assert";
import * as net from "net";
import * as k8s from "@kubernetes/client-node";
import { ClusterCache } from "../../../cluster/cache";
import { ApiServer, installPkoCrds, startApiServer } from "../../../harness/apiserver";
import { freePort } from "../../../harness/ports";
import { namespaceYaml, requireCluster, until } from "../../support/cluster";

/** A TCP relay to the API server whose connections can all be cut, and new ones refused, until resumed. */
class Relay {
    private server?: net.Server;
    private readonly sockets = new Set<net.Socket>();
    constructor(
        readonly port: number,
        private readonly target: number,
    ) {}
    async listen(): Promise<void> {
        this.server = net.createServer((client) => {
            const upstream = net.connect(this.target, "127.0.0.1");
            for (const s of [client, upstream]) {
                this.sockets.add(s);
                s.on("close", () => this.sockets.delete(s));
                s.on("error", () => s.destroy());
            }
            client.pipe(upstream).pipe(client);
        });
        await new Promise<void>((r) => this.server!.listen(this.port, "127.0.0.1", () => r()));
    }
    async cut(): Promise<void> {
        await new Promise<void>((r) => {
            this.server!.close(() => r());
            for (const s of this.sockets) s.destroy();
        });
    }
}

describe("cluster cache: a dropped and reconnected watch loses no update", function () {
    this.timeout(600_000);
    let server: ApiServer;
    let relay: Relay;
    let cache: ClusterCache;

    before(async function () {
        requireCluster(this);
        server = await startApiServer();
        await installPkoCrds(server);
        await server.apply(namespaceYaml("w"));
    });
    after(async () => {
        cache?.stop();
        await relay?.cut().catch(() => undefined);
        await server?.stop();
    });

    const stack = (name: string, branch: string) =>
        `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: ${name}, namespace: w}\nspec: {stack: org/app/${name}, projectRepo: "https://github.com/org/app.git", branch: ${branch}}\n`;
    /** name -> spec.branch, as the server has the Stacks of namespace w. */
    const serverStacks = async () => {
        const r = await server.kubectl(["get", "stacks.pulumi.com", "-n", "w", "-o", "json"]);
        return Object.fromEntries(
            (JSON.parse(r.stdout).items as { metadata: { name: string }; spec: { branch: string } }[]).map((s) => [
                s.metadata.name,
                s.spec.branch,
            ]),
        );
    };
    const cachedStacks = () =>
        Object.fromEntries(
            cache
                .list("Stack", "w")
                .map((s) => [String((s.metadata ?? {}).name), String((s.spec as { branch: string }).branch)]),
        );
    const same = async () => JSON.stringify(cachedStacks()) === JSON.stringify(await serverStacks());

    it("applies every create, update and delete made while its connections were cut", async () => {
        const apiPort = Number(new URL(server.url).port);
        relay = new Relay(await freePort(), apiPort);
        await relay.listen();
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(server.kubeconfig);
        const viaRelay = kc.getCurrentCluster()!;
        kc.clusters = kc.clusters.map((c) =>
            c.name === viaRelay.name ? { ...c, server: `https://127.0.0.1:${relay.port}` } : c,
        );
        cache = new ClusterCache(kc, { retryMs: 100 });
        for (let i = 0; i < 5; i++) await server.apply(stack(`s${i}`, "main"));
        cache.start();
        await cache.waitForSync(120_000);
        await until("the cache to hold the first Stacks", same);
        assert.strictEqual(Object.keys(cachedStacks()).length, 5);

        // Cut: every watch connection dies, and reconnections are refused while the cluster changes.
        const before = cache.counters.reconnects + cache.counters.relists;
        await relay.cut();
        await server.apply(stack("s1", "updated-while-cut"));
        const del = await server.kubectl(["delete", "stack.pulumi.com", "s2", "-n", "w"]);
        assert.strictEqual(del.code, 0, del.stderr);
        for (let i = 5; i < 8; i++) await server.apply(stack(`s${i}`, "created-while-cut"));
        assert.ok(!(await same()), "the cache cannot have seen the changes yet");

        await relay.listen();
        await until("the cache to catch up after the reconnect", same);
        assert.ok(cache.counters.reconnects + cache.counters.relists > before, "the watch was re-established");
        const cached = cachedStacks();
        assert.strictEqual(cached.s1, "updated-while-cut");
        assert.ok(!("s2" in cached), "the Stack deleted while cut is gone");
        assert.deepStrictEqual(Object.keys(cached).sort(), ["s0", "s1", "s3", "s4", "s5", "s6", "s7"]);
        assert.ok(cache.synced());
        // Secrets stay without values through the reconnects too.
        await server.kubectl(["create", "secret", "generic", "t", "-n", "w", "--from-literal=token=canary-0a1b2c3d"]);
        await until("the Secret in the cache", () =>
            cache.list("Secret", "w").some((s) => (s.metadata ?? {}).name === "t"),
        );
        assert.ok(!JSON.stringify(cache.list("Secret")).includes(Buffer.from("canary-0a1b2c3d").toString("base64")));
    });
});
