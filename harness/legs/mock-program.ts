/**
 * Child process of the mock leg: runs one fixture program under Pulumi runtime mocks in preview mode
 * and writes every resource registration, in the engine's wire form, to a JSON file.
 *
 *   node mock-program.js <program-dir> <project> <stack> <out.json> [nodejs|go]
 *   node mock-program.js --serve   (a warm worker of mock-workers.ts)
 *
 * A served program runs in a fresh SDK state (withLocalStorage, as the SDK's automation server runs inline
 * programs); a worker whose program failed exits after replying, since its process may hold that program's
 * leftovers. The raw protobuf request is captured, not the mocks' deserialized inputs, so secret and unknown
 * sentinels reach the analyzer exactly as the engine would forward them.
 */
import * as fs from "fs";
import * as path from "path";
import { MockEngine } from "./mock-engine";
import { runGoProgram } from "./mock-go";
import { ProgramJob, ProgramReply, typeScriptKey } from "./mock-workers";
import { MockMonitor, RuntimeSettings, runtimeSettings, runtimeState, tsUtils } from "./engine-surface";

/** The Kubernetes provider's default namespace in the real leg (no kubeconfig: none, so nothing is defaulted). */
const PROVIDER_NAMESPACE = "";

/** A failure of the program run, as one line (the leg's error). */
class RunFailure extends Error {}

/** One line: compiler and runtime errors span several lines; keep their gist, bounded. */
function oneLine(message: string): string {
    return message
        .replace(/\u001b\[[0-9;]*m/g, "")
        .replace(/\s+/g, " ")
        .trim()
        .slice(0, 400);
}

function fail(message: string): never {
    process.stderr.write(`${oneLine(message)}\n`);
    process.exit(3);
}

/** A program error as one non-empty line: its message, else its name or type, never "". */
export function describeError(e: unknown): string {
    if (e instanceof Error) {
        const own = e.message || (e as { details?: string }).details;
        if (own) return own;
        const where = (e.stack ?? "").split("\n").slice(1, 2).join("").trim();
        return `${e.name || "Error"} without a message${where ? ` (${where})` : ""}`;
    }
    if (e === undefined || e === null || e === "") return `a ${e === "" ? "empty string" : String(e)} was thrown`;
    if (typeof e === "object") {
        try {
            return `a non-Error value was thrown: ${JSON.stringify(e).slice(0, 200)}`;
        } catch {
            return "a non-Error value was thrown";
        }
    }
    return String(e);
}

/**
 * TypeScript programs are compiled as the Node language host compiles them (@pulumi/pulumi's cmd/run/run.ts): the
 * project's `typescript` and `ts-node` when it has them, else the SDK's vendored ones; the tsconfig.json of the
 * program folder, else none (skipProject); ES2020 with nodenext modules from TypeScript 4.7 on. Only transpiled:
 * the mock leg runs the program, type errors are the real leg's (and the user's build's) to report.
 */
function registerTypeScript(dir: string): void {
    const tsutils = tsUtils();
    const tsConfig = path.join(dir, "tsconfig.json");
    const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
    const version = String((require(typescriptRequire) as { version: string }).version);
    const [major, minor] = version.split(".").map(Number);
    const nodeNext = major > 4 || (major === 4 && minor >= 7);
    (require(tsnodeRequire) as { register(o: object): void }).register({
        compiler: typescriptRequire,
        transpileOnly: true,
        project: tsConfig,
        skipProject: !fs.existsSync(tsConfig),
        compilerOptions: {
            target: "ES2020",
            module: nodeNext ? "nodenext" : "commonjs",
            moduleResolution: nodeNext ? "nodenext" : "node",
            sourceMap: "true",
            ...tsutils.loadTypeScriptCompilerOptions(tsConfig),
        },
    });
}

/** The TypeScript set-up this process registered (ts-node's hook is process-wide: one set-up a process). */
let registeredTypeScript: string | undefined;
/** The folder TypeScript was registered in: ts-node writes its diagnostics' paths relative to it. */
let registeredIn = "";
/** The error of the Node program under way: an unhandled rejection is one (one listener, set in main). */
let programError: unknown;
/** Whether a program runs: an unhandled rejection between programs leaves a worker of unknown state. */
let running = false;

/** Runs a Node program in this process under the installed mocks; resolves with the error it failed with, if any. */
async function nodeProgramError(dir: string, settings: RuntimeSettings): Promise<unknown> {
    programError = undefined;
    try {
        const ts = typeScriptKey(dir);
        if (ts !== undefined && registeredTypeScript === undefined) {
            registerTypeScript(dir);
            registeredIn = dir;
        } else if (ts !== undefined && ts !== registeredTypeScript)
            throw new RunFailure("a worker runs programs of one TypeScript set-up");
        registeredTypeScript = ts ?? registeredTypeScript;
        require(require.resolve(dir));
    } catch (e) {
        programError = e;
    }
    await settings.waitForRPCs();
    // Let late applies settle, then drain again.
    await new Promise((r) => setImmediate(r));
    await settings.waitForRPCs();
    return programError;
}

/** Runs a Go program against the installed mocks, served over gRPC; resolves with the error it failed with, if any. */
async function goProgramError(job: ProgramJob, monitor: MockMonitor): Promise<unknown> {
    const { dir, project, stack, config, secretKeys } = job;
    try {
        await runGoProgram(dir, monitor, { project, stack, config, secretKeys });
        return undefined;
    } catch (e) {
        return e;
    }
}

/** A Node program's error with its compiler paths relative to its own folder, as a process of its own gives them. */
function fromProgram(job: ProgramJob, message: string): string {
    const rel = job.runtime === "go" || !registeredIn ? "" : path.relative(registeredIn, job.dir);
    return rel ? message.split(rel + path.sep).join("") : message;
}

/** Runs one program under the mocked engine; resolves with the registrations, rejects with a RunFailure. */
async function runProgram(job: ProgramJob): Promise<unknown[]> {
    const { dir, project, stack } = job;
    // Resolve the fixture's own imports from the fixture folder.
    process.chdir(dir);
    const pulumi = await import("@pulumi/pulumi");
    const settings = runtimeSettings();
    const engine = new MockEngine({ project, stack, programDir: dir, defaultNamespace: PROVIDER_NAMESPACE });

    await pulumi.runtime.setMocks(
        {
            newResource: (args: { type: string; name: string; inputs: Record<string, unknown> }) => {
                // Like a provider's preview of a create: outputs are the (checked) inputs; the id is unknown.
                return { id: undefined as unknown as string, state: args.inputs };
            },
            call: (args: { token: string }) => {
                throw new Error(`the invoke ${args.token} is not answered in the mock leg`);
            },
        },
        project,
        stack,
        true,
    );
    // The engine supports transforms (of resources and invokes); the mock leg implements them (mock-engine.ts).
    const store = runtimeState().getStore();
    store.supportsTransforms = true;
    store.supportsInvokeTransforms = true;
    const monitor = settings.getMonitor();
    engine.install(monitor);
    const programError =
        job.runtime === "go" ? await goProgramError(job, monitor) : await nodeProgramError(dir, settings);
    // A refusal explains a program error it caused (the SDK only sees the monitor's error), so it wins.
    if (engine.refusal !== undefined) throw new RunFailure(engine.refusal);
    if (programError instanceof RunFailure) throw programError;
    if (programError !== undefined)
        throw new RunFailure(`program failed: ${fromProgram(job, describeError(programError))}`);
    return engine.analyzerView();
}

/** The harness's own compiled modules (bin/), kept loaded between programs. */
const OWN_MODULES = path.resolve(__dirname, "..", "..") + path.sep;

/** Runs a program in a fresh SDK state, its own modules (not node_modules nor the harness's) loaded anew. */
function runFresh(job: ProgramJob): Promise<unknown[]> {
    for (const key of Object.keys(require.cache))
        if (!key.split(path.sep).includes("node_modules") && !key.startsWith(OWN_MODULES)) delete require.cache[key];
    process.env.PULUMI_CONFIG = job.config;
    process.env.PULUMI_CONFIG_SECRET_KEYS = job.secretKeys;
    return runtimeState().withLocalStorage(() => runProgram(job));
}

/** A run's failure as the leg reports it: the program's own, else the runner's. */
function failureLine(e: unknown): string {
    return oneLine(e instanceof RunFailure ? e.message : `mock run failed: ${describeError(e)}`);
}

function serve(): void {
    // Preload what every program needs, so that a job costs its program alone.
    require("@pulumi/pulumi");
    const send = (reply: ProgramReply, after?: () => void) => process.send!(reply, undefined, {}, () => after?.());
    process.on("message", (job: ProgramJob) => {
        running = true;
        runFresh(job).then(
            (resources) => {
                running = false;
                send({ resources });
            },
            (e) => send({ error: failureLine(e) }, () => process.exit(3)),
        );
    });
    // The harness gone: nothing more to run.
    process.on("disconnect", () => process.exit(0));
}

async function main(): Promise<void> {
    process.on("unhandledRejection", (e) => {
        // A late rejection of a finished program: this worker's state is unknown, the next program gets a new one.
        if (!running && process.argv[2] === "--serve") process.exit(3);
        programError = programError ?? e;
    });
    if (process.argv[2] === "--serve") return serve();
    const [programDir, project, stack, outFile, runtime = "nodejs"] = process.argv.slice(2);
    if (!programDir || !project || !stack || !outFile) {
        fail("usage: mock-program <program-dir> <project> <stack> <out.json>");
    }
    const job: ProgramJob = {
        dir: path.resolve(programDir),
        project,
        stack,
        runtime,
        config: process.env.PULUMI_CONFIG ?? "{}",
        secretKeys: process.env.PULUMI_CONFIG_SECRET_KEYS ?? "[]",
    };
    running = true;
    try {
        fs.writeFileSync(outFile, JSON.stringify(await runFresh(job)));
    } catch (e) {
        fail(failureLine(e));
    }
    process.exit(0);
}

main().catch((e) => fail(`mock run failed: ${e instanceof Error ? e.message : String(e)}`));
