/**
 * Two or more checkouts of pko-guard measured side by side in one process, for a change's before and after on a
 * machine too busy for `npm run bench` to tell a few percent apart (not a test; nothing asserts a timing):
 *
 *   node -r ts-node/register/transpile-only bench/side-by-side.ts [--path analyzer|check] [--size N]
 *       [--rounds N] [--findings] DIR...
 *
 * The checkouts run in turn, the order rotating round by round, so every round meets the same load in each;
 * ratios are paired by round. `--workload DIR` runs one checkout's rounds untimed, for callgrind where time
 * cannot be trusted (docs/contributing/benchmarks.md).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";

interface Options {
    path: "analyzer" | "check";
    size: number;
    rounds: number;
    findings: boolean;
    workload: boolean;
    dirs: string[];
}

function options(argv: string[]): Options {
    const o: Options = { path: "analyzer", size: 10000, rounds: 12, findings: false, workload: false, dirs: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--path") o.path = argv[++i] === "check" ? "check" : "analyzer";
        else if (a === "--size") o.size = Number(argv[++i]);
        else if (a === "--rounds") o.rounds = Number(argv[++i]);
        else if (a === "--findings") o.findings = true;
        else if (a === "--workload") o.workload = true;
        else o.dirs.push(path.resolve(a));
    }
    if (o.dirs.length === 0 || !(o.size > 0) || !(o.rounds >= 0)) throw new Error("usage: see bench/side-by-side.ts");
    return o;
}

/** One checkout's work: one round of it, and (analyzer path) AnalyzeStack alone. */
interface Checkout {
    dir: string;
    round: () => Promise<unknown>;
    stackOnly?: () => Promise<unknown>;
}

function load(dir: string, o: Options, repository: string | undefined): Checkout {
    if (o.path === "analyzer") {
        const ap = require(path.join(dir, "bench", "analyzer-path"));
        const { platformProgram } = require(path.join(dir, "bench", "programs"));
        const h = ap.sdkHandlers();
        const reqs = ap.requests(platformProgram(o.size));
        return {
            dir,
            round: () => ap.analyzeInProcess(h, reqs),
            stackOnly: () => ap.analyzeInProcess(h, reqs, { resources: false }),
        };
    }
    const { loadManifests } = require(path.join(dir, "gitops", "manifests", "load"));
    const { evalResources } = require(path.join(dir, "gitops", "manifests", "manifest-objects"));
    const { evaluatePack } = require(path.join(dir, "evaluation", "evaluate"));
    const { packConfig } = require(path.join(dir, "evaluation", "pack-config"));
    const loaded = loadManifests([repository], { repoRoot: repository, cwd: repository });
    const resources = evalResources(loaded.objects);
    const config = packConfig(undefined);
    return { dir, round: async () => evaluatePack(resources, config) };
}

interface Sample {
    cpu: number;
    wall: number;
}

async function timed(run: () => Promise<unknown>): Promise<Sample> {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    await run();
    const used = process.cpuUsage(cpu);
    return { cpu: (used.user + used.system) / 1000, wall: performance.now() - wall };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const quantile = (xs: number[], q: number) => sorted(xs)[Math.floor((xs.length - 1) * q)];
const median = (xs: number[]) => quantile(xs, 0.5);
const fixed = (x: number) => x.toFixed(3);

async function main(): Promise<void> {
    const o = options(process.argv.slice(2));
    const tmp = o.path === "check" ? fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-side-by-side-")) : undefined;
    try {
        const repository =
            tmp === undefined
                ? undefined
                : require(path.join(o.dirs[0], "bench", "check-speed")).generate(
                      tmp,
                      o.size,
                      Math.max(10, o.size / 100),
                      !o.findings,
                  );
        const checkouts = o.dirs.map((dir) => load(dir, o, repository));
        if (o.workload) {
            for (const c of checkouts) for (let i = 0; i <= o.rounds; i++) await c.round();
            return;
        }
        // Two warm-up rounds each (the JIT), then the rounds, the order rotating.
        for (const c of checkouts) for (let i = 0; i < 2; i++) await c.round();
        const all = new Map<Checkout, Sample[]>(checkouts.map((c) => [c, []]));
        const stack = new Map<Checkout, Sample[]>(checkouts.map((c) => [c, []]));
        for (let r = 0; r < o.rounds; r++) {
            const order = checkouts.map((_, i) => checkouts[(r + i) % checkouts.length]);
            for (const c of order) all.get(c)!.push(await timed(c.round));
            for (const c of [...order].reverse()) if (c.stackOnly) stack.get(c)!.push(await timed(c.stackOnly));
        }
        const line = (s: string) => process.stdout.write(s + "\n");
        line(
            `${o.path} path, ${o.size} ${o.path === "check" ? `objects${o.findings ? " with findings" : ""}` : "resources"}, ` +
                `${o.rounds} rounds, Node ${process.version}, load average ${os
                    .loadavg()
                    .map((x) => x.toFixed(2))
                    .join(" ")}`,
        );
        const report = (what: string, samples: Map<Checkout, Sample[]>) => {
            const first = samples.get(checkouts[0])!;
            for (const c of checkouts) {
                const s = samples.get(c)!;
                if (s.length === 0) continue;
                const ratios = s.map((x, i) => x.cpu / first[i].cpu);
                line(
                    `  ${what} ${path.basename(c.dir)}: CPU ${median(s.map((x) => x.cpu)).toFixed(0)} ms, wall ` +
                        `${median(s.map((x) => x.wall)).toFixed(0)} ms; CPU / first's, paired: median ${fixed(median(ratios))} ` +
                        `(quartiles ${fixed(quantile(ratios, 0.25))}-${fixed(quantile(ratios, 0.75))}); wall / first's ` +
                        `${fixed(median(s.map((x, i) => x.wall / first[i].wall)))}`,
                );
            }
        };
        report(o.path === "analyzer" ? "Analyze + AnalyzeStack" : "evaluatePack", all);
        report("AnalyzeStack alone", stack);
    } finally {
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    }
}

main().catch((e: Error) => {
    process.stderr.write(`side-by-side: ${e.message}\n`);
    process.exit(1);
});
