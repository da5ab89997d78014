/**
 * The benchmark's parts that need the real toolchain: the pack's overhead on a real preview of a
 * 50-resource program, and mock leg vs real leg time over the fixture set.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import { Fixture } from "../harness/expect";
import { fixturePack, prepareFixtureStack } from "../harness/legs/real";
import { previewWithPack } from "../cli/pulumi";
import { exec } from "../cli/process";
import { REPO_ROOT } from "../cli/paths";
import { loadFixtures, runFixtures } from "../harness/runner";
import { Toolchain, findToolchain } from "../cli/toolchain";
import { policies } from "../policies";

function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
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
        const without: number[] = [];
        const withPack: number[] = [];
        for (let i = 0; i < 3; i++) {
            let t = performance.now();
            const r = await exec(toolchain.pulumi, ["preview", "-s", prepared.stack, "--non-interactive"], { cwd: prepared.cwd, env: prepared.env, timeoutMs: 300000 });
            if (r.code !== 0) throw new Error(`preview without the pack failed: ${r.stderr.split("\n")[0]}`);
            without.push(performance.now() - t);
            t = performance.now();
            const p = await previewWithPack(prepared, fixturePack(fixture, descriptions));
            if (p.error) throw new Error(p.error);
            withPack.push(performance.now() - t);
        }
        const a = median(without);
        const b = median(withPack);
        line(`  50-resource preview: without pack ${a.toFixed(0)} ms, with pack ${b.toFixed(0)} ms (median of 3); ratio ${(b / a).toFixed(2)}, overhead ${(((b - a) / a) * 100).toFixed(0)}% (target <= 15%)`);
        return { withoutMs: a, withMs: b, ratio: b / a, overheadPercent: ((b - a) / a) * 100 };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
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
    line(`  per fixture (${pairs.length} run in both legs): mock/real median ${median(ratios).toFixed(2)}, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}`);
    line(`  whole fixture set: mock leg ${(mockTotal / 1000).toFixed(1)} s, real leg ${(realTotal / 1000).toFixed(1)} s (ratio ${(mockTotal / realTotal).toFixed(2)}); both legs wall time ${(wall / 1000).toFixed(1)} s`);
    return { fixtures: pairs.length, medianMockOverReal: median(ratios), mockTotalMs: mockTotal, realTotalMs: realTotal, wallBothMs: wall };
}

export async function realBenchmarks(line: (s: string) => void): Promise<Record<string, unknown>> {
    let toolchain: Toolchain;
    try {
        toolchain = findToolchain();
    } catch (e) {
        line(`== real preview: not measured (${(e as Error).message})`);
        return { realPreview: "not measured: toolchain missing" };
    }
    line("== pack overhead on a real preview");
    const overhead = await packOverhead(toolchain, line);
    line("== mock leg vs real leg");
    const legTimes = await legs(line);
    return { packOverhead: overhead, legs: legTimes };
}
