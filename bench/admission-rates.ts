/**
 * The admission bench's load (bench/admission-load.ts): open-loop HTTPS POSTs of AdmissionReviews at a fixed rate
 * from a process of its own, their latencies and throughput, and the CPU time a review costs the webhook (this
 * process) and the API server and etcd (by pid, from /proc).
 */
import * as fs from "fs";
import { spawn } from "child_process";

/**
 * The load generator, run in a process of its own (so the webhook's CPU time is the bench process's alone):
 * open-loop HTTPS POSTs at `rate` for `seconds`; its parameters on stdin, its results on stdout.
 */
const LOADGEN = `
const workerData = JSON.parse(require("fs").readFileSync(0, "utf8"));
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
  process.stdout.write(JSON.stringify({ latencies, errors, wall }));
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

/**
 * Open-loop load at each of `rates` requests/s against a webhook on `port`; one line a rate, with the CPU time a
 * review costs this process (the webhook; the load generator runs in its own) and `serverPids` (the API
 * server and etcd). CPU time is a figure a loaded machine barely changes, where latency is not.
 */
export async function measureRates(
    port: number,
    caPem: string,
    bodies: string[],
    label: string,
    line: (s: string) => void,
    serverPids: number[] = [],
    seconds = 15,
    rates = [50, 200],
    warmUp = true,
): Promise<Record<string, RunFigures>> {
    const run = (rate: number, seconds: number) =>
        new Promise<{ latencies: number[]; errors: number; wall: number }>((resolve, reject) => {
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
            child.stdin.end(JSON.stringify({ port, ca: caPem, rate, seconds, bodies }));
        });
    if (warmUp) await run(50, 2); // warm-up (JIT, TLS sessions, the client's connections to the API server)
    const out: Record<string, RunFigures> = {};
    for (const rate of rates) {
        const cpu0 = process.cpuUsage();
        const server0 = serverPids.reduce((n, p) => n + processCpuSeconds(p), 0);
        const r = await run(rate, seconds);
        const cpu = process.cpuUsage(cpu0);
        const server = serverPids.reduce((n, p) => n + processCpuSeconds(p), 0) - server0;
        const sorted = [...r.latencies].sort((a, b) => a - b);
        const answered = Math.max(1, sorted.length + r.errors);
        const figures: RunFigures = {
            cpuMsPerReview: Math.round(((cpu.user + cpu.system) / 1000 / answered) * 100) / 100,
            ...(serverPids.length > 0
                ? { serverCpuMsPerReview: Math.round(((server * 1000) / answered) * 100) / 100 }
                : {}),
            requests: sorted.length,
            errors: r.errors,
            throughputPerSecond: Math.round((sorted.length / r.wall) * 10) / 10,
            p50Ms: Math.round(percentile(sorted, 50) * 100) / 100,
            p99Ms: Math.round(percentile(sorted, 99) * 100) / 100,
            maxMs: Math.round(sorted[sorted.length - 1] * 100) / 100,
        };
        out[`rate${rate}`] = figures;
        const cpuText = `CPU a review: webhook ${figures.cpuMsPerReview} ms${figures.serverCpuMsPerReview !== undefined ? `, API server + etcd ${figures.serverCpuMsPerReview} ms` : ""}`;
        line(
            `  ${label}, ${rate} req/s offered for ${seconds} s: ${figures.throughputPerSecond} req/s answered, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, errors ${figures.errors}; ${cpuText}`,
        );
    }
    return out;
}
