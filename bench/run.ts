/**
 * npm run bench: figures and ratios measured in one run on this machine, printed and written to
 * bench/results.json. Not a test: nothing here asserts a timing.
 *
 *  1. in-process policy evaluation throughput (resources/s) at 1k, 10k, 50k resources (every policy of
 *     the pack, resource policies per resource and stack policies once, on analyzer-shaped arguments);
 *  2. scaling of the stack-level RBAC policy: time at 10k resources / time at 1k (linear is 10);
 *  3. the pack's analyzer start-up: precompiled JavaScript / ts-node;
 *  4. overhead of the pack on a real preview of a 50-resource program: with the pack / without;
 *  5. mock leg / real leg time per fixture, and each leg's wall time over the whole fixture set.
 * 4 and 5 need the toolchain (npm run setup); without it they are reported as not measured.
 */
import "../cli/fatal";
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { performance } from "perf_hooks";
import * as readline from "readline";
import { policies } from "../policies";
import { REPO_ROOT } from "../cli/paths";
import { platformProgram } from "./programs";
import { TestResourceLike } from "./types";

/* eslint-disable @typescript-eslint/no-var-requires */
const structPb = require("google-protobuf/google/protobuf/struct_pb");
const { deserializeProperties } = require("@pulumi/policy/deserialize");
const { unknownCheckingProxy } = require("@pulumi/policy/proxy");

const results: Record<string, unknown> = { machine: { cpus: os.cpus().length, node: process.version }, measuredAt: new Date().toISOString() };
const line = (s: string) => process.stdout.write(s + "\n");

/** Analyzer-shaped props: the wire form deserialized and proxied by @pulumi/policy's own code. */
function analyzerArgs(resources: TestResourceLike[]) {
    return resources.map((r, i) => ({
        type: r.type,
        name: r.name,
        urn: `urn:pulumi:dev::bench::${r.type}::${r.name}`,
        props: unknownCheckingProxy(deserializeProperties(structPb.Struct.fromJavaScript(r.props), false)),
        opts: {},
        index: i,
    }));
}

function evaluateAll(args: ReturnType<typeof analyzerArgs>, only?: string): number {
    let violations = 0;
    const report = () => {
        violations++;
    };
    const stackTags = new Map();
    const getConfig = () => ({});
    const notApplicable = () => undefined;
    const isType = () => false;
    const asType = () => undefined;
    for (const p of policies) {
        if (only && p.name !== only) continue;
        if ("validateResource" in p) {
            const v = (p as ResourceValidationPolicy).validateResource as Function;
            // The same object literal the analyzer builds for each validation (@pulumi/policy server.js).
            for (const a of args) v({ type: a.type, props: a.props, urn: a.urn, name: a.name, opts: a.opts, stackTags, isType, asType, getConfig, notApplicable }, report);
        } else {
            (p as StackValidationPolicy).validateStack({ resources: args as any, getConfig, stackTags, notApplicable } as any, report);
        }
    }
    return violations;
}

/**
 * Best of `repeat` timings of `run` over freshly prepared input (`prepare` is not timed), so that no
 * memoized view from an earlier repetition makes a later one look faster than a first evaluation is.
 */
function time<T>(prepare: () => T, run: (input: T) => void, repeat = 3): number {
    let best = Infinity;
    for (let i = 0; i < repeat; i++) {
        const input = prepare();
        const t = performance.now();
        run(input);
        best = Math.min(best, performance.now() - t);
    }
    return best;
}

function throughput(): void {
    line("== in-process policy evaluation (all policies)");
    const rows: Record<string, unknown> = {};
    for (const n of [1000, 10000, 50000]) {
        const program = platformProgram(n);
        evaluateAll(analyzerArgs(program)); // warm-up (JIT)
        const ms = time(() => analyzerArgs(program), (args) => evaluateAll(args), n >= 50000 ? 2 : 3);
        const perSecond = Math.round((n / ms) * 1000);
        rows[n] = { ms: Math.round(ms), resourcesPerSecond: perSecond };
        line(`  ${String(n).padStart(6)} resources: ${ms.toFixed(0).padStart(6)} ms  ${perSecond.toLocaleString("en")} resources/s  (target >= 50,000)`);
    }
    results.throughput = rows;
}

function rbacScaling(): void {
    line("== stack-level RBAC policy scaling (pko-stack-no-cluster-admin)");
    const t: Record<number, number> = {};
    for (const n of [1000, 10000]) {
        const program = platformProgram(n);
        evaluateAll(analyzerArgs(program), "pko-stack-no-cluster-admin"); // warm-up (JIT)
        t[n] = time(() => analyzerArgs(program), (args) => evaluateAll(args, "pko-stack-no-cluster-admin"), 5);
        line(`  ${String(n).padStart(6)} resources: ${t[n].toFixed(1)} ms`);
    }
    const ratio = t[10000] / t[1000];
    line(`  ratio 10k/1k: ${ratio.toFixed(1)} (linear is 10; target <= 12)`);
    results.rbacScaling = { ms1k: t[1000], ms10k: t[10000], ratio };
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

async function main(): Promise<void> {
    throughput();
    rbacScaling();
    await startup();
    const { realBenchmarks } = await import("./real");
    Object.assign(results, await realBenchmarks(line));
    const out = path.join(REPO_ROOT, "bench", "results.json");
    fs.writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
    line(`results written to ${path.relative(process.cwd(), out)}`);
}

main().catch((e) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
});
