/**
 * npm run bench: figures and ratios measured in one run on this machine, printed and written to
 * bench/results.json. Not a test: nothing here asserts a timing. Its parts (`--only`, below) are described,
 * with their figures, in docs/contributing/benchmarks.md, "The bench". The preview parts need the toolchain
 * (npm run setup); without it they are reported as not measured.
 */
import "../support/fatal";
import { spawn } from "child_process";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import * as readline from "readline";
import { REPO_ROOT } from "../support/paths";
import { platformProgram } from "./programs";
import {
    PackServer,
    analyzeInProcess,
    noopPack,
    reportingFloorPack,
    requests,
    sdkHandlers,
    timeAsync,
} from "./analyzer-path";
import {
    PartRecord,
    ResultsFile,
    loadAverage,
    median,
    partRecord,
    readPrevious,
    renderTable,
    tableRows,
    writeResults,
} from "./figures";
import { Figure, PartOutput } from "./types";

const line = (s: string) => process.stdout.write(s + "\n");
const THROUGHPUT_TARGET = { op: ">=", value: 20000, source: "printed target" } as const;
const FLOOR_ROUNDS = 5;

/**
 * 1 and 2: the whole pack on the analyzer's real path, in process (bench/analyzer-path.ts): the SDK's own
 * Analyze handler per resource, one after the other, then its AnalyzeStack handler once.
 */
/** The order the pack and both floors run in, round by round: each first, second and third in turn. */
const ROTATION = [
    ["floor", "pack", "reporting"],
    ["pack", "reporting", "floor"],
    ["reporting", "floor", "pack"],
] as const;

/**
 * Rounds of the pack and both floors over gRPC: the rotation twice, so that each runs first, second and third
 * twice (three rounds gave a ratio that moved by as much as the gap it measures: the reporting floor 1.04 to 1.13
 * of the plain floor from run to run).
 */
const GRPC_ROUNDS = 2 * ROTATION.length;

async function throughput(): Promise<PartOutput> {
    line(
        "== in-process, analyzer path (SDK Analyze per resource + AnalyzeStack; every policy deserializes and proxies its own copy)",
    );
    const h = sdkHandlers();
    const rows: Record<string, unknown> = {};
    const figures: Figure[] = [];
    for (const n of [1000, 10000, 50000]) {
        const reqs = requests(platformProgram(n));
        if (n < 50000) await analyzeInProcess(h, reqs); // warm-up (JIT)
        const ms = await timeAsync(() => analyzeInProcess(h, reqs), n >= 50000 ? 1 : 2);
        const perSecond = Math.round((n / ms) * 1000);
        rows[n] = { ms: Math.round(ms), resourcesPerSecond: perSecond };
        figures.push({
            name: `in-process throughput, ${n.toLocaleString("en")} resources`,
            value: perSecond,
            unit: "resources/s",
            target: THROUGHPUT_TARGET,
        });
        line(
            `  ${String(n).padStart(6)} resources: ${ms.toFixed(0).padStart(6)} ms  ${perSecond.toLocaleString("en")} resources/s  (target >= 20,000)`,
        );
    }
    // The SDK's floor on the same path: the pack's policies with the same hooks, doing nothing. Pack and floor
    // alternate round by round (the order swapped each round); the figure is the median of the rounds' ratios.
    const floorReqs = requests(platformProgram(10000));
    // Next to it, the floor that also reports the pack's findings (the same diagnostics, looked up): what the SDK
    // spends carrying findings, which the plain floor does not pay. Informational; the target is the plain floor's.
    const floor = sdkHandlers(noopPack());
    const reporting = sdkHandlers(await reportingFloorPack(floorReqs));
    await analyzeInProcess(floor, floorReqs);
    await analyzeInProcess(reporting, floorReqs);
    const paired: { pack: number; floor: number; reporting: number }[] = [];
    for (let i = 0; i < FLOOR_ROUNDS; i++) {
        const one = { pack: 0, floor: 0, reporting: 0 };
        for (const which of ROTATION[i % ROTATION.length]) {
            one[which] = await timeAsync(
                () => analyzeInProcess(which === "pack" ? h : which === "floor" ? floor : reporting, floorReqs),
                1,
            );
        }
        paired.push(one);
    }
    const floorMs = median(paired.map((p) => p.floor));
    const ratio = median(paired.map((p) => p.pack / p.floor));
    const reportingRatio = median(paired.map((p) => p.reporting / p.floor));
    const overReporting = median(paired.map((p) => p.pack / p.reporting));
    line(
        `  SDK floor (the pack's policies and hooks, no-ops), 10000 resources: ${floorMs.toFixed(0)} ms, ${Math.round((10000 / floorMs) * 1000).toLocaleString("en")} resources/s; ` +
            `pack / floor: ${ratio.toFixed(2)} (median of ${FLOOR_ROUNDS} rotating rounds; target <= 1.15)`,
    );
    line(
        `  floor that also reports the pack's findings / floor: ${reportingRatio.toFixed(2)}; pack / that floor: ${overReporting.toFixed(2)} (what carrying the findings costs the SDK; no target)`,
    );
    rows.sdkFloor10k = {
        ms: Math.round(floorMs),
        resourcesPerSecond: Math.round((10000 / floorMs) * 1000),
        packOverFloor: ratio,
        reportingOverFloor: reportingRatio,
        packOverReportingFloor: overReporting,
        rounds: paired,
    };
    figures.push({
        name: "pack / SDK floor time, in process, 10k resources",
        value: ratio,
        unit: "",
        target: { op: "<=", value: 1.15, source: "issue 23" },
    });
    return {
        data: {
            path: "in-process: @pulumi/policy server.js Analyze/AnalyzeStack handlers on protobuf requests",
            ...rows,
        },
        figures,
    };
}

async function stackScaling(): Promise<PartOutput> {
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
    return {
        data: { ms1k: t[1000], ms10k: t[10000], ratio },
        figures: [
            {
                name: "AnalyzeStack time at 10k / at 1k",
                value: ratio,
                unit: "",
                target: { op: "<=", value: 12, source: "printed target" },
            },
        ],
    };
}

/**
 * 3: the pack's analyzer over gRPC, end to end: bin/index.js started as the engine starts it, Analyze per
 * resource with one call in flight (what the v3.248 engine does for one pack), then AnalyzeStack. The
 * pipelined figure (8 calls in flight) is the pack's upper bound, not what a preview sees.
 */
async function overGrpc(): Promise<PartOutput> {
    const n = 10000;
    line(`== over gRPC, end to end (bin/index.js; Analyze x ${n} + AnalyzeStack)`);
    const data: Record<string, unknown> = {};
    const figures: Figure[] = [];
    const reqs = requests(platformProgram(n));
    // The pack and the floor (the SDK's server and transport with the pack's policies as no-ops) run side by
    // side, rounds alternating; the ratio is the median of the rounds' ratios.
    // Next to them, informational: the floor that also reports the pack's findings (bench/noop-pack.ts).
    const server = await PackServer.start(REPO_ROOT);
    const floor = await PackServer.start(REPO_ROOT, true);
    const reporting = await PackServer.start(REPO_ROOT, true, n);
    try {
        await server.analyze(reqs, 1); // warm-up (JIT, connection)
        await floor.analyze(reqs, 1);
        await reporting.analyze(reqs, 1);
        const seq: number[] = [];
        const floorSeq: number[] = [];
        const reportingSeq: number[] = [];
        for (let i = 0; i < GRPC_ROUNDS; i++) {
            for (const which of ROTATION[i % ROTATION.length]) {
                if (which === "pack") seq.push(await timeAsync(() => server.analyze(reqs, 1), 1));
                else if (which === "floor") floorSeq.push(await timeAsync(() => floor.analyze(reqs, 1), 1));
                else reportingSeq.push(await timeAsync(() => reporting.analyze(reqs, 1), 1));
            }
        }
        const piped = await timeAsync(() => server.analyze(reqs, 8), 1);
        const seqRate = Math.round((n / median(seq)) * 1000);
        const pipedRate = Math.round((n / piped) * 1000);
        const floorRate = Math.round((n / median(floorSeq)) * 1000);
        const ratio = median(seq.map((ms, i) => ms / floorSeq[i]));
        line(
            `  sequential (the engine: one Analyze in flight): ${seqRate.toLocaleString("en")} resources/s  (target >= 3,000)`,
        );
        line(
            `  pipelined (8 in flight, upper bound): ${pipedRate.toLocaleString("en")} resources/s; sequential/pipelined ${(median(seq) / piped).toFixed(2)}`,
        );
        const reportingRatio = median(reportingSeq.map((ms, i) => ms / floorSeq[i]));
        const overReporting = median(seq.map((ms, i) => ms / reportingSeq[i]));
        line(
            `  SDK floor over gRPC (no-op pack of the same shape), sequential: ${floorRate.toLocaleString("en")} resources/s; pack / floor time: ${ratio.toFixed(2)} (median of ${GRPC_ROUNDS} rotating rounds; target <= 1.10)`,
        );
        line(
            `  floor that also reports the pack's findings / floor: ${reportingRatio.toFixed(2)}; pack / that floor: ${overReporting.toFixed(2)} (carrying, encoding and decoding the findings; no target)`,
        );
        Object.assign(data, {
            resources: n,
            sequentialPerSecond: seqRate,
            pipelinedPerSecond: pipedRate,
            inFlight: 8,
            floorSequentialPerSecond: floorRate,
            packOverFloor: ratio,
            reportingOverFloor: reportingRatio,
            packOverReportingFloor: overReporting,
        });
        figures.push({
            name: `over gRPC, sequential, ${n.toLocaleString("en")} resources`,
            value: seqRate,
            unit: "resources/s",
            target: { op: ">=", value: 3000, source: "printed target" },
        });
        figures.push({
            name: `pack / SDK floor time over gRPC, ${n.toLocaleString("en")} resources`,
            value: ratio,
            unit: "",
            target: { op: "<=", value: 1.1, source: "issue 23" },
        });
    } finally {
        server.stop();
        floor.stop();
        reporting.stop();
    }
    return { data, figures };
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

async function startup(): Promise<PartOutput> {
    line("== analyzer start-up (time to printed port)");
    const js: number[] = [];
    const ts: number[] = [];
    for (let i = 0; i < 3; i++) {
        js.push(await startAnalyzer([path.join(REPO_ROOT, "bin", "index.js")]));
        ts.push(await startAnalyzer(["-r", "ts-node/register/transpile-only", path.join(REPO_ROOT, "index.ts")]));
    }
    const jsMs = Math.min(...js);
    const tsMs = Math.min(...ts);
    line(
        `  precompiled JavaScript: ${jsMs.toFixed(0)} ms, ts-node (transpile-only): ${tsMs.toFixed(0)} ms, ratio JS/ts-node: ${(jsMs / tsMs).toFixed(2)}`,
    );
    return { data: { jsMs, tsNodeMs: tsMs, ratio: jsMs / tsMs }, figures: [] };
}

/** `npm run bench -- --only throughput,stack,grpc,startup,peers,real,legs,check,admission,hostile,harness` runs some parts (default: all). */
function parts(): Set<string> {
    const i = process.argv.indexOf("--only");
    const all = [
        "throughput",
        "stack",
        "grpc",
        "startup",
        "peers",
        "real",
        "legs",
        "check",
        "admission",
        "hostile",
        "harness",
    ];
    if (i < 0) return new Set(all);
    const chosen = (process.argv[i + 1] ?? "").split(",").filter(Boolean);
    const bad = chosen.filter((p) => !all.includes(p));
    if (chosen.length === 0 || bad.length > 0)
        throw new Error(`--only takes a comma-separated list of ${all.join(", ")}`);
    return new Set(chosen);
}

/** Each part as a function; the order of a full run. */
function partRunners(): Record<string, () => Promise<PartOutput>> {
    return {
        throughput,
        stack: stackScaling,
        grpc: overGrpc,
        startup,
        peers: async () => (await import("./peers")).peers(line),
        real: async () => (await import("./preview-speed")).realBenchmarks(line, { pack: true, legs: false }),
        legs: async () => (await import("./preview-speed")).realBenchmarks(line, { pack: false, legs: true }),
        check: async () => (await import("./check-speed")).checkBenchmarks(line),
        admission: async () => (await import("./admission-load")).admissionBenchmarks(line),
        hostile: async () => (await import("./hostile")).hostileBenchmarks(line),
        harness: async () => (await import("./harness-speed")).harnessBenchmarks(line),
    };
}

async function main(): Promise<void> {
    const only = parts();
    const startedAt = new Date();
    const runBefore = loadAverage();
    const measured: Record<string, PartRecord> = {};
    for (const [name, run] of Object.entries(partRunners())) {
        if (!only.has(name)) continue;
        const at = new Date();
        const before = loadAverage();
        measured[name] = partRecord(await run(), at, before);
    }
    // Merged into the previous file: the parts not run this time keep their latest figures.
    const merged = { ...readPrevious(line), ...measured };
    const file: ResultsFile = {
        format: 2,
        updatedAt: new Date().toISOString(),
        lastRun: {
            parts: Object.keys(measured),
            startedAt: startedAt.toISOString(),
            node: process.version,
            cpus: os.cpus().length,
            loadAverageBefore: runBefore,
            loadAverageAfter: loadAverage(),
        },
        parts: merged,
        table: tableRows(merged),
    };
    for (const l of renderTable(file)) line(l);
    writeResults(file);
    line(`results written to ${path.relative(process.cwd(), path.join(REPO_ROOT, "bench", "results.json"))}`);
}

main().catch((e) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
});
