/**
 * Starting the pack as a language host would (`node [node args] <run-policy-pack> [script args]
 * <engine> <pack folder>`, from a chosen working directory), then asking it GetAnalyzerInfo over gRPC.
 * Also records which files the pack's Node process had loaded when it printed its port (unless
 * `trace: false`, as the benchmark runs it), and how long it took to serve. Shared by the pack's tests
 * (test/integration/pack/) and the bench (bench/preview-speed.ts), which never imports test code.
 */
import * as grpc from "@grpc/grpc-js";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as readline from "readline";
import * as emptyPb from "google-protobuf/google/protobuf/empty_pb";
import * as analyzerGrpc from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type { AnalyzerInfo } from "@pulumi/pulumi/proto/analyzer_pb";

export const RUN_POLICY_PACK = require.resolve("@pulumi/pulumi/cmd/run-policy-pack");

const TRACER = `
const fs = require("fs");
const write = process.stdout.write.bind(process.stdout);
let done = false;
process.stdout.write = (chunk, ...rest) => {
    if (!done) { done = true; fs.writeFileSync(process.env.PKO_GUARD_TRACE, JSON.stringify(Object.keys(require.cache))); }
    return write(chunk, ...rest);
};
`;

export interface Started {
    /** Milliseconds from spawn to the port printed, and to GetAnalyzerInfo answered. */
    portMs: number;
    infoMs: number;
    name: string;
    version: string;
    policies: number;
    /** Files loaded by the time the port was printed. */
    loaded: string[];
    stderr: string;
}

/** Runs `node <nodeArgs> <script> <scriptArgs>` in cwd until it answers GetAnalyzerInfo, then kills it. */
export async function startAndAsk(opts: {
    nodeArgs?: string[];
    script: string;
    scriptArgs?: string[];
    cwd: string;
    timeoutMs?: number;
    trace?: boolean;
}): Promise<Started> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-start-"));
    const tracer = path.join(tmp, "tracer.js");
    const trace = path.join(tmp, "loaded.json");
    fs.writeFileSync(tracer, TRACER);
    const traced = opts.trace !== false;
    const child = spawn(
        process.execPath,
        [...(traced ? ["--require", tracer] : []), ...(opts.nodeArgs ?? []), opts.script, ...(opts.scriptArgs ?? [])],
        {
            cwd: opts.cwd,
            env: { ...process.env, PKO_GUARD_TRACE: trace },
            stdio: ["ignore", "pipe", "pipe"],
        },
    );
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
        const port = await new Promise<number>((resolve, reject) => {
            const timer = setTimeout(
                () => reject(new Error(`no port within ${opts.timeoutMs ?? 60000} ms: ${stderr}`)),
                opts.timeoutMs ?? 60000,
            );
            readline.createInterface({ input: child.stdout }).once("line", (line) => {
                clearTimeout(timer);
                resolve(Number(line.trim()));
            });
            child.once("exit", (code) => {
                clearTimeout(timer);
                reject(new Error(`pack exited (${code}) before serving: ${stderr}`));
            });
        });
        const portMs = ms();
        const client = new analyzerGrpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        const info = await new Promise<AnalyzerInfo>((resolve, reject) =>
            client.getAnalyzerInfo(new emptyPb.Empty(), (e, r) => (e ? reject(e) : resolve(r))),
        );
        const infoMs = ms();
        client.close();
        return {
            portMs,
            infoMs,
            name: info.getName(),
            version: info.getVersion(),
            policies: info.getPoliciesList().length,
            loaded: traced ? (JSON.parse(fs.readFileSync(trace, "utf8")) as string[]) : [],
            stderr,
        };
    } finally {
        child.kill("SIGKILL");
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
