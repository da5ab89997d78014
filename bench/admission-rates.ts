/**
 * The admission bench's load (bench/admission-load.ts): open-loop HTTPS POSTs of AdmissionReviews at a fixed rate
 * from a process of its own, their latencies and throughput, and the CPU time a review costs the webhook (its
 * process, or this one) and the API server and etcd (by pid, from /proc).
 */
import * as fs from "fs";
import { spawn } from "child_process";

/**
 * The load generator, run in a process of its own (its CPU is not the webhook's): open-loop HTTPS POSTs at
 * `rate` for `warmSeconds` then for `seconds`, on one pool of kept-alive connections, presenting `cert` when
 * given; the latencies of each part apart. Its parameters on stdin, its results on stdout.
 */
const LOADGEN = `
const w = JSON.parse(require("fs").readFileSync(0, "utf8"));
const https = require("https");
const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca: w.ca, cert: w.cert, key: w.key });
const warm = Math.round(w.rate * w.warmSeconds);
const total = warm + Math.round(w.rate * w.seconds);
const latencies = [], warmLatencies = [];
let errors = 0, inFlight = 0, sent = 0, lastEnd = 0;
const started = process.hrtime.bigint();
const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
function one(i) {
  const body = w.bodies[i % w.bodies.length];
  const t0 = ms();
  inFlight++;
  const req = https.request({ host: "127.0.0.1", port: w.port, path: "/validate", method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
    res.on("data", () => {});
    res.on("end", () => {
      inFlight--;
      lastEnd = ms();
      if (res.statusCode !== 200) errors += i >= warm ? 1 : 0;
      else (i >= warm ? latencies : warmLatencies).push(lastEnd - t0);
      done();
    });
  });
  req.on("error", () => { inFlight--; errors += i >= warm ? 1 : 0; done(); });
  req.end(body);
}
function done() { if (sent >= total && inFlight === 0) finish(); }
function finish() {
  agent.destroy();
  const wall = (lastEnd - w.warmSeconds * 1000) / 1000;
  process.stdout.write(JSON.stringify({ latencies, warmLatencies, errors, wall }));
}
const interval = 1000 / w.rate;
function tick() {
  const due = Math.min(total, Math.floor(ms() / interval) + 1);
  while (sent < due) one(sent++);
  if (sent < total) setTimeout(tick, Math.max(0, interval / 2));
}
tick();
`;

function percentile(sorted: number[], p: number): number {
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface RunFigures {
    /** CPU time a review: the webhook's process, and the API server's and etcd's (as deployed). */
    cpuMsPerReview: number;
    serverCpuMsPerReview?: number;
    requests: number;
    errors: number;
    throughputPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    /** p99 of the seconds before the measured ones, while the load generator opened its connections. */
    openingP99Ms: number;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 when unreadable. */
function processCpuSeconds(pid: number): number {
    try {
        // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ, 100 on Linux)
    } catch {
        return 0;
    }
}

/** Where the load goes: the webhook's port and CA, the client certificate it asks for, its process if its own. */
export interface LoadTarget {
    port: number;
    ca: string;
    /** A client certificate (PEM) to present, as the API server presents one to a webhook run with --client-ca. */
    client?: { cert: string; key: string };
    /** The webhook's process when it runs in one of its own (its CPU read from /proc); else this process's. */
    pid?: number;
}

export interface RateOptions {
    /** The API server's and etcd's processes, whose CPU a review is reported too. */
    serverPids?: number[];
    /** Seconds measured at each rate. */
    seconds?: number;
    rates?: number[];
    /** A short run at 50/s first, on connections of its own (JIT, TLS sessions, the webhook's reads). */
    warmUp?: boolean;
}

/**
 * Seconds at each rate before its measured seconds, on the same connections, not counted: the load generator
 * opens its connections as the rate needs them, where the API server keeps its connections to a webhook open
 * for as long as it runs. Their p99 is printed beside the figures.
 */
const OPENING_SECONDS = 2;

/** The CPU seconds used so far by `pid`, or by this process. */
function cpuSeconds(pid?: number): number {
    if (pid !== undefined) return processCpuSeconds(pid);
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
}

/**
 * Open-loop load at each of `rates` requests/s against a webhook; one line a rate, with the CPU time a review
 * costs the webhook (the load generator runs in its own process) and the API server and etcd. CPU time is a
 * figure a loaded machine barely changes, where latency is not.
 */
export async function measureRates(
    target: LoadTarget,
    bodies: string[],
    label: string,
    line: (s: string) => void,
    o: RateOptions = {},
): Promise<Record<string, RunFigures>> {
    const { serverPids = [], seconds = 15, rates = [50, 200], warmUp = true } = o;
    const run = (rate: number, seconds: number, warmSeconds: number) =>
        new Promise<{ latencies: number[]; warmLatencies: number[]; errors: number; wall: number }>(
            (resolve, reject) => {
                const child = spawn(process.execPath, ["-e", LOADGEN], { stdio: ["pipe", "pipe", "inherit"] });
                let out = "";
                child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
                child.on("error", reject);
                child.on("close", (code) => {
                    try {
                        resolve(JSON.parse(out));
                    } catch {
                        reject(new Error(`the load generator exited ${code} without results`));
                    }
                });
                const { port, ca, client } = target;
                child.stdin.end(JSON.stringify({ port, ca, ...client, rate, seconds, warmSeconds, bodies }));
            },
        );
    if (warmUp) await run(50, 2, 0); // warm-up (JIT, TLS sessions, the client's connections to the API server)
    const out: Record<string, RunFigures> = {};
    for (const rate of rates) {
        const cpu0 = cpuSeconds(target.pid);
        const server0 = serverPids.reduce((n, p) => n + processCpuSeconds(p), 0);
        const r = await run(rate, seconds, OPENING_SECONDS);
        const cpu = cpuSeconds(target.pid) - cpu0;
        const server = serverPids.reduce((n, p) => n + processCpuSeconds(p), 0) - server0;
        const sorted = [...r.latencies].sort((a, b) => a - b);
        const opening = [...r.warmLatencies].sort((a, b) => a - b);
        // CPU is read over the whole run, its opening seconds too.
        const answered = Math.max(1, sorted.length + opening.length + r.errors);
        const figures: RunFigures = {
            cpuMsPerReview: Math.round(((cpu * 1000) / answered) * 100) / 100,
            ...(serverPids.length > 0
                ? { serverCpuMsPerReview: Math.round(((server * 1000) / answered) * 100) / 100 }
                : {}),
            requests: sorted.length,
            errors: r.errors,
            throughputPerSecond: Math.round((sorted.length / r.wall) * 10) / 10,
            p50Ms: Math.round(percentile(sorted, 50) * 100) / 100,
            p99Ms: Math.round(percentile(sorted, 99) * 100) / 100,
            maxMs: Math.round(sorted[sorted.length - 1] * 100) / 100,
            openingP99Ms: Math.round(percentile(opening, 99) * 100) / 100,
        };
        out[`rate${rate}`] = figures;
        const cpuText = `CPU a review: webhook ${figures.cpuMsPerReview} ms${figures.serverCpuMsPerReview !== undefined ? `, API server + etcd ${figures.serverCpuMsPerReview} ms` : ""}`;
        line(
            `  ${label}, ${rate} req/s offered for ${seconds} s: ${figures.throughputPerSecond} req/s answered, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, errors ${figures.errors}; ${cpuText}; the ${OPENING_SECONDS} s before, connections opening: p99 ${figures.openingP99Ms} ms`,
        );
    }
    return out;
}
