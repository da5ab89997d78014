#!/usr/bin/env node
/**
 * The installed `pko-guard` command (bin/cli/pko-guard.js, built by ./build-cli.ts): runs the CLI bundle beside it with
 * V8's code cache for it, so a run does not compile the bundle's functions again. `pko-guard check ...` and the worker
 * threads of a large `check` run the bundle of `check` alone (./check-entry.ts), any other command line the whole one.
 * Node 20 has no module compile cache, so this is `vm.Script` `cachedData`, in a file named for the V8 version and
 * architecture that `npm run build` writes by running `check` once. V8 rejects a cache that does not fit; the bundle is
 * then compiled as usual and the cache rewritten (renamed into place; an unwritable folder is left alone).
 * PKO_GUARD_CODE_CACHE=0 runs without it.
 */
import * as fs from "fs";
import { createRequire } from "module";
import * as path from "path";
import * as v8 from "v8";
import * as vm from "vm";
import { isMainThread } from "worker_threads";

/**
 * V8 optimizes a function once it has run for a budget of bytecode (132 KB by default in Node 20): most of a
 * short `check` then goes to optimizing code it is about to stop running. A larger budget (set before anything is
 * compiled, so every run and the build's warm-up see the same flags and the code cache fits) spends less CPU time
 * for the same or a shorter wall time (the figures: docs/contributing/benchmarks.md).
 */
v8.setFlagsFromString("--interrupt-budget=500000");

const NAME = process.argv[2] === "check" || !isMainThread ? "pko-guard-check.bundle" : "pko-guard.bundle";
const BUNDLE = path.join(__dirname, `${NAME}.js`);
const CACHE = path.join(__dirname, `${NAME}.${process.versions.v8}-${process.arch}.cache`);
const useCache = process.env.PKO_GUARD_CODE_CACHE !== "0";

function read(file: string): Buffer | undefined {
    try {
        return fs.readFileSync(file);
    } catch {
        return undefined;
    }
}

const source = fs.readFileSync(BUNDLE, "utf8").replace(/^#!.*/, "");
const cachedData = useCache ? read(CACHE) : undefined;
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: BUNDLE,
    cachedData,
});
if (useCache && (cachedData === undefined || script.cachedDataRejected === true)) {
    // Written at exit, so that it holds the functions this run compiled too.
    process.once("exit", () => {
        const tmp = `${CACHE}.${process.pid}.tmp`;
        try {
            fs.writeFileSync(tmp, script.createCachedData());
            fs.renameSync(tmp, CACHE);
        } catch {
            fs.rmSync(tmp, { force: true });
        }
    });
}
const bundleModule = { exports: {}, filename: BUNDLE, id: BUNDLE, loaded: false };
(script.runInThisContext() as (...args: unknown[]) => void).call(
    bundleModule.exports,
    bundleModule.exports,
    createRequire(BUNDLE),
    bundleModule,
    BUNDLE,
    path.dirname(BUNDLE),
);
