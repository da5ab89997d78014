// `npm test`: each tier of test/tiers/names.js in turn (unit, property, integration, chaos, corpus), each in its own mocha
// process (the unit tier's guard must not reach the other specs). Every tier runs, even when an earlier one
// fails, and the run ends with one plain closing line over all of them: "tests: N passed, N failed, N skipped". The exit code
// is non-zero when a tier failed or printed no summary (a tier that crashed must not read as a pass).
"use strict";
const { spawn } = require("child_process");
const path = require("path");

const ROOT = path.resolve(__dirname, "..", "..");
const MOCHA = require.resolve("mocha/bin/mocha.js", { paths: [ROOT] });
const TIERS = require("./names");
const SUMMARY = /^\s*(\d+) (passing|failing|pending)\b/;

function runTier(tier, extraArgs) {
    return new Promise((resolve) => {
        const counts = { passing: 0, failing: 0, pending: 0, summarised: false };
        const child = spawn(
            process.execPath,
            [MOCHA, "--config", path.join("test", "tiers", `${tier}.js`), ...extraArgs],
            {
                cwd: ROOT,
                stdio: ["ignore", "pipe", "inherit"],
            },
        );
        let pending = "";
        const scan = (line) => {
            const m = SUMMARY.exec(line);
            if (m) {
                counts[m[2]] += Number(m[1]);
                counts.summarised = true;
            }
        };
        child.stdout.on("data", (chunk) => {
            process.stdout.write(chunk);
            pending += chunk.toString("utf8");
            const lines = pending.split("\n");
            pending = lines.pop();
            lines.forEach(scan);
        });
        const forward = (signal) => child.kill(signal);
        process.on("SIGINT", forward);
        process.on("SIGTERM", forward);
        child.on("close", (code, signal) => {
            scan(pending);
            process.off("SIGINT", forward);
            process.off("SIGTERM", forward);
            resolve({ tier, code: code ?? (signal ? 1 : 0), ...counts });
        });
    });
}

async function main() {
    const extraArgs = process.argv.slice(2);
    const results = [];
    for (const tier of TIERS) {
        const started = Date.now();
        const result = await runTier(tier, extraArgs);
        result.seconds = Math.round((Date.now() - started) / 1000);
        results.push(result);
    }
    const total = (k) => results.reduce((n, r) => n + r[k], 0);
    for (const r of results) {
        console.log(`[tests] the ${r.tier} tier took ${r.seconds} s`);
        if (!r.summarised) console.log(`[tests] the ${r.tier} tier printed no summary (exit ${r.code})`);
    }
    const failed = results.some((r) => r.code !== 0 || !r.summarised);
    // A tier that failed without counting a failing test (it crashed) still counts one failure.
    const failing = total("failing") + results.filter((r) => (r.code !== 0 || !r.summarised) && r.failing === 0).length;
    console.log(`tests: ${total("passing")} passed, ${failing} failed, ${total("pending")} skipped`);
    process.exitCode = failed ? 1 : 0;
}

main();
