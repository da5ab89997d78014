// `npm test`: each tier of test/tiers/names.js in turn (unit, property, integration, chaos, corpus), each in its own mocha
// process (the unit tier's guard must not reach the other specs). Every tier runs, even when an earlier one
// fails, and the run ends with one plain closing line over all of them: "tests: N passed, N failed, N skipped". The exit code
// is non-zero when a tier failed or printed no summary (a tier that crashed must not read as a pass). Above that
// line it names each failing test with the first line of its error, so a log's tail (CI keeps only the tail) says
// what failed without scrolling back through a long tier.
"use strict";
const { spawn } = require("child_process");
const path = require("path");

const ROOT = path.resolve(__dirname, "..", "..");
const MOCHA = require.resolve("mocha/bin/mocha.js", { paths: [ROOT] });
const TIERS = require("./names");
const SUMMARY = /^\s*(\d+) (passing|failing|pending)\b/;
// The spec reporter's failure list: "  1) suite", title lines indented further, the last one ending in ":",
// then the error's first line.
const FAILURE_START = /^ {2}(\d+)\) (.*)$/;
const MAX_FAILURE_LINE = 300;

/** Reads a tier's failure list as it streams: one "title > title: error" line per failing test. */
function failureCollector() {
    const failures = [];
    let listing = false;
    let current;
    return {
        failures,
        line(text) {
            if (/^\s*\d+ failing\b/.test(text)) listing = true;
            if (!listing) return;
            const start = FAILURE_START.exec(text);
            if (start) {
                current = { titles: [start[2].trim()], error: undefined, closed: start[2].trimEnd().endsWith(":") };
                failures.push(current);
                return;
            }
            if (!current || current.error !== undefined || text.trim() === "") return;
            if (!current.closed) {
                current.titles.push(text.trim());
                current.closed = text.trimEnd().endsWith(":");
            } else current.error = text.trim();
        },
    };
}

function describeFailure(tier, f) {
    const title = f.titles.join(" > ").replace(/:$/, "");
    const line = `[tests] failed (${tier}): ${title}: ${f.error ?? "(no error line)"}`;
    // Control characters of an error message stay out of the log; long messages are cut.
    const clean = line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "?");
    return clean.length > MAX_FAILURE_LINE ? `${clean.slice(0, MAX_FAILURE_LINE)}...` : clean;
}

function runTier(tier, extraArgs) {
    return new Promise((resolve) => {
        const counts = { passing: 0, failing: 0, pending: 0, summarised: false };
        const collector = failureCollector();
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
            collector.line(line);
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
            resolve({ tier, code: code ?? (signal ? 1 : 0), ...counts, failures: collector.failures });
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
    for (const r of results) for (const f of r.failures) console.log(describeFailure(r.tier, f));
    const failed = results.some((r) => r.code !== 0 || !r.summarised);
    // A tier that failed without counting a failing test (it crashed) still counts one failure.
    const failing = total("failing") + results.filter((r) => (r.code !== 0 || !r.summarised) && r.failing === 0).length;
    console.log(`tests: ${total("passing")} passed, ${failing} failed, ${total("pending")} skipped`);
    process.exitCode = failed ? 1 : 0;
}

if (require.main === module) main();
module.exports = { failureCollector, describeFailure };
