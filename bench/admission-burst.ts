/**
 * The admission bench's burst case (issue 45): one tenant sends a burst of RoleBindings of `view` to the group
 * `system:serviceaccounts` (each reaching the accounts of every namespace) at a webhook whose cache holds
 * 10,000 Stacks, all at once, while another tenant's light reviews (a Stack update) and /healthz are sent every
 * few milliseconds. Then the same burst of `cluster-admin` bindings (each denied on its first Stacks). Reported:
 * every answer of the burst (statuses, decisions, the slowest), the light reviews' and /healthz's latency while
 * it runs, the process's CPU a binding (all threads, the sender's share included: on a shared machine the wall
 * times follow the other processes' load, the CPU does not), and its peak RSS and heap. In-process over a
 * seeded cache (the sender shares the process, so the RSS is an upper bound of the webhook's); not a test:
 * nothing here asserts a timing.
 */
import * as fs from "fs";
import * as https from "https";
import { performance } from "perf_hooks";
import { startWebhook } from "../cli/webhook";
import { CertPair } from "../harness/certs";
import { KObject } from "../cluster/kinds";
import { seededCache, syntheticCluster } from "./synthetic-cluster";

const ROLES: KObject[] = [
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "view" },
        rules: [
            {
                apiGroups: ["", "apps"],
                resources: ["pods", "configmaps", "deployments"],
                verbs: ["get", "list", "watch"],
            },
        ],
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "cluster-admin" },
        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    },
];

function review(uid: string, user: string, object: KObject, operation = "CREATE", old?: KObject): string {
    const m = object.metadata as { namespace?: string; name: string };
    return JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
            uid,
            kind: { group: "", version: "v1", kind: object.kind },
            operation,
            namespace: m.namespace,
            name: m.name,
            userInfo: { username: user },
            object,
            ...(old ? { oldObject: old } : {}),
        },
    });
}

function toEveryAccount(i: number, role: string): KObject {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: `${role}-everyone-${i}`, namespace: "tenant-a", uid: `b-${role}-${i}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
    };
}

interface Answer {
    status: number;
    ms: number;
    allowed?: boolean;
}

function quantile(xs: number[], q: number): number {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? NaN : Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] * 10) / 10;
}

export interface BurstFigures {
    stacks: number;
    burst: number;
    role: string;
    statuses: Record<string, number>;
    allowed: number;
    slowestMs: number;
    /** The process's CPU (all threads) over the burst, a binding: the sender's and the light reviews' share included. */
    cpuMsPerBinding: number;
    light: { n: number; p50Ms: number; maxMs: number; refused: number };
    healthz: { n: number; p50Ms: number; maxMs: number };
    peakRssMb: number;
    peakHeapMb: number;
}

type Send = (port: number, path: string, body?: string) => Promise<Answer>;

/** Requests over kept-alive connections (as the API server keeps them), each timed to its whole answer. */
function sender(agent: https.Agent): Send {
    return (port, path, body) =>
        new Promise<Answer>((resolve) => {
            const t0 = performance.now();
            const req = https.request(
                {
                    host: "127.0.0.1",
                    port,
                    path,
                    method: body ? "POST" : "GET",
                    agent,
                    headers: body ? { "Content-Type": "application/json" } : {},
                },
                (res) => {
                    let text = "";
                    res.on("data", (d) => (text += d));
                    res.on("end", () => {
                        let allowed: boolean | undefined;
                        try {
                            allowed = (JSON.parse(text) as { response?: { allowed?: boolean } }).response?.allowed;
                        } catch {
                            allowed = undefined;
                        }
                        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, allowed });
                    });
                },
            );
            req.on("error", () => resolve({ status: 0, ms: performance.now() - t0 }));
            req.end(body);
        });
}

/** Latency figures of some answers. */
function latency(answers: Answer[]): { n: number; p50Ms: number; maxMs: number } {
    const ms = answers.map((a) => a.ms);
    return { n: answers.length, p50Ms: quantile(ms, 0.5), maxMs: Math.round(Math.max(...ms)) };
}

/** One burst of `burst` bindings of `role`, with another tenant's reviews and /healthz sent meanwhile. */
async function oneBurst(
    send: Send,
    ports: { review: number; health: number },
    stackObjects: KObject[],
    role: string,
    burst: number,
): Promise<BurstFigures> {
    let peakRss = 0;
    let peakHeap = 0;
    const sample = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 10);
    const light: Answer[] = [];
    const health: Answer[] = [];
    let done = false;
    const prober = (async () => {
        for (let i = 0; !done; i++) {
            const s = stackObjects[i % stackObjects.length];
            const [l, h] = await Promise.all([
                send(ports.review, "/validate", review(`light-${i}`, "tenant-b", s, "UPDATE", s)),
                send(ports.health, "/healthz"),
            ]);
            light.push(l);
            health.push(h);
            await new Promise((r) => setTimeout(r, 5));
        }
    })();
    const cpu = process.cpuUsage();
    const answers = await Promise.all(
        Array.from({ length: burst }, (_, i) =>
            send(ports.review, "/validate", review(`burst-${i}`, "tenant-a", toEveryAccount(i, role))),
        ),
    );
    const used = process.cpuUsage(cpu);
    done = true;
    await prober;
    clearInterval(sample);
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    return {
        stacks: stackObjects.length,
        burst,
        role,
        statuses,
        allowed: answers.filter((a) => a.allowed === true).length,
        slowestMs: Math.round(Math.max(...answers.map((a) => a.ms))),
        cpuMsPerBinding: Math.round((used.user + used.system) / 1000 / burst),
        light: { ...latency(light), refused: light.filter((a) => a.status !== 200).length },
        healthz: latency(health),
        peakRssMb: Math.round(peakRss / 1024 / 1024),
        peakHeapMb: Math.round(peakHeap / 1024 / 1024),
    };
}

/** The burst case at `stacks` Stacks, `burst` bindings at once of each role. */
export async function burstBenchmarks(
    tls: CertPair,
    caPem: string,
    line: (s: string) => void,
    stacks = 10_000,
    burst = 64,
): Promise<BurstFigures[]> {
    const cluster = syntheticCluster(Math.ceil(stacks * 3.1));
    const stackObjects = cluster.filter((o) => o.kind === "Stack");
    const hook = await startWebhook(
        {
            cert: tls.cert,
            key: tls.key,
            port: 0,
            healthPort: 0,
            host: "127.0.0.1",
            warnOnly: false,
            log: () => undefined,
        },
        { cache: seededCache([...cluster, ...ROLES]) },
    );
    const agent = new https.Agent({ keepAlive: true, maxSockets: 256, ca: caPem });
    const send = sender(agent);
    const out: BurstFigures[] = [];
    try {
        // Connections opened and code warmed first, as the API server's kept-alive connections are: a review of a
        // kind no rule reads on each connection, and one of each burst's binding.
        const widget = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "tenant-a" } };
        await Promise.all(
            Array.from({ length: burst }, (_, i) => send(hook.port, "/validate", review(`warm-${i}`, "warm", widget))),
        );
        for (const role of ["view", "cluster-admin"])
            await send(hook.port, "/validate", review(`warm-${role}`, "warm", toEveryAccount(-1, role)));
        for (const role of ["view", "cluster-admin"]) {
            const f = await oneBurst(send, { review: hook.port, health: hook.healthPort! }, stackObjects, role, burst);
            line(
                `  burst of ${burst} ${role} bindings to system:serviceaccounts, ${f.stacks.toLocaleString("en")} Stacks: statuses ${JSON.stringify(f.statuses)}, ${f.allowed} allowed, slowest ${f.slowestMs} ms, ${f.cpuMsPerBinding} ms of CPU a binding; another tenant's ${f.light.n} light reviews p50 ${f.light.p50Ms} ms, max ${f.light.maxMs} ms, ${f.light.refused} refused; /healthz p50 ${f.healthz.p50Ms} ms, max ${f.healthz.maxMs} ms; peak RSS ${f.peakRssMb} MB, heap ${f.peakHeapMb} MB`,
            );
            out.push(f);
        }
    } finally {
        agent.destroy();
        await hook.close();
    }
    return out;
}

/** Run alone: `npx ts-node --transpile-only bench/admission-burst.ts CERT KEY CA [STACKS] [BURST]`. */
if (require.main === module) {
    const [cert, key, ca, stacks, burst] = process.argv.slice(2);
    burstBenchmarks(
        { cert, key },
        fs.readFileSync(ca, "utf8"),
        (s) => console.log(s),
        Number(stacks ?? 10_000),
        Number(burst ?? 64),
    )
        .then(() => process.exit(0))
        .catch((e: unknown) => {
            console.error(e);
            process.exit(1);
        });
}
