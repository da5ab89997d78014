/**
 * The analyzer's real path, in process and over gRPC, for `npm run bench`.
 * In process, each resource is the engine's protobuf request handed to `@pulumi/policy`'s own Analyze /
 * AnalyzeStack handlers, so deserialization and the unknown-checking proxy are as in a preview. Over gRPC,
 * Analyze calls are sent one at a time: the Pulumi engine (v3.248, pkg/resource/deploy) waits for every Analyze
 * answer before the next resource, so that is the figure that counts; a pipelined figure is the pack's upper bound.
 */
import * as grpc from "@grpc/grpc-js";
import { ChildProcess, spawn } from "child_process";
import * as path from "path";
import { performance } from "perf_hooks";
import * as readline from "readline";
import { Policies } from "@pulumi/policy";
import { policies } from "../policies";
import { sharingRequests } from "../evaluation/request-cache";
import { TestResourceLike } from "./types";

const analyzerPb = require("@pulumi/pulumi/proto/analyzer_pb");
const analyzerGrpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const structPb = require("google-protobuf/google/protobuf/struct_pb");
const emptyPb = require("google-protobuf/google/protobuf/empty_pb");
const sdkServer = require("@pulumi/policy/server");

const PACK = "pko-guard";
const VERSION = "0.1.0";

export function urnOf(r: TestResourceLike): string {
    return `urn:pulumi:dev::bench::${r.type}::${r.name}`;
}

function fill<T>(msg: any, r: TestResourceLike): T {
    msg.setType(r.type);
    msg.setName(r.name);
    msg.setUrn(urnOf(r));
    msg.setProperties(structPb.Struct.fromJavaScript(r.props as Record<string, unknown>));
    msg.setOptions(new analyzerPb.AnalyzerResourceOptions());
    return msg;
}

/** The requests the engine sends for a program: one AnalyzeRequest per resource and one AnalyzeStackRequest. */
export interface Requests {
    analyze: any[];
    stack: any;
}

export function requests(resources: TestResourceLike[]): Requests {
    const analyze = resources.map((r) => fill<any>(new analyzerPb.AnalyzeRequest(), r));
    const stack = new analyzerPb.AnalyzeStackRequest();
    stack.setResourcesList(resources.map((r) => fill<any>(new analyzerPb.AnalyzerResource(), r)));
    return { analyze, stack };
}

type Handler = (call: { request: unknown }, callback: (err: unknown, res?: any) => void) => void;

function invoke(handler: Handler, request: unknown): Promise<any> {
    return new Promise((resolve, reject) => handler({ request }, (err, res) => (err ? reject(err) : resolve(res))));
}

/** The SDK's own Analyze / AnalyzeStack handlers over the pack's policies as index.ts serves them (no server is started). */
export function sdkHandlers(pack: Policies = sharingRequests(policies)): { analyze: Handler; analyzeStack: Handler } {
    return {
        analyze: sdkServer.makeAnalyzeRpcFun(PACK, VERSION, "advisory", pack),
        analyzeStack: sdkServer.makeAnalyzeStackRpcFun(PACK, VERSION, "advisory", pack),
    };
}

/** Which of the SDK's hooks a policy has: the analyzer calls each policy with a resource hook in Analyze, each with a stack hook in AnalyzeStack. */
export function policyHooks(p: object): ("validateResource" | "validateStack")[] {
    const hooks: ("validateResource" | "validateStack")[] = [];
    const v = (p as { validateResource?: unknown }).validateResource;
    if (typeof v === "function" || Array.isArray(v)) hooks.push("validateResource");
    if (typeof (p as { validateStack?: unknown }).validateStack === "function") hooks.push("validateStack");
    return hooks;
}

/**
 * The SDK's own floor: the pack's policies with the same hooks (most have both a resource and a stack hook),
 * each doing nothing. What the SDK spends (deserializing and proxying the properties once per policy it
 * calls, per resource in Analyze and per resource per stack policy in AnalyzeStack) is paid whatever the
 * rules do; the pack's time over this floor is ours.
 */
export function noopPack(): Policies {
    return policies.map((p) => ({
        name: p.name,
        description: p.description,
        enforcementLevel: p.enforcementLevel,
        ...Object.fromEntries(policyHooks(p).map((hook) => [hook, () => undefined])),
    })) as Policies;
}

/** A finding as the floor that reports replays it: the pack's own message (without the SDK's prefix), where, and its own level. */
type Replayed = { message: string; urn?: string; enforcementLevel?: string };

/**
 * The SDK's floor that also reports: the no-op pack whose hooks report, call by call, exactly the findings the
 * pack reports there, looked up by policy and resource (found beforehand by running the pack over `reqs`).
 * What the SDK spends carrying findings (collecting the diagnostics and building the response; over gRPC also
 * encoding it, and the client decoding it) is in it, so the pack's time over it is pko-guard's own work (rules,
 * views, wrappers). Informational: the targets are against the plain floor (`noopPack`).
 */
export async function reportingFloorPack(reqs: Requests): Promise<Policies> {
    const h = sdkHandlers();
    // Per policy: its findings in Analyze by the request's URN (the SDK hands every policy the same URN string,
    // so the lookup hashes it once a request), and its findings in AnalyzeStack.
    const byPolicy = new Map<string, { resource: Map<string, Replayed[]>; stack: Replayed[] }>(
        policies.map((p) => [p.name, { resource: new Map(), stack: [] }]),
    );
    const replayed = (d: any): Replayed => {
        const policy = policies.find((p) => p.name === d.getPolicyname());
        const prefix = `${policy?.description ?? ""}\n`;
        const message: string = d.getMessage();
        // The plain form (`reportViolation(message, urn)`) gets the description prepended by the SDK; the pack's
        // only other form is a waived finding, reported as an object at its own level, advisory (report.ts).
        const one: Replayed = message.startsWith(prefix)
            ? { message: message.slice(prefix.length) }
            : { message, enforcementLevel: "advisory" };
        if (d.getUrn()) one.urn = d.getUrn();
        return one;
    };
    for (const req of reqs.analyze) {
        for (const d of (await invoke(h.analyze, req)).getDiagnosticsList()) {
            const mine = byPolicy.get(d.getPolicyname())!.resource;
            mine.set(req.getUrn(), [...(mine.get(req.getUrn()) ?? []), replayed(d)]);
        }
    }
    for (const d of (await invoke(h.analyzeStack, reqs.stack)).getDiagnosticsList())
        byPolicy.get(d.getPolicyname())!.stack.push(replayed(d));
    const replay = (list: Replayed[] | undefined, report: (...args: any[]) => void) => {
        if (list === undefined) return;
        for (const f of list) {
            if (f.enforcementLevel !== undefined) report(f);
            else if (f.urn !== undefined) report(f.message, f.urn);
            else report(f.message);
        }
    };
    return policies.map((p) => {
        const hooks = policyHooks(p);
        const mine = byPolicy.get(p.name)!;
        return {
            name: p.name,
            description: p.description,
            enforcementLevel: p.enforcementLevel,
            ...(hooks.includes("validateResource")
                ? {
                      validateResource: (args: { urn: string }, report: any) =>
                          replay(mine.resource.get(args.urn), report),
                  }
                : {}),
            ...(hooks.includes("validateStack")
                ? { validateStack: (_args: unknown, report: any) => replay(mine.stack, report) }
                : {}),
        };
    }) as Policies;
}

/** Runs Analyze for every request, one after the other as the engine does, then AnalyzeStack; returns diagnostics. */
export async function analyzeInProcess(
    h: ReturnType<typeof sdkHandlers>,
    reqs: Requests,
    parts: { resources?: boolean; stack?: boolean } = {},
): Promise<number> {
    let diagnostics = 0;
    if (parts.resources !== false) {
        for (const req of reqs.analyze) diagnostics += (await invoke(h.analyze, req)).getDiagnosticsList().length;
    }
    if (parts.stack !== false) diagnostics += (await invoke(h.analyzeStack, reqs.stack)).getDiagnosticsList().length;
    return diagnostics;
}

/** The pack's analyzer, started from its compiled entry as the engine starts a policy pack, and a gRPC client. */
export class PackServer {
    private constructor(
        private readonly child: ChildProcess,
        readonly client: any,
    ) {}

    /**
     * Starts bin/index.js, or with `noop` the no-op pack of the same shape (bench/noop-pack.ts); with
     * `reporting` (a number of resources) that no-op pack reports the pack's findings on the bench's program of
     * that size (`reportingFloorPack`).
     */
    static async start(repoRoot: string, noop = false, reporting = 0): Promise<PackServer> {
        const args = noop
            ? ["-r", "ts-node/register/transpile-only", path.join(repoRoot, "bench", "noop-pack.ts")]
            : [path.join(repoRoot, "bin", "index.js")];
        const env =
            noop && reporting > 0 ? { ...process.env, PKO_GUARD_BENCH_REPORTING: String(reporting) } : process.env;
        const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr!.on("data", (d) => (stderr = (stderr + d.toString()).slice(-2000)));
        const port = await new Promise<number>((resolve, reject) => {
            readline.createInterface({ input: child.stdout! }).once("line", (l) => resolve(Number(l.trim())));
            child.once("exit", (code) =>
                reject(new Error(`pack exited (code ${code}): ${stderr.trim().split("\n")[0] ?? ""}`)),
            );
        });
        const client = new analyzerGrpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
            // The engine raises the message limit too: an AnalyzeStack request for 50k resources is large.
            "grpc.max_send_message_length": 400 * 1024 * 1024,
            "grpc.max_receive_message_length": 400 * 1024 * 1024,
        });
        const server = new PackServer(child, client);
        await server.call("getAnalyzerInfo", new emptyPb.Empty());
        return server;
    }

    call(method: string, req: unknown): Promise<any> {
        return new Promise((resolve, reject) =>
            this.client[method](req, (err: grpc.ServiceError | null, res: any) =>
                err ? reject(new Error(`${method}: ${err.details || err.message}`)) : resolve(res),
            ),
        );
    }

    /** Analyze per resource with at most `inFlight` calls outstanding (1 is the engine), then AnalyzeStack. */
    async analyze(reqs: Requests, inFlight: number): Promise<number> {
        let diagnostics = 0;
        let next = 0;
        const worker = async () => {
            while (next < reqs.analyze.length) {
                const req = reqs.analyze[next++];
                diagnostics += (await this.call("analyze", req)).getDiagnosticsList().length;
            }
        };
        await Promise.all(Array.from({ length: inFlight }, worker));
        diagnostics += (await this.call("analyzeStack", reqs.stack)).getDiagnosticsList().length;
        return diagnostics;
    }

    stop(): void {
        try {
            this.client.close();
        } catch {
            /* closed */
        }
        this.child.kill();
    }
}

export async function timeAsync(run: () => Promise<unknown>, repeat: number): Promise<number> {
    let best = Infinity;
    for (let i = 0; i < repeat; i++) {
        const t = performance.now();
        await run();
        best = Math.min(best, performance.now() - t);
    }
    return best;
}
