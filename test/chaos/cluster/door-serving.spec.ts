/**
 * `pko-guard webhook` at the door of a real API server (etcd + kube-apiserver from the toolchain), deployed as
 * shipped: kube-apiserver presents a client certificate through the AdmissionConfiguration and kubeconfig of
 * deploy/webhook/apiserver/ (user renamed to this webhook's address), the webhook asks for it (--client-ca)
 * and refuses other callers in the TLS handshake, its probes on the health port. The webhook reads the cluster
 * through a proxy the spec pauses (test/support/pausable-proxy.ts): while the API server hangs for it, a review
 * is refused within its read deadline, later ones are not held behind the stuck reads, /readyz turns 503 while
 * /healthz stays 200; resumed, readiness recovers by itself and reviews are judged again. Waits are on
 * conditions only.
 * Fixed by 8f32ab9 (--client-ca, read deadlines, readiness) and a60b1a2 (the shipped client certificate); before
 * them, any caller was answered, and one stuck list held every review while /readyz answered 200.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { Spawned, removeTempDir } from "../../../support/process";
import { ApiServer } from "../../../harness/apiserver";
import { Ca, issueCert } from "../../../harness/certs";
import { get, startDoor, startShippedWebhook } from "../../support/shipped-door";
import { Doc, guideDocs, namespacesOf, requireCluster, until, yaml } from "../../support/cluster";
import { PausableProxy, startPausableProxy } from "../../support/pausable-proxy";

describe("the webhook at a real API server: client certificates, deadlines and honest health", function () {
    this.timeout(900_000);
    let dir: string;
    let server: ApiServer;
    let proxy: PausableProxy;
    let hook: Spawned | undefined;
    let logs = "";
    let port: number;
    let healthPort: number;
    let caPem: Buffer;
    let clientCa: Ca;

    before(async function () {
        requireCluster(this);
        const door = await startDoor("door-spec", ["judged", "hang", "after"]);
        ({ dir, server, clientCa, port, healthPort, caPem } = door);
        // The webhook reads the cluster through the proxy.
        proxy = await startPausableProxy({ host: "127.0.0.1", port: Number(new URL(server.url).port) });
        const proxied = path.join(dir, "proxied.kubeconfig");
        fs.writeFileSync(
            proxied,
            fs.readFileSync(server.kubeconfig, "utf8").replace(server.url, `https://127.0.0.1:${proxy.port}`),
        );
        hook = await startShippedWebhook(door, proxied, ["--read-timeout", "1"], (d) => (logs += d));
    });
    after(async () => {
        hook?.kill();
        await hook?.exited;
        await proxy?.close();
        await server?.stop();
        if (dir) removeTempDir(dir);
    });

    const apply = async (docs: Doc[]) => {
        const namespaces = namespacesOf(docs);
        if (namespaces.length > 0) await server.apply(yaml(namespaces));
        return server.kubectl(["apply", "-f", "-"], yaml(docs));
    };
    const production = (ns: string) => guideDocs("gitops-guide-example", "manifests/production/stack.yaml", ns);
    const governed = (ns: string) => guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", ns);

    it("the API server presents its client certificate and is judged; a caller without one is refused at TLS", async () => {
        const r = await apply(production("judged"));
        assert.notStrictEqual(r.code, 0, r.stdout);
        assert.match(r.stderr, /admission webhook "validate\.pko-guard\.dev" denied the request/);
        assert.match(r.stderr, /pko-stack-no-cluster-admin: /);
        const bare = await get(port, "/healthz", caPem).then(
            (a) => `answered ${a.status}`,
            (e: Error) => e.message,
        );
        assert.doesNotMatch(bare, /^answered/);
        await until("the refusal logged", () => /"event":"tls.client_refused"/.test(logs));
        const client = issueCert(clientCa, "someone", { dns: ["someone"] });
        const pair = { cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) };
        // A caller with a certificate the CA signed is answered (the probes are on the health port).
        assert.strictEqual((await get(port, "/validate", caPem, pair)).status, 405);
    });

    it("an API server that hangs: reviews refused within the deadline, readiness false; resumed, it recovers by itself", async () => {
        proxy.pause();
        const stack = governed("hang").filter((d) => d.kind === "Stack" || d.kind === "ServiceAccount");
        const first = await apply(stack);
        assert.notStrictEqual(first.code, 0, first.stdout);
        assert.match(
            first.stderr,
            /pko-guard-cluster-state: cluster state cannot be read \(.*did not answer before its deadline\)/,
        );
        // Not held behind the stuck reads: a second review is refused the same way, within its own deadline.
        const second = await apply(stack);
        assert.match(second.stderr, /pko-guard-cluster-state: cluster state cannot be read/);
        await until("/readyz to say the reads fail", async () => {
            const r = await get(healthPort, "/readyz", caPem);
            return r.status === 503 && /fresh reads of the API server failing/.test(r.body);
        });
        assert.strictEqual((await get(healthPort, "/healthz", caPem)).status, 200);
        proxy.resume();
        await until("/readyz to recover", async () => (await get(healthPort, "/readyz", caPem)).status === 200);
        const admitted = await apply(governed("after"));
        assert.strictEqual(admitted.code, 0, admitted.stderr);
        const denied = await apply(production("after"));
        assert.notStrictEqual(denied.code, 0);
        assert.match(denied.stderr, /pko-stack-no-cluster-admin: /);
        assert.doesNotMatch(denied.stderr, /pko-guard-cluster-state/);
    });
});
