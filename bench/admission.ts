/**
 * Admission figures (`npm run bench -- --only admission`): the webhook server (cli/webhook.ts) over HTTPS
 * with a cluster cache of 10,000 objects, sent AdmissionReviews of Stacks at a fixed rate (open loop: a
 * request leaves every 1/rate seconds whether or not earlier ones have returned) by a load generator in a
 * worker thread (its own event loop; keep-alive TLS connections, as the API server keeps them). Latency
 * is measured by the sender, request to response; throughput is responses per second over the run.
 * Cache memory: heap growth of a seeded cache at 10,000 and 100,000 objects, after a full GC.
 * Not a test: nothing here asserts a timing. The target (issue 24): p99 under 25 ms at 200 requests/s.
 */
import * as fs from "fs";
import * as v8 from "v8";
import * as vm from "vm";
import { Worker } from "worker_threads";
import * as k8s from "@kubernetes/client-node";
import { ClusterCache } from "../core/cluster/cache";
import { KObject, WATCHED_KINDS } from "../core/cluster/kinds";
import { startWebhook } from "../cli/webhook";
import { makeCa, issueCert } from "../harness/certs";
import { makeTempDir } from "../core/process";
import { PartOutput } from "./types";

/** A cluster of `n` objects: per namespace 2 Stacks, their account, a Secret, a Role and RoleBinding; a ClusterRoleBinding per 10. */
export function syntheticCluster(n: number): KObject[] {
    const out: KObject[] = [];
    for (let i = 0; out.length < n; i++) {
        const ns = `team-${i}`;
        const sa = `deployer`;
        out.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: ns } });
        out.push({ apiVersion: "v1", kind: "Secret", metadata: { name: "pulumi-api-secret", namespace: ns }, type: "Opaque", data: { accessToken: "" } });
        out.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: "deployer", namespace: ns },
            rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "create", "update"] }],
        });
        out.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "deployer", namespace: ns },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "deployer" },
            subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
        });
        for (const env of ["dev", "staging"]) out.push(stackObject(ns, `app-${env}`, sa, env));
        if (i % 10 === 0) {
            out.push({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRoleBinding",
                metadata: { name: `${ns}:auth-delegator` },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
                subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
            });
        }
    }
    return out.slice(0, n);
}

function stackObject(ns: string, name: string, sa: string, env: string): KObject {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: ns },
        spec: {
            serviceAccountName: sa,
            stack: `org/${ns}/${env}`,
            projectRepo: "https://github.com/org/app.git",
            branch: "main",
            envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "pulumi-api-secret", key: "accessToken" } } },
        },
    };
}

function offlineKubeConfig(): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: "none", server: "https://127.0.0.1:1" }], users: [{ name: "u" }], contexts: [{ name: "c", cluster: "none", user: "u" }], currentContext: "c" });
    return kc;
}

export function seededCache(objects: KObject[]): ClusterCache {
    const c = new ClusterCache(offlineKubeConfig());
    for (const k of WATCHED_KINDS)
        c.seed(
            k.kind,
            objects.filter((o) => o.kind === k.kind),
        );
    return c;
}

const gc: () => void = (() => {
    v8.setFlagsFromString("--expose-gc");
    return vm.runInNewContext("gc") as () => void;
})();

function heapMb(): number {
    gc();
    gc();
    return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** The load generator, run in a worker thread: open-loop HTTPS POSTs at `rate` for `seconds`. */
const LOADGEN = `
const { parentPort, workerData } = require("worker_threads");
const https = require("https");
const { port, ca, rate, seconds, bodies } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca });
const latencies = [];
let errors = 0, inFlight = 0;
const started = process.hrtime.bigint();
const total = Math.round(rate * seconds);
let sent = 0;
function one(i) {
  const body = bodies[i % bodies.length];
  const t0 = process.hrtime.bigint();
  inFlight++;
  const req = https.request({ host: "127.0.0.1", port, path: "/validate", method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
    res.on("data", () => {});
    res.on("end", () => { inFlight--; if (res.statusCode === 200) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6); else errors++; done(); });
  });
  req.on("error", () => { inFlight--; errors++; done(); });
  req.end(body);
}
function done() { if (sent >= total && inFlight === 0) finish(); }
function finish() {
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  parentPort.postMessage({ latencies, errors, wall });
}
const interval = 1000 / rate;
function tick() {
  const due = Math.min(total, Math.floor(Number(process.hrtime.bigint() - started) / 1e6 / interval) + 1);
  while (sent < due) one(sent++);
  if (sent < total) setTimeout(tick, Math.max(0, interval / 2));
}
tick();
`;

function percentile(sorted: number[], p: number): number {
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function admissionBenchmarks(line: (s: string) => void): Promise<PartOutput> {
    const out: Record<string, unknown> = {};
    line("== admission: pko-guard webhook over HTTPS, cache of 10,000 objects, open-loop load from a worker thread");
    const dir = makeTempDir("bench-admission");
    const ca = makeCa(dir);
    const tls = issueCert(ca, "webhook", { ips: ["127.0.0.1"] });
    const cluster = syntheticCluster(10_000);
    const cache = seededCache(cluster);
    const hook = await startWebhook({ cert: tls.cert, key: tls.key, port: 0, host: "127.0.0.1", warnOnly: false, log: () => undefined }, { cache });
    // Requests: updates of existing Stacks in 200 namespaces (half of them production-shaped, so denied).
    const stacks = cluster.filter((o) => o.kind === "Stack").slice(0, 400);
    const bodies = stacks.map((s, i) => {
        const object = i % 2 === 0 ? s : { ...s, spec: { ...(s.spec as object), stack: `org/${(s.metadata as { namespace: string }).namespace}/production` } };
        return JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            request: {
                uid: `u${i}`,
                kind: { group: "pulumi.com", version: "v1", kind: "Stack" },
                operation: "UPDATE",
                namespace: (s.metadata as { namespace: string }).namespace,
                name: (s.metadata as { name: string }).name,
                object,
                oldObject: s,
            },
        });
    });
    const caPem = fs.readFileSync(ca.cert, "utf8");
    const run = (rate: number, seconds: number) =>
        new Promise<{ latencies: number[]; errors: number; wall: number }>((resolve, reject) => {
            const w = new Worker(LOADGEN, { eval: true, workerData: { port: hook.port, ca: caPem, rate, seconds, bodies } });
            w.once("message", resolve);
            w.once("error", reject);
        });
    await run(50, 2); // warm-up (JIT, TLS sessions)
    for (const rate of [50, 200]) {
        const seconds = 15;
        const r = await run(rate, seconds);
        const sorted = [...r.latencies].sort((a, b) => a - b);
        const figures = {
            requests: sorted.length,
            errors: r.errors,
            throughputPerSecond: Math.round((sorted.length / r.wall) * 10) / 10,
            p50Ms: Math.round(percentile(sorted, 50) * 100) / 100,
            p99Ms: Math.round(percentile(sorted, 99) * 100) / 100,
            maxMs: Math.round(sorted[sorted.length - 1] * 100) / 100,
        };
        out[`rate${rate}`] = figures;
        line(
            `  ${rate} req/s offered for ${seconds} s: ${figures.throughputPerSecond} req/s answered, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, errors ${figures.errors} (target p99 < 25 ms at 200 req/s)`,
        );
    }
    await hook.close();

    line("== cluster cache memory (heap growth after a full GC; Secrets hold key names only)");
    for (const n of [10_000, 100_000]) {
        const objects = syntheticCluster(n);
        const base = heapMb();
        const c = seededCache(objects);
        const held = heapMb() - base;
        // The objects the cache was seeded from are the only other copy alive; measure without them too.
        objects.length = 0;
        const alone = heapMb() - base;
        out[`memory${n}`] = { objects: c.size(), heapMb: Math.round(alone * 10) / 10, bytesPerObject: Math.round((alone * 1024 * 1024) / c.size()) };
        line(`  ${n.toLocaleString("en")} objects: ${alone.toFixed(1)} MB of heap (${Math.round((alone * 1024 * 1024) / c.size())} bytes an object; ${held.toFixed(1)} MB with the seed list alive)`);
    }
    const at200 = out.rate200 as { p99Ms: number } | undefined;
    return { data: out, figures: [{ name: "admission p99 latency at 200 requests/s", value: at200?.p99Ms ?? null, unit: "ms", target: { op: "<", value: 25, source: "issue 24" } }] };
}
