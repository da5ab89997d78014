/**
 * The pack's start-up and the benchmark's parts that need the real toolchain: the pack's start-up to
 * GetAnalyzerInfo (today's plain entry vs the lean one, with where the lean one's time goes), its
 * overhead on a real preview of a 50-resource program, and mock leg vs real leg time over the fixtures.
 * Every comparison is interleaved in one run (round by round) and reported as medians.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import { Fixture } from "../harness/expect";
import { prepareFixtureStack } from "../harness/legs/real";
import { previewWithPack } from "../core/pulumi";
import { exec } from "../core/process";
import { PACK_DIR, PACK_ENTRY, PLAIN_PACK_ENTRY, REPO_ROOT } from "../core/paths";
import { loadFixtures, runFixtures } from "../harness/runner";
import { Toolchain, findToolchain } from "../core/toolchain";
import { policies } from "../policies";
import { RUN_POLICY_PACK, startAndAsk } from "../test/pack/start";
import { Figure, PartOutput } from "./types";

const ROUNDS = 5;
const ENGINE = "127.0.0.1:1"; // run-policy-pack's engine argument; the pack never dials it

function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
}

/**
 * Today's pack as a folder: the plain compiled entry (bin/index.js, the whole SDK index), started
 * without the TypeScript stand-in, i.e. PulumiPolicy.yaml without nodeargs, as before the lean entry.
 */
function todayPackDir(tmp: string): string {
    const dir = path.join(tmp, "today-pack");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "PulumiPolicy.yaml"), "runtime:\n  name: nodejs\n  options:\n    typescript: false\n");
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "pko-guard-today", version, main: "index.js" }));
    fs.writeFileSync(path.join(dir, "index.js"), `require(${JSON.stringify(PLAIN_PACK_ENTRY)});\n`);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    return dir;
}

/**
 * A comparison pack built the way the pko-guard pack is (lean bundle, the same PulumiPolicy.yaml with its
 * preload), under .cache/bench-packs so that the bundler resolves the repository's packages: `policies`
 * no-op policies, as many resource and stack policies as pko-guard has when `policies` is "like-pko-guard".
 */
async function comparisonPack(name: string, policyCount: number | "like-pko-guard"): Promise<string> {
    const dir = path.join(REPO_ROOT, ".cache", "bench-packs", name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
    const shapes = policyCount === "like-pko-guard" ? policies.map((p) => ("validateStack" in p ? "validateStack" : "validateResource")) : Array.from({ length: policyCount }, () => "validateResource");
    const entry = [
        `import { PolicyPack } from "@pulumi/policy";`,
        `process.chdir(require("path").join(__dirname, ".."));`,
        `const shapes = ${JSON.stringify(shapes)};`,
        `new PolicyPack(${JSON.stringify(name)}, { policies: shapes.map((s, i) => ({ name: "noop-" + i, description: "does nothing", enforcementLevel: "advisory", [s]: () => undefined })) });`,
    ].join("\n");
    fs.writeFileSync(path.join(dir, "entry.ts"), entry);
    // The compiled build script (it finds the repository from its own place, bin/pack/).
    const { bundleLeanEntry } = require(path.join(REPO_ROOT, "bin", "pack", "build")) as typeof import("../pack/build");
    await bundleLeanEntry(path.join(dir, "entry.ts"), path.join(dir, "dist", "index.js"));
    fs.copyFileSync(path.join(PACK_DIR, "dist", "preload.js"), path.join(dir, "dist", "preload.js"));
    fs.copyFileSync(path.join(PACK_DIR, "PulumiPolicy.yaml"), path.join(dir, "PulumiPolicy.yaml"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0", main: "dist/index.js" }));
    return dir;
}

/** Milliseconds for `node args` to exit (for the breakdown's fixed parts). */
function runMs(args: string[]): number {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: PACK_DIR, stdio: "ignore" });
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed`);
    return performance.now() - t;
}

/**
 * The pack's start-up to GetAnalyzerInfo answered, as our language host starts it (run-policy-pack,
 * nodeargs before the script), today's plain entry vs the lean one, interleaved; then where the lean
 * start-up's time goes.
 */
export async function packStartup(line: (s: string) => void): Promise<Record<string, unknown>> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bench-start-"));
    try {
        const today = todayPackDir(tmp);
        const series: Record<string, number[]> = { today: [], lean: [], leanNoPreload: [], leanDirect: [], nodeBoot: [], sdkSubpaths: [], fullIndex: [] };
        const sdkSubpaths =
            "for (const m of ['@pulumi/pulumi/asset','@pulumi/pulumi/output','@pulumi/pulumi/runtime/rpc','@pulumi/pulumi/proto/analyzer_grpc_pb','@pulumi/pulumi/proto/plugin_pb','@grpc/grpc-js']) require(m)";
        for (let i = 0; i < ROUNDS; i++) {
            series.today.push((await startAndAsk({ script: RUN_POLICY_PACK, scriptArgs: [ENGINE, today], cwd: today, trace: false })).infoMs);
            series.lean.push((await startAndAsk({ nodeArgs: ["--require", "./dist/preload.js"], script: RUN_POLICY_PACK, scriptArgs: [ENGINE, PACK_DIR], cwd: PACK_DIR, trace: false })).infoMs);
            series.leanNoPreload.push((await startAndAsk({ script: RUN_POLICY_PACK, scriptArgs: [ENGINE, PACK_DIR], cwd: PACK_DIR, trace: false })).infoMs);
            series.leanDirect.push((await startAndAsk({ script: PACK_ENTRY, cwd: PACK_DIR, trace: false })).infoMs);
            series.nodeBoot.push(runMs(["-e", "0"]));
            series.sdkSubpaths.push(runMs(["-e", sdkSubpaths]));
            series.fullIndex.push(runMs(["-e", "require('@pulumi/pulumi')"]));
        }
        const m = Object.fromEntries(Object.entries(series).map(([k, v]) => [k, median(v)]));
        line(`  start-up to GetAnalyzerInfo (median of ${ROUNDS}, interleaved): today ${m.today.toFixed(0)} ms, lean ${m.lean.toFixed(0)} ms; lean/today ${(m.lean / m.today).toFixed(2)}`);
        line(`  lean where a host ignores nodeargs (upstream's): ${m.leanNoPreload.toFixed(0)} ms (${(m.leanNoPreload / m.today).toFixed(2)} of today)`);
        line(
            `  lean start-up breakdown: node boot ${m.nodeBoot.toFixed(0)} ms; SDK subpaths + grpc-js the pack needs ${(m.sdkSubpaths - m.nodeBoot).toFixed(0)} ms; ` +
                `rest of the lean entry (bundle, policies, server, gRPC round trip) ${(m.leanDirect - m.sdkSubpaths).toFixed(0)} ms; run-policy-pack's own loads ${(m.lean - m.leanDirect).toFixed(0)} ms ` +
                `(for scale: the SDK index alone ${(m.fullIndex - m.nodeBoot).toFixed(0)} ms)`,
        );
        return { rounds: ROUNDS, medianMs: m, ratioLeanToday: m.lean / m.today };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

export async function packOverhead(toolchain: Toolchain, line: (s: string) => void): Promise<Record<string, unknown>> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bench-"));
    try {
        const fixture: Fixture = {
            name: "program50",
            dir: path.join(REPO_ROOT, "bench", "program50"),
            project: "bench-program50",
            expect: { description: "bench", stack: "dev", config: {}, violations: [] },
        };
        const prepared = await prepareFixtureStack(fixture, toolchain, tmp, 300000);
        if ("error" in prepared) throw new Error(prepared.error);
        const descriptions = new Map(policies.map((p) => [p.name, p.description]));
        const today = todayPackDir(tmp);
        const onePolicy = await comparisonPack("one-noop-policy", 1);
        const noop = await comparisonPack("noop-like-pko-guard", "like-pko-guard");
        const without: number[] = [];
        const lean: number[] = [];
        const plain: number[] = [];
        const one: number[] = [];
        const noops: number[] = [];
        const withPack = async (packDir: string, into: number[]) => {
            const t = performance.now();
            const p = await previewWithPack(prepared, { dir: packDir, descriptions });
            if (p.error) throw new Error(p.error);
            into.push(performance.now() - t);
        };
        for (let i = 0; i < ROUNDS; i++) {
            const t = performance.now();
            const r = await exec(toolchain.pulumi, ["preview", "-s", prepared.stack, "--non-interactive"], { cwd: prepared.cwd, env: prepared.env, timeoutMs: 300000 });
            if (r.code !== 0) throw new Error(`preview without the pack failed: ${r.stderr.split("\n")[0]}`);
            without.push(performance.now() - t);
            await withPack(PACK_DIR, lean);
            await withPack(today, plain);
            await withPack(onePolicy, one);
            await withPack(noop, noops);
        }
        const a = median(without);
        const b = median(lean);
        const c = median(plain);
        const d = median(one);
        const e = median(noops);
        line(`  50-resource preview (median of ${ROUNDS}, interleaved): without pack ${a.toFixed(0)} ms, lean pack ${b.toFixed(0)} ms, today's pack ${c.toFixed(0)} ms`);
        line(`  ratio lean/without ${(b / a).toFixed(2)} (target <= 1.15); today/without ${(c / a).toFixed(2)}`);
        line(
            `  where the lean pack's ${(b - a).toFixed(0)} ms go (packs built and started the same way): any pack at all (one no-op policy: start-up, ` +
                `Analyze per resource, AnalyzeStack, shutdown) ${(d - a).toFixed(0)} ms (ratio ${(d / a).toFixed(2)}); the SDK's per-policy work ` +
                `(${policies.length} no-op policies) ${(e - d).toFixed(0)} ms; pko-guard's rules ${(b - e).toFixed(0)} ms`,
        );
        return {
            rounds: ROUNDS,
            withoutMs: a,
            leanMs: b,
            todayMs: c,
            onePolicyMs: d,
            noopLikePkoGuardMs: e,
            ratio: b / a,
            ratioToday: c / a,
            ratioOnePolicy: d / a,
            overheadPercent: ((b - a) / a) * 100,
        };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

async function legs(line: (s: string) => void): Promise<Record<string, unknown>> {
    const fixtures = loadFixtures([]);
    const t = performance.now();
    const verdicts = await runFixtures(fixtures, { leg: "both", timeoutMs: 300000 });
    const wall = performance.now() - t;
    const pairs = verdicts.map((v) => ({ mock: v.legs.find((l) => l.leg === "mock"), real: v.legs.find((l) => l.leg === "real") })).filter((p) => p.mock?.status === "ran" && p.real?.status === "ran");
    const ratios = pairs.map((p) => p.mock!.durationMs / p.real!.durationMs);
    const mockTotal = pairs.reduce((n, p) => n + p.mock!.durationMs, 0);
    const realTotal = pairs.reduce((n, p) => n + p.real!.durationMs, 0);
    line(`  per fixture (${pairs.length} run in both legs): mock/real median ${median(ratios).toFixed(2)}, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}`);
    line(`  whole fixture set: mock leg ${(mockTotal / 1000).toFixed(1)} s, real leg ${(realTotal / 1000).toFixed(1)} s (ratio ${(mockTotal / realTotal).toFixed(2)}); both legs wall time ${(wall / 1000).toFixed(1)} s`);
    return { fixtures: pairs.length, medianMockOverReal: median(ratios), mockTotalMs: mockTotal, realTotalMs: realTotal, wallBothMs: wall };
}

export async function realBenchmarks(line: (s: string) => void, parts: { pack: boolean; legs: boolean }): Promise<PartOutput> {
    const data = await realData(line, parts);
    const overhead = data.packOverhead as { ratio: number; leanMs: number; onePolicyMs: number } | undefined;
    const note = overhead ? {} : { note: "toolchain missing" };
    const figures: Figure[] = parts.pack
        ? [
              { name: "50-resource preview, lean pack / without a pack", value: overhead?.ratio ?? null, unit: "", target: { op: "<=", value: 1.15, source: "printed target" }, ...note },
              {
                  name: "50-resource preview, lean pack / one-no-op-policy pack",
                  value: overhead ? overhead.leanMs / overhead.onePolicyMs : null,
                  unit: "",
                  target: { op: "<=", value: 1.05, source: "issue 23" },
                  ...note,
              },
          ]
        : [];
    return { data, figures };
}

async function realData(line: (s: string) => void, parts: { pack: boolean; legs: boolean }): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    if (parts.pack) {
        line("== the pack's start-up");
        out.packStartup = await packStartup(line);
    }
    let toolchain: Toolchain;
    try {
        toolchain = findToolchain();
    } catch (e) {
        line(`== real preview: not measured (${(e as Error).message})`);
        return { ...out, realPreview: "not measured: toolchain missing" };
    }
    if (parts.pack) {
        line("== pack overhead on a real preview");
        out.packOverhead = await packOverhead(toolchain, line);
    }
    if (parts.legs) {
        line("== mock leg vs real leg");
        out.legs = await legs(line);
    }
    return out;
}
