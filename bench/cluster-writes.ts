/**
 * A cluster that is written to while the admission bench runs: a process of its own renews one Lease at a fixed
 * rate (open loop), as node agents and leader elections renew theirs. Every write moves the API server's
 * revision, so a review's fresh reads cannot be answered by reads made at an earlier revision (cluster/view.ts
 * SharedReads) between two writes. The API server's own writes are few (its identity lease, every 10 s), so
 * without this a bench measures a cluster nobody writes to.
 */
import { ChildProcess, spawn } from "child_process";
import * as k8s from "@kubernetes/client-node";

const WRITER = `
const { server, token, ca, rate } = JSON.parse(require("fs").readFileSync(0, "utf8"));
const https = require("https");
const agent = new https.Agent({ keepAlive: true, ca });
const url = new URL(server);
const path = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const name = "pko-guard-bench-heartbeat";
let writes = 0, errors = 0;
function send(method, p, type, body) {
  return new Promise((resolve) => {
    const req = https.request({ host: url.hostname, port: url.port, path: p, method, agent,
      headers: { Authorization: "Bearer " + token, "Content-Type": type, "Content-Length": Buffer.byteLength(body) } },
      (res) => { res.resume(); res.on("end", () => resolve(res.statusCode)); });
    req.on("error", () => resolve(0));
    req.end(body);
  });
}
function renew() {
  const body = JSON.stringify({ spec: { renewTime: new Date().toISOString().replace("Z", "000Z") } });
  send("PATCH", path + "/" + name, "application/merge-patch+json", body).then((s) => (s === 200 ? writes++ : errors++));
}
process.on("SIGTERM", () => { process.stdout.write(JSON.stringify({ writes, errors })); process.exit(0); });
send("POST", path, "application/json", JSON.stringify({ apiVersion: "coordination.k8s.io/v1", kind: "Lease",
  metadata: { name }, spec: { holderIdentity: "pko-guard-bench" } })).then((s) => {
  process.stdout.write(s === 201 || s === 409 ? "ready\\n" : "failed " + s + "\\n");
  const started = Date.now();
  let sent = 0;
  (function tick() {
    const due = Math.floor(((Date.now() - started) / 1000) * rate) + 1;
    while (sent < due) { sent++; renew(); }
    setTimeout(tick, Math.max(1, 500 / rate));
  })();
});
`;

export interface ClusterWrites {
    /** Stops writing; the writes the API server acknowledged, and those it refused or that failed. */
    stop(): Promise<{ writes: number; errors: number }>;
}

/** Starts renewing a Lease `rate` times a second through `kc`'s API server; resolves once the first write landed. */
export function startClusterWrites(kc: k8s.KubeConfig, rate: number): Promise<ClusterWrites> {
    const cluster = kc.getCurrentCluster();
    const user = kc.getCurrentUser();
    if (!cluster || !user?.token) return Promise.reject(new Error("the kubeconfig has no server or token"));
    const ca = cluster.caData ? Buffer.from(cluster.caData, "base64").toString("utf8") : undefined;
    const child: ChildProcess = spawn(process.execPath, ["-e", WRITER], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    const ended = new Promise<string>((resolve) => child.on("close", () => resolve(out)));
    return new Promise<ClusterWrites>((resolve, reject) => {
        child.stdout!.on("data", (c: Buffer) => {
            out += c.toString("utf8");
            if (!out.includes("\n")) return;
            const first = out.slice(0, out.indexOf("\n"));
            out = out.slice(out.indexOf("\n") + 1);
            if (first !== "ready") {
                child.kill("SIGKILL");
                return reject(new Error(`the cluster writer could not create its Lease (${first})`));
            }
            resolve({
                stop: async () => {
                    child.kill("SIGTERM");
                    const text = await ended;
                    try {
                        return JSON.parse(text) as { writes: number; errors: number };
                    } catch {
                        return { writes: 0, errors: 0 };
                    }
                },
            });
        });
        child.on("error", reject);
        child.stdin!.end(JSON.stringify({ server: cluster.server, token: user.token, ca, rate }));
    });
}
