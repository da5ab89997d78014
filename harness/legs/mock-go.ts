/**
 * Go programs in the mock leg. The Go SDK talks to the engine over gRPC (PULUMI_MONITOR, PULUMI_ENGINE: the
 * SDK's go/pulumi/run.go), so the program runs as its own process against the same MockMonitor the Node path
 * drives in process (mock-program.ts, with the engine's behaviour installed by mock-engine.ts), served here as a
 * real `pulumirpc.ResourceMonitor`, with an `Engine` that keeps the program's error logs. The program is built
 * once with `go build` and kept by the hash of its sources and the Go version (goBinary).
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { execFileSync, spawn } from "child_process";
import { userCacheDir } from "../../support/cache-dir";

import {
    MockMonitor,
    emptyproto,
    enginerpc,
    engineproto,
    grpc,
    monitorMethod,
    resproto,
    resrpc,
    serviceMethods,
} from "./engine-surface";

/** A unary handler of a service this module serves. */
type Handler<Req = unknown> = (call: grpc.ServerUnaryCall<Req, unknown>, cb: grpc.sendUnaryData<unknown>) => void;

/** The longest a Go build may take (a first build compiles the SDK and the provider SDK). */
const BUILD_TIMEOUT_MS = 15 * 60_000;

/** A response of the type gRPC must send: the MockMonitor answers some calls with plain objects. */
function asMessage(res: unknown, responseType: (new () => unknown) | undefined): unknown {
    if (responseType === undefined || res instanceof responseType) return res;
    if (responseType === emptyproto.Empty) return new emptyproto.Empty();
    if (responseType === resproto.SupportsFeatureResponse) {
        const out = new resproto.SupportsFeatureResponse();
        out.setHassupport(Boolean((res as { getHassupport?: () => boolean })?.getHassupport?.()));
        return out;
    }
    return res;
}

/** An error as gRPC sends it: its code (UNKNOWN unless it has one) and its message as the details. */
function asStatus(err: unknown): Partial<grpc.StatusObject> & { message: string } {
    const e = err as { code?: unknown; details?: unknown; message?: unknown };
    const details = typeof e?.details === "string" && e.details ? e.details : String(e?.message ?? err);
    return { code: typeof e?.code === "number" ? e.code : grpc.status.UNKNOWN, details, message: details };
}

/** The MockMonitor's methods as the handlers of the ResourceMonitor service (missing ones: UNIMPLEMENTED). */
function monitorHandlers(monitor: MockMonitor): Record<string, Handler> {
    const handlers: Record<string, Handler> = {};
    for (const [name, def] of serviceMethods(resrpc.ResourceMonitorService)) {
        handlers[name] = (call, cb) => {
            const method = monitorMethod(monitor, name);
            if (!method) {
                cb({ code: grpc.status.UNIMPLEMENTED, details: `${name} is not served in the mock leg` });
                return;
            }
            method(call.request, (err, res) => (err ? cb(asStatus(err)) : cb(null, asMessage(res, def.responseType))));
        };
    }
    return handlers;
}

/** The Engine service: the program's error logs kept (its failure is logged, then it exits), a root resource. */
function engineHandlers(errors: string[]): grpc.UntypedServiceImplementation {
    let root = "";
    const log: Handler<engineproto.LogRequest> = (call, cb) => {
        if (call.request.getSeverity() === engineproto.LogSeverity.ERROR)
            errors.push(String(call.request.getMessage()));
        cb(null, new emptyproto.Empty());
    };
    const getRootResource: Handler = (_call, cb) => {
        const out = new engineproto.GetRootResourceResponse();
        out.setUrn(root);
        cb(null, out);
    };
    const setRootResource: Handler<engineproto.SetRootResourceRequest> = (call, cb) => {
        root = call.request.getUrn();
        cb(null, new engineproto.SetRootResourceResponse());
    };
    return { log, getRootResource, setRootResource };
}

/** Serves the monitor and the engine on a loopback port; resolves with the address and a stop function. */
async function serve(monitor: MockMonitor, errors: string[]): Promise<{ address: string; stop: () => void }> {
    const server = new grpc.Server();
    server.addService(resrpc.ResourceMonitorService, monitorHandlers(monitor));
    server.addService(enginerpc.EngineService, engineHandlers(errors));
    const port: number = await new Promise((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err: Error | null, p: number) =>
            err ? reject(err) : resolve(p),
        ),
    );
    return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** The program's sources and the Go toolchain's version, hashed: what a build depends on besides the module cache. */
function sourceHash(dir: string, goVersion: string): string {
    const h = crypto.createHash("sha256").update(goVersion);
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
            const p = path.join(d, e.name);
            if (e.isDirectory() && !e.name.startsWith(".") && e.name !== "vendor") walk(p);
            else if (e.isFile() && /\.go$|^go\.(mod|sum)$/.test(e.name))
                h.update(path.relative(dir, p)).update("\0").update(fs.readFileSync(p)).update("\0");
        }
    };
    walk(dir);
    return h.digest("hex").slice(0, 32);
}

/** The folder Go builds of the mock leg are kept in: the user's cache folder (support/cache-dir.ts). */
function buildCache(): string {
    return path.join(userCacheDir(), "go-programs");
}

/** The program built (or the build kept from before for the same sources); one line when the build fails. */
export function goBinary(dir: string): string {
    const go = process.env.PKO_GUARD_GO ?? "go";
    let version: string;
    try {
        version = execFileSync(go, ["env", "GOVERSION"], { encoding: "utf8" }).trim();
    } catch {
        throw new Error("a Go program needs the go command, which is not on PATH");
    }
    const out = path.join(buildCache(), sourceHash(dir, version), "program");
    if (fs.existsSync(out)) return out;
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const partial = `${out}.${process.pid}`;
    try {
        execFileSync(go, ["build", "-o", partial, "."], {
            cwd: dir,
            stdio: ["ignore", "ignore", "pipe"],
            timeout: BUILD_TIMEOUT_MS,
            encoding: "utf8",
        });
    } catch (e) {
        const stderr = String((e as { stderr?: unknown }).stderr ?? "");
        const first = stderr.split("\n").find((l) => l.trim() !== "" && !l.startsWith("#")) ?? "go build failed";
        throw new Error(`go build failed: ${first.trim()}`);
    }
    fs.renameSync(partial, out);
    return out;
}

export interface GoRun {
    project: string;
    stack: string;
    /** PULUMI_CONFIG and PULUMI_CONFIG_SECRET_KEYS, as the language host passes them. */
    config: string;
    secretKeys: string;
}

/**
 * Runs the Go program in `dir` against `monitor` in preview mode; resolves when it exits, rejects with one line
 * when it fails (its logged error, else its exit code).
 */
export async function runGoProgram(dir: string, monitor: MockMonitor, run: GoRun): Promise<void> {
    const binary = goBinary(dir);
    const errors: string[] = [];
    const server = await serve(monitor, errors);
    try {
        const child = spawn(binary, [], {
            cwd: dir,
            stdio: ["ignore", "ignore", "pipe"],
            env: {
                ...process.env,
                PULUMI_MONITOR: server.address,
                PULUMI_ENGINE: server.address,
                PULUMI_PROJECT: run.project,
                PULUMI_STACK: run.stack,
                PULUMI_ORGANIZATION: "organization",
                PULUMI_ROOT_DIRECTORY: dir,
                PULUMI_DRY_RUN: "true",
                PULUMI_PARALLEL: "16",
                PULUMI_CONFIG: run.config,
                PULUMI_CONFIG_SECRET_KEYS: run.secretKeys,
            },
        });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
        const code: number | null = await new Promise((resolve, reject) => {
            child.once("error", reject);
            child.once("close", (c) => resolve(c));
        });
        if (code !== 0) {
            const why = errors[0] ?? stderr.trim().split("\n").filter(Boolean).pop() ?? `exit code ${code}`;
            throw new Error(why);
        }
    } finally {
        server.stop();
    }
}
