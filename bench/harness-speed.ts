/**
 * `npm run bench -- --only harness`: what `pko-guard test` costs a fixture, as users run it (the installed command,
 * bin/cli/pko-guard.js, nothing compiled at run time), on program fixtures of this repository in the mock leg:
 * start-up, the cost per fixture after it ((N fixtures - one) / (N - 1)) with one job and with the cores, and the
 * mock leg's own time; each the median of three runs.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import { loadFixtures } from "../harness/runner";
import { CLI_ENTRY } from "../support/paths";
import { median, verdict } from "./figures";
import { Figure, PartOutput } from "./types";

const SAMPLE = 8;
const ROUNDS = 3;
const TARGET = { op: "<=", value: 1000, source: "issue 38" } as const;

interface Timed {
    wallMs: number;
    legMs: number[];
}

function runTest(dirs: string[], jobs: number, tmp: string): Timed {
    const report = path.join(tmp, `report-${jobs}-${dirs.length}.json`);
    const t = performance.now();
    const r = spawnSync(
        process.execPath,
        [CLI_ENTRY, "test", ...dirs, "--leg", "mock", "--jobs", String(jobs), "--report", `json=${report}`],
        { encoding: "utf8", env: { ...process.env, GITHUB_ACTIONS: "" }, timeout: 600000 },
    );
    const wallMs = performance.now() - t;
    if (r.status !== 0) throw new Error(`pko-guard test exited ${r.status}: ${(r.stdout + r.stderr).slice(-400)}`);
    const json = JSON.parse(fs.readFileSync(report, "utf8")) as {
        fixtures: { legs: { leg: string; durationMs: number }[] }[];
    };
    const legMs = json.fixtures.flatMap((f) => f.legs.filter((l) => l.leg === "mock").map((l) => l.durationMs));
    return { wallMs, legMs };
}

export async function harnessBenchmarks(line: (s: string) => void): Promise<PartOutput> {
    line("== pko-guard test (the installed command, mock leg)");
    const sample = loadFixtures([])
        .filter((f) => !f.manifestsDir && !f.expect.realOnly && !f.name.includes("@"))
        .slice(0, SAMPLE)
        .map((f) => f.dir);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-bench-harness-"));
    const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
    try {
        const one: number[] = [];
        const serial: number[] = [];
        const parallel: number[] = [];
        const legs: number[] = [];
        for (let i = 0; i < ROUNDS; i++) {
            one.push(runTest(sample.slice(0, 1), 1, tmp).wallMs);
            const s = runTest(sample, 1, tmp);
            serial.push(s.wallMs);
            legs.push(...s.legMs);
            parallel.push(runTest(sample, cores, tmp).wallMs);
        }
        const startup = median(one);
        const perFixture = (median(serial) - startup) / (sample.length - 1);
        const perFixtureJobs = (median(parallel) - startup) / (sample.length - 1);
        const leg = median(legs);
        line(`  start-up (one fixture): ${startup.toFixed(0)} ms`);
        const target = (ms: number) => `(target <= ${TARGET.value} ms: ${verdict(ms, TARGET)})`;
        line(`  per fixture after start-up, --jobs 1: ${perFixture.toFixed(0)} ms ${target(perFixture)}`);
        line(
            `  per fixture after start-up, --jobs ${cores}: ${perFixtureJobs.toFixed(0)} ms ${target(perFixtureJobs)}`,
        );
        line(`  the mock leg's own time per fixture (median): ${leg.toFixed(0)} ms`);
        const figures: Figure[] = [
            {
                name: "pko-guard test: mock leg per fixture after start-up (--jobs 1)",
                value: perFixture,
                unit: "ms",
                target: TARGET,
            },
            {
                name: `pko-guard test: mock leg per fixture after start-up (--jobs ${cores})`,
                value: perFixtureJobs,
                unit: "ms",
                target: TARGET,
            },
        ];
        return {
            data: {
                fixtures: sample.length,
                rounds: ROUNDS,
                cores,
                startupMs: startup,
                perFixtureMs: perFixture,
                perFixtureJobsMs: perFixtureJobs,
                mockLegMedianMs: leg,
            },
            figures,
        };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
