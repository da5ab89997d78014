/**
 * The script `node --snapshot-blob FILE --build-snapshot` runs to make the installed command's start-up snapshot
 * (./snapshot-build.ts runs it).
 * The heap it leaves is the `check` bundle (./check-entry.ts) loaded with `check` run once over a small repository, so
 * a run's functions are compiled (a snapshot keeps the bytecode of what ran), and what the process held forgotten
 * (support/snapshot.ts). Node gives this script a `require` for its own modules only, so the command comes from the
 * bundle. A run from the snapshot first checks that it is a `check` and that the bundle beside it is the one it holds,
 * else runs ./launch.ts in the same process (the whole command).
 */
import * as fs from "fs";
import * as path from "path";
import * as v8 from "v8";
import * as vm from "vm";

interface Command {
    main(argv: string[], term?: unknown): Promise<number>;
    exitWhenWritten(code: number): void;
    escaped(e: unknown): void;
    note(name: string, value: number): void;
}

const BIN = path.dirname(__dirname);
const BUNDLE = path.join(BIN, "pko-guard-check.bundle.js");
const LAUNCHER = path.join(BIN, "pko-guard.js");

/** What identifies the bundle file the snapshot was built from (a rebuilt bundle differs in one of them). */
function bundleIdentity(): string {
    const s = fs.statSync(BUNDLE, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}

let resolve: (id: string) => unknown = require;

/**
 * Node's modules that Node 20 does not restore from a snapshot (loaded in the builder, a `Worker` fails after
 * deserialization: "undefined is not an integer typed array"); the builder warns of each such module it loads. The
 * bundle gets a stand-in for each, resolved to the module on first use in a run; in the builder it answers what a
 * main thread without a terminal is and refuses the rest (the warm-up starts no thread and no process). Their export names come from
 * the build (./snapshot-build.ts), which loads them in a process of its own.
 */
const AT_RUN_TIME = JSON.parse(process.env.PKO_GUARD_SNAPSHOT_LATE ?? "{}") as Record<string, string[]>;
const IN_BUILDER: Record<string, Record<string, unknown>> = {
    worker_threads: { isMainThread: true, workerData: null, parentPort: null, threadId: 0 },
    tty: { isatty: () => false },
};

function lateModule(id: string, names: string[]): object {
    const target: Record<string, undefined> = {};
    for (const n of names) target[n] = undefined;
    let loaded: Record<string | symbol, unknown> | undefined;
    const read = (name: string | symbol): unknown => {
        if (loaded !== undefined) return loaded[name];
        if (!v8.startupSnapshot.isBuildingSnapshot()) {
            loaded = resolve(id) as Record<string | symbol, unknown>;
            return loaded[name];
        }
        const stand = IN_BUILDER[id];
        if (typeof name === "string" && stand !== undefined && name in stand) return stand[name];
        if (name === "__esModule" || typeof name === "symbol") return undefined;
        throw new Error(`${id}.${name} used while building the snapshot`);
    };
    return new Proxy(target, {
        get: (_, name) => read(name),
        getOwnPropertyDescriptor: (_, name) =>
            name in target ? { value: read(name), writable: true, enumerable: true, configurable: true } : undefined,
    });
}

const late = new Map<string, object>();
const bundleRequire = (id: string): unknown => {
    const bare = id.replace(/^node:/, "");
    const names = AT_RUN_TIME[bare];
    if (names === undefined) return resolve(id);
    let m = late.get(bare);
    if (m === undefined) late.set(bare, (m = lateModule(bare, names)));
    return m;
};

// A module of Node's that is not restored, loaded all the same, fails the build rather than a run (`vm` is the
// builder's own, which a run does not use).
function unrestored(w: Error): void {
    if (/not yet fully verified whether built-in module/.test(w.message) && !/"vm"/.test(w.message)) {
        process.stderr.write(`snapshot: ${w.message.split("\n")[0]}\n`);
        process.exit(1);
    }
}
process.on("warning", unrestored);

function loadCommand(): Command {
    const source = fs.readFileSync(BUNDLE, "utf8").replace(/^#!.*/, "");
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
        filename: BUNDLE,
    });
    const bundleModule = { exports: {} as Command, filename: BUNDLE, id: BUNDLE, loaded: false };
    (script.runInThisContext() as (...args: unknown[]) => void).call(
        bundleModule.exports,
        bundleModule.exports,
        bundleRequire,
        bundleModule,
        BUNDLE,
        BIN,
    );
    return bundleModule.exports;
}

/** `check` once over `dir`: the table (written nowhere), a JSON and a SARIF report (into `reports`). */
async function warmUp(command: Command, dir: string, reports: string): Promise<void> {
    const nowhere = { write: () => true, isTTY: false };
    const code = await command.main(
        [
            "check",
            dir,
            "--repo-root",
            dir,
            // The Application's other repository is not fetched: the builder cannot hold what a child process leaves.
            "--offline",
            "--report",
            `json=${path.join(reports, "check.json")}`,
            "--report",
            `sarif=${path.join(reports, "check.sarif")}`,
        ],
        { out: nowhere, err: nowhere, env: {} },
    );
    if (code !== 0 && code !== 1) throw new Error(`the warm-up check exited ${code}`);
}

const [warmDir, reportsDir] = process.argv.slice(2);
const built = bundleIdentity();
const command = loadCommand();
warmUp(command, warmDir, reportsDir).then(
    () => {
        process.removeListener("warning", unrestored);
        v8.startupSnapshot.setDeserializeMainFunction(() => {
            // Loaded here, in the run: Node does not restore `module` from a snapshot.
            resolve = (require("module") as typeof import("module")).createRequire(BUNDLE);
            // As started as bin/cli/pko-guard.js: worker threads of a large `check` run that file, with this process's
            // options but the snapshot's own (which Node refuses for a thread).
            process.argv.splice(1, 0, LAUNCHER);
            const at = process.execArgv.findIndex((a) => a === "--snapshot-blob" || a.startsWith("--snapshot-blob="));
            if (at >= 0) process.execArgv.splice(at, process.execArgv[at] === "--snapshot-blob" ? 2 : 1);
            let same = false;
            try {
                same = process.argv[2] === "check" && bundleIdentity() === built;
            } catch {
                // no bundle: today's path says what is wrong
            }
            if (!same) {
                resolve(LAUNCHER);
                return;
            }
            // What ./launch.ts sets before the bundle runs (V8 refuses a snapshot built with other flags).
            v8.setFlagsFromString("--interrupt-budget=500000");
            command.note("snapshot", 1);
            command.main(process.argv.slice(2)).then(command.exitWhenWritten, command.escaped);
        });
    },
    (e: Error) => {
        process.stderr.write(`snapshot: ${e.message.split("\n")[0]}\n`);
        process.exit(1);
    },
);
