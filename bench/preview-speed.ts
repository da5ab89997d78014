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
import { previewWithPack } from "../engine/pulumi-cli";
import { exec } from "../support/process";
import { PACK_DIR, PACK_ENTRY, REPO_ROOT } from "../support/paths";
import { loadFixtures, runFixtures } from "../harness/runner";
import { Toolchain, findToolchain } from "../support/toolchain";
import { policies } from "../policies/index";
import { RUN_POLICY_PACK, startAndAsk } from "../harness/pack-start";
import { Figure, PartOutput } from "./types";
import { median } from "./figures";
import { AWSGUARD_VERSION, awsguardPack, comparisonPack, todayPackDir } from "./comparison-packs";

const ROUNDS = 5;
const ENGINE = "127.0.0.1:1"; // run-policy-pack's engine argument; the pack never dials it

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
        const series: Record<string, number[]> = {
            today: [],
            lean: [],
            leanNoPreload: [],
            leanDirect: [],
            nodeBoot: [],
            sdkSubpaths: [],
            fullIndex: [],
        };
        const sdkSubpaths =
            "for (const m of ['@pulumi/pulumi/asset','@pulumi/pulumi/output','@pulumi/pulumi/runtime/rpc','@pulumi/pulumi/proto/analyzer_grpc_pb','@pulumi/pulumi/proto/plugin_pb','@grpc/grpc-js']) require(m)";
        for (let i = 0; i < ROUNDS; i++) {
            series.today.push(
                (await startAndAsk({ script: RUN_POLICY_PACK, scriptArgs: [ENGINE, today], cwd: today, trace: false }))
                    .infoMs,
            );
            series.lean.push(
                (
                    await startAndAsk({
                        nodeArgs: ["--require", "./dist/preload.js"],
                        script: RUN_POLICY_PACK,
                        scriptArgs: [ENGINE, PACK_DIR],
                        cwd: PACK_DIR,
                        trace: false,
                    })
                ).infoMs,
            );
            series.leanNoPreload.push(
                (
                    await startAndAsk({
                        script: RUN_POLICY_PACK,
                        scriptArgs: [ENGINE, PACK_DIR],
                        cwd: PACK_DIR,
                        trace: false,
                    })
                ).infoMs,
            );
            series.leanDirect.push((await startAndAsk({ script: PACK_ENTRY, cwd: PACK_DIR, trace: false })).infoMs);
            series.nodeBoot.push(runMs(["-e", "0"]));
            series.sdkSubpaths.push(runMs(["-e", sdkSubpaths]));
            series.fullIndex.push(runMs(["-e", "require('@pulumi/pulumi')"]));
        }
        const m = Object.fromEntries(Object.entries(series).map(([k, v]) => [k, median(v)]));
        line(
            `  start-up to GetAnalyzerInfo (median of ${ROUNDS}, interleaved): today ${m.today.toFixed(0)} ms, lean ${m.lean.toFixed(0)} ms; lean/today ${(m.lean / m.today).toFixed(2)}`,
        );
        line(
            `  lean where a host ignores nodeargs (upstream's): ${m.leanNoPreload.toFixed(0)} ms (${(m.leanNoPreload / m.today).toFixed(2)} of today)`,
        );
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
        const packs = await overheadPacks(tmp, line);
        const preview = previewTimer(toolchain, prepared);
        const runs: Record<string, number[]> = Object.fromEntries(Object.keys(packs.variants).map((k) => [k, []]));
        for (let i = 0; i < ROUNDS; i++) {
            // One round: each variant once, the order rotated so that no variant always follows the same one.
            const names = Object.keys(packs.variants);
            for (let j = 0; j < names.length; j++) {
                const name = names[(i + j) % names.length];
                runs[name].push(await preview(packs.variants[name]));
            }
        }
        return overheadFigures(runs, packs, line);
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/** The packs a preview's added time is measured for (by name; `without`: no pack), and why awsguard is not among them. */
interface OverheadPacks {
    variants: Record<string, string | undefined>;
    awsguard?: string;
    awsguardProblem?: string;
}

async function overheadPacks(tmp: string, line: (s: string) => void): Promise<OverheadPacks> {
    const today = todayPackDir(tmp);
    const onePolicy = await comparisonPack("one-noop-policy", 1);
    const noop = await comparisonPack("noop-like-pko-guard", "like-pko-guard");
    let awsguard: string | undefined;
    let awsguardProblem: string | undefined;
    try {
        awsguard = await awsguardPack();
    } catch (e) {
        awsguardProblem = (e as Error).message;
        line(`  awsguard: not measured (${awsguardProblem})`);
    }
    const variants: Record<string, string | undefined> = {
        without: undefined,
        lean: PACK_DIR,
        today,
        one: onePolicy,
        noops: noop,
        ...(awsguard ? { awsguard } : {}),
    };
    return { variants, awsguard, awsguardProblem };
}

/** Times one preview of the prepared program with a pack folder (undefined: without a pack). */
function previewTimer(
    toolchain: Toolchain,
    prepared: Exclude<Awaited<ReturnType<typeof prepareFixtureStack>>, { error: string }>,
): (packDir: string | undefined) => Promise<number> {
    const descriptions = new Map(policies.map((p) => [p.name, p.description]));
    // Every variant runs the same command (the engine's JSON event stream), the pack the only difference.
    const env = { ...prepared.env, PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "1", NO_COLOR: "1" };
    return async (packDir) => {
        const t = performance.now();
        if (packDir === undefined) {
            const r = await exec(toolchain.pulumi, ["preview", "-s", prepared.stack, "--json", "--non-interactive"], {
                cwd: prepared.cwd,
                env,
                timeoutMs: 300000,
                keepStdout: false,
            });
            if (r.code !== 0) throw new Error(`preview without a pack failed: ${r.stderr.split("\n")[0]}`);
        } else {
            const p = await previewWithPack(prepared, { dir: packDir, descriptions }, { keepOutput: false });
            if (p.error) throw new Error(`preview with ${path.basename(packDir)} failed: ${p.error.split("\n")[0]}`);
        }
        return performance.now() - t;
    };
}

/** The figures of the interleaved rounds: medians, added times over no pack and paired ratios, said and returned. */
function overheadFigures(
    runs: Record<string, number[]>,
    packs: OverheadPacks,
    line: (s: string) => void,
): Record<string, unknown> {
    const { variants, awsguard, awsguardProblem } = packs;
    // Added time of a pack: the median over rounds of (preview with it - preview without, same round).
    const added = (name: string) => median(runs[name].map((ms, i) => ms - runs.without[i]));
    const pairedRatio = (x: string, y: string) => median(runs[x].map((ms, i) => ms / runs[y][i]));
    const m = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
    const a = m.without;
    line(
        `  50-resource preview (median of ${ROUNDS} rounds, variants interleaved): without a pack ${a.toFixed(0)} ms, pko-guard (lean) ${m.lean.toFixed(0)} ms, today's entry ${m.today.toFixed(0)} ms`,
    );
    line(
        `  added preview time over no pack (median of paired differences): pko-guard ${added("lean").toFixed(0)} ms; one-no-op-policy pack (built like pko-guard) ${added("one").toFixed(0)} ms; ` +
            `${policies.length} no-op policies ${added("noops").toFixed(0)} ms` +
            (awsguard
                ? `; awsguard ${AWSGUARD_VERSION} (as its README installs it) ${added("awsguard").toFixed(0)} ms`
                : ""),
    );
    line(
        `  pko-guard / one-no-op pack (paired): ${pairedRatio("lean", "one").toFixed(3)} (target <= 1.05)` +
            (awsguard
                ? `; pko-guard's added time / awsguard's: ${(added("lean") / added("awsguard")).toFixed(2)} (target < 1)`
                : ""),
    );
    return {
        rounds: ROUNDS,
        loadAverage: os.loadavg(),
        runsMs: runs,
        medianMs: m,
        addedMs: Object.fromEntries(
            Object.keys(variants)
                .filter((k) => k !== "without")
                .map((k) => [k, added(k)]),
        ),
        withoutMs: a,
        leanMs: m.lean,
        todayMs: m.today,
        onePolicyMs: m.one,
        noopLikePkoGuardMs: m.noops,
        ratio: pairedRatio("lean", "without"),
        ratioToday: pairedRatio("today", "without"),
        ratioOnePolicy: pairedRatio("one", "without"),
        leanOverOnePolicy: pairedRatio("lean", "one"),
        ...(awsguard
            ? { awsguardMs: m.awsguard, addedOverAwsguard: added("lean") / added("awsguard") }
            : { awsguard: `not measured: ${awsguardProblem}` }),
    };
}

async function legs(line: (s: string) => void): Promise<Record<string, unknown>> {
    const fixtures = loadFixtures([]);
    const t = performance.now();
    const verdicts = await runFixtures(fixtures, { leg: "both", timeoutMs: 300000 });
    const wall = performance.now() - t;
    const pairs = verdicts
        .map((v) => ({ mock: v.legs.find((l) => l.leg === "mock"), real: v.legs.find((l) => l.leg === "real") }))
        .filter((p) => p.mock?.status === "ran" && p.real?.status === "ran");
    const ratios = pairs.map((p) => p.mock!.durationMs / p.real!.durationMs);
    const mockTotal = pairs.reduce((n, p) => n + p.mock!.durationMs, 0);
    const realTotal = pairs.reduce((n, p) => n + p.real!.durationMs, 0);
    line(
        `  per fixture (${pairs.length} run in both legs): mock/real median ${median(ratios).toFixed(2)}, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}`,
    );
    line(
        `  whole fixture set: mock leg ${(mockTotal / 1000).toFixed(1)} s, real leg ${(realTotal / 1000).toFixed(1)} s (ratio ${(mockTotal / realTotal).toFixed(2)}); both legs wall time ${(wall / 1000).toFixed(1)} s`,
    );
    return {
        fixtures: pairs.length,
        medianMockOverReal: median(ratios),
        mockTotalMs: mockTotal,
        realTotalMs: realTotal,
        wallBothMs: wall,
    };
}

export async function realBenchmarks(
    line: (s: string) => void,
    parts: { pack: boolean; legs: boolean },
): Promise<PartOutput> {
    const data = await realData(line, parts);
    const overhead = data.packOverhead as
        { ratio: number; leanOverOnePolicy: number; addedOverAwsguard?: number; awsguard?: string } | undefined;
    const note = overhead ? {} : { note: "toolchain missing" };
    const figures: Figure[] = parts.pack
        ? [
              {
                  name: "50-resource preview, lean pack / without a pack",
                  value: overhead?.ratio ?? null,
                  unit: "",
                  target: { op: "<=", value: 1.15, source: "printed target" },
                  ...note,
              },
              {
                  name: "50-resource preview, lean pack / one-no-op-policy pack",
                  value: overhead ? overhead.leanOverOnePolicy : null,
                  unit: "",
                  target: { op: "<=", value: 1.05, source: "issue 23" },
                  ...note,
              },
              {
                  name: `50-resource preview, pko-guard's added time / awsguard ${AWSGUARD_VERSION}'s`,
                  value: overhead?.addedOverAwsguard ?? null,
                  unit: "",
                  target: { op: "<", value: 1, source: "issue 23" },
                  ...(overhead
                      ? overhead.addedOverAwsguard === undefined
                          ? { note: overhead.awsguard ?? "awsguard not measured" }
                          : {}
                      : note),
              },
          ]
        : [];
    return { data, figures };
}

async function realData(
    line: (s: string) => void,
    parts: { pack: boolean; legs: boolean },
): Promise<Record<string, unknown>> {
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
