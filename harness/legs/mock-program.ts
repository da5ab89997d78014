/**
 * Child process of the mock leg: runs one fixture program under Pulumi runtime mocks in preview mode
 * and writes every resource registration, in the engine's wire form, to a JSON file.
 *
 *   node mock-program.js <program-dir> <project> <stack> <out.json> [nodejs|go]
 *
 * A Go program runs as its own process against the same mocked monitor, served over gRPC (mock-go.ts).
 *
 * Configuration for the program comes from PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS (as the language
 * host passes it). The raw protobuf request is captured (not the mocks' deserialized inputs), so secret
 * and unknown sentinels reach the analyzer exactly as the engine would forward them. Exit code 0 with
 * the file written on success; on failure one line on stderr and exit code 3.
 */
import * as fs from "fs";
import * as path from "path";
import { MockEngine } from "./mock-engine";
import { runGoProgram } from "./mock-go";

/** The Kubernetes provider's default namespace in the real leg (no kubeconfig: none, so nothing is defaulted). */
const PROVIDER_NAMESPACE = "";

function fail(message: string): never {
    // One line: compiler and runtime errors span several lines; keep their gist, bounded.
    const line = message
        .replace(/\u001b\[[0-9;]*m/g, "")
        .replace(/\s+/g, " ")
        .trim()
        .slice(0, 400);
    process.stderr.write(`${line}\n`);
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
    if (!fs.existsSync(path.join(dir, "index.ts"))) return;
    const tsutils = require("@pulumi/pulumi/tsutils") as {
        typeScriptRequireStrings(): { tsnodeRequire: string; typescriptRequire: string };
        loadTypeScriptCompilerOptions(file: string): Record<string, unknown>;
    };
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

type Settings = { waitForRPCs(): Promise<void> };

/** Runs a Node program in this process under the installed mocks; resolves with the error it failed with, if any. */
async function nodeProgramError(dir: string, settings: unknown): Promise<unknown> {
    let programError: unknown;
    process.on("unhandledRejection", (e) => {
        programError = programError ?? e;
    });
    try {
        registerTypeScript(dir);
        const entry = require.resolve(dir);
        require(entry);
    } catch (e) {
        programError = e;
    }
    await (settings as Settings).waitForRPCs();
    // Let late applies settle, then drain again.
    await new Promise((r) => setImmediate(r));
    await (settings as Settings).waitForRPCs();
    return programError;
}

/** Runs a Go program against the installed mocks, served over gRPC; resolves with the error it failed with, if any. */
async function goProgramError(dir: string, monitor: Record<string, any>, project: string, stack: string) {
    try {
        await runGoProgram(dir, monitor, {
            project,
            stack,
            config: process.env.PULUMI_CONFIG ?? "{}",
            secretKeys: process.env.PULUMI_CONFIG_SECRET_KEYS ?? "[]",
        });
        return undefined;
    } catch (e) {
        return e;
    }
}

async function main(): Promise<void> {
    const [programDir, project, stack, outFile, runtime = "nodejs"] = process.argv.slice(2);
    if (!programDir || !project || !stack || !outFile) {
        fail("usage: mock-program <program-dir> <project> <stack> <out.json>");
    }
    const dir = path.resolve(programDir);
    // Resolve the fixture's own imports from the fixture folder.
    process.chdir(dir);
    const pulumi = await import("@pulumi/pulumi");
    const settings = await import("@pulumi/pulumi/runtime/settings");
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
    const state = await import("@pulumi/pulumi/runtime/state");
    const store = (
        state as unknown as { getStore(): { supportsTransforms: boolean; supportsInvokeTransforms: boolean } }
    ).getStore();
    store.supportsTransforms = true;
    store.supportsInvokeTransforms = true;
    const monitor = (settings as unknown as { getMonitor(): Record<string, (...args: any[]) => any> }).getMonitor();
    engine.install(monitor);
    const programError =
        runtime === "go" ? await goProgramError(dir, monitor, project, stack) : await nodeProgramError(dir, settings);
    // A refusal explains a program error it caused (the SDK only sees the monitor's error), so it wins.
    if (engine.refusal !== undefined) fail(engine.refusal);
    if (programError !== undefined) fail(`program failed: ${describeError(programError)}`);
    fs.writeFileSync(outFile, JSON.stringify(engine.analyzerView()));
    process.exit(0);
}

main().catch((e) => fail(`mock run failed: ${e instanceof Error ? e.message : String(e)}`));
