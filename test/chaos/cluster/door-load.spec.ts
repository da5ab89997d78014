/**
 * The door under a tenant, on a real API server (etcd + kube-apiserver from the toolchain) with the shipped
 * client certificates, and two `pko-guard webhook` replicas as the Deployment runs them (`--enforce`, the heap
 * capped as its NODE_OPTIONS caps it) behind a proxy that spreads the API server's connections over both, as a
 * Service does. The tenants are client-certificate users with `*` on `*` in their own namespace only.
 *
 * - The race: a tenant posts a Stack and a RoleBinding giving its account `*` on `*` at the same moment, many
 *   times. Both admitted by one replica (the proxy pinned to it): never; by two (the proxy spreading them): never
 *   either, the replicas' claims (cluster/claims.ts) ordering them; the enforce loop stays on as the backstop.
 * - The burst: at 5,000+ Stacks, a tenant's bindings of `view` to `system:serviceaccounts` sent at once are all
 *   admitted, another tenant's writes and both replicas' /healthz are answered meanwhile, and each replica's
 *   peak RSS stays under the Deployment's 512 MiB limit.
 * - Health: a client-CA file replaced by garbage keeps the last good one (the API server is still answered,
 *   /readyz 200); with etcd stopped, /readyz turns 503 with no review sent, and 200 once it runs again.
 * Waits are on conditions; nothing asserts a timing (the times are printed for docs/contributing/verified-facts.md).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as k8s from "@kubernetes/client-node";
import { Spawned, removeTempDir } from "../../../support/process";
import { freePort } from "../../../harness/ports";
import { CertPair, issueCert } from "../../../harness/certs";
import { Door, get, startDoor, startShippedWebhook, webhookConfiguration } from "../../support/shipped-door";
import { guideDocs, requireCluster, until } from "../../support/cluster";
import { RoundRobinProxy, startRoundRobinProxy } from "../../support/round-robin-proxy";
import { populate, syntheticCluster } from "../../../bench/synthetic-cluster";

/** Tries of each race here (docs/contributing/verified-facts.md records runs of 300 and 400: PKO_GUARD_RACE_TRIES). */
const TRIES = Number(process.env.PKO_GUARD_RACE_TRIES ?? 60);
const STACKS = 5_000;
const BURST = 16;
const MEMORY_LIMIT_MB = 512;

interface Replica {
    hook: Spawned;
    port: number;
    healthPort: number;
}

/** The peak resident set of a process (kB in /proc/PID/status VmHWM), in MiB. */
function peakRssMb(pid: number): number {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    assert.ok(m, "VmHWM readable");
    return Number(m[1]) / 1024;
}

describe("the door under a tenant: races, bursts and honest health (two replicas)", function () {
    this.timeout(3_600_000);
    let door: Door;
    let proxy: RoundRobinProxy | undefined;
    const replicas: Replica[] = [];
    let logs = "";
    /** Reviews each replica decided (its admission.decided log lines). */
    const decided = [0, 0];
    const tenants: Record<string, CertPair> = {};

    /** A write as a tenant, straight to the API server (its status and body). */
    const post = (who: string, path: string, body: unknown) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
            const pair = tenants[who];
            const req = https.request(
                `${door.server.url}${path}`,
                {
                    method: "POST",
                    ca: door.caPem,
                    cert: fs.readFileSync(pair.cert),
                    key: fs.readFileSync(pair.key),
                    agent: false,
                    headers: { "Content-Type": "application/json" },
                },
                (res) => {
                    let text = "";
                    res.on("data", (d) => (text += d));
                    res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
                },
            );
            req.on("error", reject);
            req.end(JSON.stringify(body));
        });
    /** The webhooks' logged failures to judge (the last few), for a failing assertion's message. */
    const failures = () =>
        logs
            .split("\n")
            .filter((l) => /"event":"admission.failed"/.test(l))
            .slice(-3)
            .join("\n");
    const exists = async (kind: string, ns: string, name: string) =>
        (await door.server.kubectl(["get", kind, "-n", ns, name, "-o", "name"])).code === 0;

    before(async function () {
        requireCluster(this);
        door = await startDoor("door-load", ["tenant-a", "tenant-b"]);
        // Each tenant: a client certificate of the API server's CA (its user is the CN), `*` on `*` in its namespace.
        for (const t of ["tenant-a", "tenant-b"]) {
            tenants[t] = issueCert(door.server.ca, t, { dns: [t] });
            await door.server.apply(
                [
                    `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: everything, namespace: ${t}}\nrules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]`,
                    `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ${t}, namespace: ${t}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: everything}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ${t}}]`,
                ].join("\n---\n"),
            );
        }
        // 5,000+ Stacks in their own namespaces, before the webhooks list them.
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(door.server.kubeconfig);
        const stacks = syntheticCluster(Math.ceil(STACKS * 3.1)).filter((o) => o.kind === "Stack");
        assert.ok(stacks.length >= STACKS);
        await populate(kc, stacks, 16);
        // Two replicas on ports of their own; the proxy on the door's port (the address the API server presents
        // its client certificate to) spreads the API server's connections over them.
        for (let i = 0; i < 2; i++) {
            const at = { ...door, port: await freePort(), healthPort: await freePort() };
            const hook = await startShippedWebhook(
                at,
                door.server.kubeconfig,
                ["--enforce"],
                (d) => {
                    logs += d;
                    decided[i] += (d.match(/"event":"admission.decided"/g) ?? []).length;
                },
                {
                    NODE_OPTIONS: "--max-old-space-size=384",
                },
            );
            replicas.push({ hook, port: at.port, healthPort: at.healthPort });
        }
        proxy = await startRoundRobinProxy(
            door.port,
            replicas.map((r) => r.port),
        );
        await door.server.apply(webhookConfiguration(`https://127.0.0.1:${door.port}`, door.caPem.toString("base64")));
    });
    after(async () => {
        for (const r of replicas) {
            r.hook.kill();
            await r.hook.exited;
        }
        await proxy?.close();
        await door?.server.stop();
        if (door?.dir) removeTempDir(door.dir);
    });

    const stack = (name: string) => {
        const s = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "tenant-a").find(
            (d) => d.kind === "Stack",
        )!;
        return { ...s, metadata: { name, namespace: "tenant-a" }, spec: { ...s.spec, serviceAccountName: name } };
    };
    const adminBinding = (name: string) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: `${name}-admin`, namespace: "tenant-a" },
        // The tenant's own Role of `*` on `*` (it may bind no more than it holds): cluster-admin's equal by the rules.
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "everything" },
        subjects: [{ kind: "ServiceAccount", name, namespace: "tenant-a" }],
    });

    /**
     * `tries` pairs of a Stack and a binding giving its account `*` on `*`, each pair posted at once; how many had
     * both admitted (each then awaited until the enforce loop deletes the binding), and the slowest close.
     */
    const race = async (prefix: string, tries: number) => {
        let both = 0;
        let refusedBoth = 0;
        let closedMs = 0;
        for (let i = 0; i < tries; i++) {
            const name = `${prefix}-${i}`;
            const [s, b] = await Promise.all([
                post("tenant-a", "/apis/pulumi.com/v1/namespaces/tenant-a/stacks", stack(name)),
                post(
                    "tenant-a",
                    "/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-a/rolebindings",
                    adminBinding(name),
                ),
            ]);
            for (const r of [s, b]) {
                assert.ok(r.status === 201 || r.status === 403, `try ${i}: ${r.status} ${r.body}\n${failures()}`);
                // A refusal is the rule's, or the door failing closed (a read that missed its deadline under load).
                if (r.status === 403) assert.match(r.body, /pko-stack-no-cluster-admin|pko-guard-cluster-state/);
            }
            if (s.status !== 201 || b.status !== 201) {
                if (s.status !== 201 && b.status !== 201) refusedBoth++;
                continue;
            }
            both++;
            const t0 = Date.now();
            await until(
                `the enforce loop to delete ${name}-admin`,
                async () => !(await exists("rolebinding", "tenant-a", `${name}-admin`)),
            );
            closedMs = Math.max(closedMs, Date.now() - t0);
            assert.ok(await exists("stack", "tenant-a", name), "the Stack is left as it was");
        }
        return { both, refusedBoth, closedMs };
    };

    it(`the race on one replica: a Stack and a binding giving its account \`*\` on \`*\`, ${TRIES} times at once; never both admitted`, async () => {
        proxy!.pin(0);
        try {
            const { both, refusedBoth } = await race("one", TRIES);
            assert.strictEqual(both, 0);
            console.log(
                `      race on one replica: ${TRIES} tries, both admitted ${both}, both refused ${refusedBoth}`,
            );
        } finally {
            proxy!.pin(undefined);
        }
    });

    it(`the race across two replicas, ${TRIES} times at once: never both admitted (the replicas' claims order them)`, async () => {
        const before = proxy!.counts.map((c) => c);
        const judged = [...decided];
        const { both, refusedBoth, closedMs } = await race("two", TRIES);
        const spread = proxy!.counts.map((c, i) => c - before[i]);
        console.log(
            `      race across replicas: ${TRIES} tries, both refused ${refusedBoth}, both admitted ${both} (slowest enforce close ${closedMs} ms); new connections per replica ${JSON.stringify(spread)}, reviews decided per replica ${JSON.stringify(decided.map((n, i) => n - judged[i]))}`,
        );
        // The reviews did reach both replicas (else this would be the race on one replica again).
        const perReplica = decided.map((n, i) => n - judged[i]);
        // Each replica took claims across replicas (their count and mean time, waiting included, from /metrics).
        for (const r of replicas) {
            const m = (await get(r.healthPort, "/metrics", door.caPem)).body;
            const count = Number(/^pko_guard_claim_duration_seconds_count (\S+)$/m.exec(m)?.[1] ?? 0);
            const sum = Number(/^pko_guard_claim_duration_seconds_sum (\S+)$/m.exec(m)?.[1] ?? 0);
            const review = /^pko_guard_admission_duration_seconds_(sum|count) (\S+)$/gm;
            const [rs, rc] = [...m.matchAll(review)].map((x) => Number(x[2]));
            console.log(
                `      replica ${r.port}: ${count} claims, mean ${((sum / count) * 1000).toFixed(1)} ms to take; reviews mean ${((rs / rc) * 1000).toFixed(1)} ms`,
            );
            assert.ok(count > 0, "the replica took claims");
        }
        assert.ok(
            perReplica.every((n) => n > 0),
            `reviews decided per replica: ${JSON.stringify(perReplica)}`,
        );
        assert.strictEqual(both, 0);
    });

    it(`the burst: ${BURST} view bindings to every account at ${STACKS}+ Stacks, another tenant answered, memory bounded`, async () => {
        const viewBinding = (i: number) => ({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: `readers-${i}`, namespace: "tenant-a" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
        });
        let done = false;
        const others: number[] = [];
        const health: number[] = [];
        const meanwhile = (async () => {
            for (let i = 0; !done; i++) {
                const sa = {
                    apiVersion: "v1",
                    kind: "ServiceAccount",
                    metadata: { name: `light-${i}`, namespace: "tenant-b" },
                };
                const [w, ...h] = await Promise.all([
                    post("tenant-b", "/api/v1/namespaces/tenant-b/serviceaccounts", sa),
                    ...replicas.map((r) => get(r.healthPort, "/healthz", door.caPem)),
                ]);
                others.push(w.status);
                health.push(...h.map((x) => x.status));
            }
        })();
        const burst = await Promise.all(
            Array.from({ length: BURST }, (_, i) =>
                post("tenant-a", "/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-a/rolebindings", viewBinding(i)),
            ),
        );
        done = true;
        await meanwhile;
        for (const b of burst) assert.strictEqual(b.status, 201, `${b.body}\n${failures()}`);
        assert.ok(others.length > 0);
        assert.deepStrictEqual([...new Set(others)], [201], "another tenant's writes are all admitted");
        assert.deepStrictEqual([...new Set(health)], [200]);
        for (const r of replicas) {
            assert.strictEqual(r.hook.child.exitCode, null, "the replica is still running");
            const peak = peakRssMb(r.hook.child.pid!);
            assert.ok(peak < MEMORY_LIMIT_MB, `peak RSS ${peak} MiB`);
            console.log(`      replica ${r.port}: peak RSS ${Math.round(peak)} MiB`);
        }
        console.log(
            `      burst: another tenant's ${others.length} writes and ${health.length} /healthz answered meanwhile`,
        );
    });

    it("a client-CA file replaced by garbage keeps the last good one: the API server is still answered", async () => {
        const good = fs.readFileSync(door.clientCa.cert);
        const failed = () => (logs.match(/"event":"tls.reload_failed"/g) ?? []).length;
        const before = failed();
        fs.writeFileSync(door.clientCa.cert, "garbage\n");
        try {
            await until("both replicas to refuse the garbage", () => failed() >= before + replicas.length);
            const sa = {
                apiVersion: "v1",
                kind: "ServiceAccount",
                metadata: { name: "after-garbage", namespace: "tenant-b" },
            };
            const w = await post("tenant-b", "/api/v1/namespaces/tenant-b/serviceaccounts", sa);
            assert.strictEqual(w.status, 201, w.body);
            for (const r of replicas) assert.strictEqual((await get(r.healthPort, "/readyz", door.caPem)).status, 200);
        } finally {
            fs.writeFileSync(door.clientCa.cert, good);
        }
    });

    it("etcd stopped: /readyz turns 503 with no review sent, and 200 once it runs again", async () => {
        const etcd = door.server.pids[0];
        process.kill(etcd, "SIGSTOP");
        try {
            for (const r of replicas)
                await until("/readyz to say the API server is failing", async () => {
                    const a = await get(r.healthPort, "/readyz", door.caPem);
                    return a.status === 503 && /fresh reads of the API server failing/.test(a.body);
                });
            for (const r of replicas) assert.strictEqual((await get(r.healthPort, "/healthz", door.caPem)).status, 200);
        } finally {
            process.kill(etcd, "SIGCONT");
        }
        for (const r of replicas)
            await until(
                "/readyz to recover",
                async () => (await get(r.healthPort, "/readyz", door.caPem)).status === 200,
            );
        assert.match(logs, /"event":"health.api_server_failing"/);
    });
});
