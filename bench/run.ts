/**
 * npm run bench: figures and ratios measured in one run on this machine, printed and written to
 * bench/results.json. Not a test: nothing here asserts a timing.
 *
 *  1. throughput of the whole pack on the analyzer's real path, in process (resources/s at 1k, 10k, 50k): the
 *     SDK's own Analyze handler per resource and AnalyzeStack once (bench/analyzer-path.ts);
 *  2. stack-level scaling on that path: AnalyzeStack at 10k resources / at 1k (linear is 10);
 *  2b. the pack over gRPC end to end (bin/index.js), Analyze calls sequential as the engine sends them;
 *  3. the pack's analyzer start-up: precompiled JavaScript / ts-node;
 *  4. the pack's start-up to GetAnalyzerInfo (lean vs plain entry) and its overhead on a real preview of a
 *     50-resource program (with the pack / without, and where the difference goes: bench/real.ts);
 *  5. mock leg / real leg time per fixture, and each leg's wall time over the whole fixture set;
 *  6. peers (conftest, Kyverno) against `pko-guard check` (bench/peers.ts), and `pko-guard check` itself
 *     on generated repositories (bench/check.ts);
 *  7. admission: the webhook's latency (p50, p99) and throughput at 50 and 200 requests/s with a cache of 10k
 *     objects, and the cache's memory at 10k and 100k objects (bench/admission.ts);
 *  8. hostile inputs to `pko-guard check` (bench/hostile.ts): time and peak memory on alias bombs, endless
 *     standard input, long dotted field paths, many documents, huge keys, deep flow collections.
 * The preview parts of 4 and 5 need the toolchain (npm run setup); without it they are reported as not measured.
 */
import "../core/fatal";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import * as readline from "readline";
import { REPO_ROOT } from "../core/paths";
import { platformProgram } from "./programs";
import { PackServer, analyzeInProcess, noopPack, requests, sdkHandlers, timeAsync } from "./analyzer-path";

const results: Record<string, unknown> = { machine: { cpus: os.cpus().length, node: process.version }, measuredAt: new Date().toISOString() };
const line = (s: string) => process.stdout.write(s + "\n");

/**
 * 1 and 2: the whole pack on the analyzer's real path, in process (bench/analyzer-path.ts): the SDK's own
 * Analyze handler per resource, one after the other, then its AnalyzeStack handler once.
 */
async function throughput(): Promise<void> {
    line("== in-process, analyzer path (SDK Analyze per resource + AnalyzeStack; every policy deserializes and proxies its own copy)");
    const h = sdkHandlers();
    const rows: Record<string, unknown> = {};
    for (const n of [1000, 10000, 50000]) {
        const reqs = requests(platformProgram(n));
        if (n < 50000) await analyzeInProcess(h, reqs); // warm-up (JIT)
        const ms = await timeAsync(() => analyzeInProcess(h, reqs), n >= 50000 ? 1 : 2);
        const perSecond = Math.round((n / ms) * 1000);
        rows[n] = { ms: Math.round(ms), resourcesPerSecond: perSecond };
        line(`  ${String(n).padStart(6)} resources: ${ms.toFixed(0).padStart(6)} ms  ${perSecond.toLocaleString("en")} resources/s  (target >= 20,000)`);
    }
    // The SDK's floor on the same path: the same number of policies, doing nothing.
    const floorReqs = requests(platformProgram(10000));
    const floor = sdkHandlers(noopPack());
    await analyzeInProcess(floor, floorReqs);
    const floorMs = await timeAsync(() => analyzeInProcess(floor, floorReqs), 2);
    const packMs = (rows[10000] as { ms: number }).ms;
    line(
        `  SDK floor (same number of no-op policies), 10000 resources: ${floorMs.toFixed(0)} ms, ${Math.round((10000 / floorMs) * 1000).toLocaleString("en")} resources/s; pack / floor: ${(packMs / floorMs).toFixed(2)}`,
    );
    rows.sdkFloor10k = { ms: Math.round(floorMs), resourcesPerSecond: Math.round((10000 / floorMs) * 1000), packOverFloor: packMs / floorMs };
    results.throughput = { path: "in-process: @pulumi/policy server.js Analyze/AnalyzeStack handlers on protobuf requests", ...rows };
}

async function stackScaling(): Promise<void> {
    line("== stack-level scaling (AnalyzeStack, every stack policy of the pack, analyzer path)");
    const h = sdkHandlers();
    const t: Record<number, number> = {};
    for (const n of [1000, 10000]) {
        const reqs = requests(platformProgram(n));
        await analyzeInProcess(h, reqs, { resources: false }); // warm-up (JIT)
        t[n] = await timeAsync(() => analyzeInProcess(h, reqs, { resources: false }), 3);
        line(`  ${String(n).padStart(6)} resources: ${t[n].toFixed(1)} ms`);
    }
    const ratio = t[10000] / t[1000];
    line(`  ratio 10k/1k: ${ratio.toFixed(1)} (linear is 10; target <= 12)`);
    results.stackScaling = { ms1k: t[1000], ms10k: t[10000], ratio };
}

/**
 * 3: the pack's analyzer over gRPC, end to end: bin/index.js started as the engine starts it, Analyze per
 * resource with one call in flight (what the v3.248 engine does for one pack), then AnalyzeStack. The
 * pipelined figure (8 calls in flight) is the pack's upper bound, not what a preview sees.
 */
async function overGrpc(): Promise<void> {
    const n = 2000;
    line(`== over gRPC, end to end (bin/index.js; Analyze x ${n} + AnalyzeStack)`);
    const server = await PackServer.start(REPO_ROOT);
    try {
        const reqs = requests(platformProgram(n));
        await server.analyze(reqs, 1); // warm-up (JIT, connection)
        const seq = await timeAsync(() => server.analyze(reqs, 1), 2);
        const piped = await timeAsync(() => server.analyze(reqs, 8), 2);
        const seqRate = Math.round((n / seq) * 1000);
        const pipedRate = Math.round((n / piped) * 1000);
        line(`  sequential (the engine: one Analyze in flight): ${seqRate.toLocaleString("en")} resources/s  (target >= 3,000)`);
        line(`  pipelined (8 in flight, upper bound): ${pipedRate.toLocaleString("en")} resources/s; sequential/pipelined ${(seq / piped).toFixed(2)}`);
        results.grpc = { resources: n, sequentialPerSecond: seqRate, pipelinedPerSecond: pipedRate, inFlight: 8 };
    } finally {
        server.stop();
    }
    // The floor: the SDK's server and the transport with the same number of no-op policies.
    const floor = await PackServer.start(REPO_ROOT, true);
    try {
        const reqs = requests(platformProgram(n));
        await floor.analyze(reqs, 1);
        const ms = await timeAsync(() => floor.analyze(reqs, 1), 2);
        const rate = Math.round((n / ms) * 1000);
        const own = (results.grpc as { sequentialPerSecond: number }).sequentialPerSecond;
        line(`  SDK floor over gRPC (no-op pack of the same shape), sequential: ${rate.toLocaleString("en")} resources/s; pack / floor time: ${(rate / own).toFixed(2)}`);
        Object.assign(results.grpc as object, { floorSequentialPerSecond: rate });
    } finally {
        floor.stop();
    }
}

function startAnalyzer(args: string[]): Promise<number> {
    return new Promise((resolve, reject) => {
        const t = performance.now();
        const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "ignore"] });
        readline.createInterface({ input: child.stdout! }).once("line", () => {
            const ms = performance.now() - t;
            child.kill();
            resolve(ms);
        });
        child.once("exit", (code) => reject(new Error(`pack exited with ${code}`)));
    });
}

async function startup(): Promise<void> {
    line("== analyzer start-up (time to printed port)");
    const js: number[] = [];
    const ts: number[] = [];
    for (let i = 0; i < 3; i++) {
        js.push(await startAnalyzer([path.join(REPO_ROOT, "bin", "index.js")]));
        ts.push(await startAnalyzer(["-r", "ts-node/register/transpile-only", path.join(REPO_ROOT, "index.ts")]));
    }
    const jsMs = Math.min(...js);
    const tsMs = Math.min(...ts);
    line(`  precompiled JavaScript: ${jsMs.toFixed(0)} ms, ts-node (transpile-only): ${tsMs.toFixed(0)} ms, ratio JS/ts-node: ${(jsMs / tsMs).toFixed(2)}`);
    results.startup = { jsMs, tsNodeMs: tsMs, ratio: jsMs / tsMs };
}

/** `npm run bench -- --only throughput,stack,grpc,startup,peers,real,legs,check,admission,hostile` runs some parts (default: all). */
function parts(): Set<string> {
    const i = process.argv.indexOf("--only");
    const all = ["throughput", "stack", "grpc", "startup", "peers", "real", "legs", "check", "admission", "hostile"];
    if (i < 0) return new Set(all);
    const chosen = (process.argv[i + 1] ?? "").split(",").filter(Boolean);
    const bad = chosen.filter((p) => !all.includes(p));
    if (chosen.length === 0 || bad.length > 0) throw new Error(`--only takes a comma-separated list of ${all.join(", ")}`);
    return new Set(chosen);
}

async function main(): Promise<void> {
    const only = parts();
    if (only.has("throughput")) await throughput();
    if (only.has("stack")) await stackScaling();
    if (only.has("grpc")) await overGrpc();
    if (only.has("startup")) await startup();
    if (only.has("peers")) {
        const { peers } = await import("./peers");
        Object.assign(results, await peers(line));
    }
    if (only.has("real") || only.has("legs")) {
        const { realBenchmarks } = await import("./real");
        Object.assign(results, await realBenchmarks(line, { pack: only.has("real"), legs: only.has("legs") }));
    }
    if (only.has("check")) Object.assign(results, await (await import("./check")).checkBenchmarks(line));
    if (only.has("admission")) Object.assign(results, await (await import("./admission")).admissionBenchmarks(line));
    if (only.has("hostile")) Object.assign(results, await (await import("./hostile")).hostileBenchmarks(line));
    const out = path.join(REPO_ROOT, "bench", "results.json");
    fs.writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
    line(`results written to ${path.relative(process.cwd(), out)}`);
}

main().catch((e) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
});
