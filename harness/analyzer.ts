/**
 * A client for the pack's real analyzer, driven over gRPC as the Pulumi engine drives it: start the
 * pack's entry point, read the port it prints, then GetAnalyzerInfo, Configure, ConfigureStack,
 * Analyze (per resource) and AnalyzeStack (all resources). Properties travel in the engine's wire form,
 * so the pack deserializes secrets and unknowns exactly as in a real preview.
 */
import * as grpc from "@grpc/grpc-js";
import * as readline from "readline";
import { Level, Row, normalizeMessage, row } from "../evaluation/rows";
import { PackConfig, PolicyMeta } from "../evaluation/pack-config";
import { Spawned, spawnTracked } from "../support/process";
import * as emptyPb from "google-protobuf/google/protobuf/empty_pb";
import * as analyzerGrpc from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import * as analyzerPb from "@pulumi/pulumi/proto/analyzer_pb";
import { toStruct } from "./legs/engine-surface";

/** A resource as registered by a program, in wire form. */
export interface WireResource {
    type: string;
    name: string;
    urn: string;
    parent?: string;
    properties: unknown;
    dependencies?: string[];
}

const LEVEL_NAMES: Record<number, Level> = { 0: "advisory", 1: "mandatory", 2: "disabled", 3: "remediate" };
const LEVEL_NUMBERS: Record<string, number> = { advisory: 0, mandatory: 1, disabled: 2, remediate: 3 };

export class AnalyzerError extends Error {}

/** A remediation the pack made: the policy and the resource it changed. */
export interface Remediation {
    policy: string;
    urn: string;
}

export class Analyzer {
    private stopped = false;
    /** The remediations of the last `analyze` (the engine's policyRemediationEvents). */
    public lastRemediations: Remediation[] = [];
    /** Whether the configured pack has a policy at `remediate` (else the Remediate call, a no-op, is skipped). */
    private remediating = false;

    private constructor(
        private readonly process: Spawned,
        private readonly client: analyzerGrpc.AnalyzerClient,
        public readonly policies: (PolicyMeta & { description: string })[],
    ) {}

    /**
     * Starts the pack at `entry` (a JavaScript file, or node's arguments that run the pack) in `packDir` (the
     * folder with its package.json, which the policy SDK reads the pack version from) and connects to it.
     */
    static async start(entry: string | string[], packDir: string, timeoutMs = 30000): Promise<Analyzer> {
        // Tracked and in its own process group: killed on Ctrl-C / SIGTERM like every other child.
        const spawned = spawnTracked(process.execPath, typeof entry === "string" ? [entry] : entry, {
            cwd: packDir,
            stdio: ["ignore", "pipe", "pipe"],
        });
        const child = spawned.child;
        let stderr = "";
        child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
        const started = new Promise<number>((resolve, reject) => {
            const timer = setTimeout(
                () => reject(new AnalyzerError(`policy pack did not start within ${timeoutMs} ms`)),
                timeoutMs,
            );
            const lines = readline.createInterface({ input: child.stdout! });
            lines.once("line", (line) => {
                clearTimeout(timer);
                const n = Number(line.trim());
                Number.isInteger(n) && n > 0
                    ? resolve(n)
                    : reject(
                          new AnalyzerError(
                              `policy pack printed ${JSON.stringify(line.slice(0, 80))} instead of a port`,
                          ),
                      );
            });
            // `exited` never rejects (support/process.ts).
            spawned.exited.then(({ code }) => {
                clearTimeout(timer);
                reject(
                    new AnalyzerError(
                        `policy pack exited (code ${code}) before serving: ${stderr.trim().split("\n")[0] ?? ""}`,
                    ),
                );
            }, reject);
        });
        let port: number;
        let client: analyzerGrpc.AnalyzerClient;
        let info: analyzerPb.AnalyzerInfo;
        try {
            port = await started;
            const c = new analyzerGrpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
            client = c;
            info = await call("getAnalyzerInfo", (q, cb) => c.getAnalyzerInfo(q, cb), new emptyPb.Empty());
        } catch (e) {
            spawned.kill();
            throw e;
        }
        const policies = info.getPoliciesList().map((p) => {
            const schema = p.getConfigschema();
            return {
                name: p.getName(),
                description: p.getDescription(),
                enforcementLevel: LEVEL_NAMES[p.getEnforcementlevel()] ?? "advisory",
                configSchema: schema
                    ? {
                          // a JSON schema's properties: an object a property
                          properties: (schema.getProperties()?.toJavaScript() ?? {}) as Record<
                              string,
                              Record<string, unknown>
                          >,
                          required: schema.getRequiredList(),
                      }
                    : undefined,
            };
        });
        return new Analyzer(spawned, client, policies);
    }

    async configure(config: PackConfig, stack: { project: string; stack: string }): Promise<void> {
        this.remediating = Object.values(config).some((e) => e.enforcementLevel === "remediate");
        const req = new analyzerPb.ConfigureAnalyzerRequest();
        const map = req.getPolicyconfigMap();
        for (const [name, entry] of Object.entries(config)) {
            const pc = new analyzerPb.PolicyConfig();
            pc.setEnforcementlevel(LEVEL_NUMBERS[entry.enforcementLevel ?? "advisory"]);
            pc.setProperties(toStruct(entry.properties ?? {}));
            map.set(name, pc);
        }
        await call("configure", (q, cb) => this.client.configure(q, cb), req);
        const sreq = new analyzerPb.AnalyzerStackConfigureRequest();
        sreq.setStack(stack.stack);
        sreq.setProject(stack.project);
        sreq.setOrganization("organization");
        sreq.setDryRun(true);
        await call("configureStack", (q, cb) => this.client.configureStack(q, cb), sreq);
    }

    private fill<M extends analyzerPb.AnalyzeRequest | analyzerPb.AnalyzerResource>(msg: M, r: WireResource): M {
        msg.setType(r.type);
        msg.setName(r.name);
        msg.setUrn(r.urn);
        msg.setProperties(toStruct((r.properties ?? {}) as Record<string, unknown>));
        const opts = new analyzerPb.AnalyzerResourceOptions();
        if (r.parent) opts.setParent(r.parent);
        msg.setOptions(opts);
        return msg;
    }

    private rows(response: analyzerPb.AnalyzeResponse, fallbackUrn: string): Row[] {
        const descriptions = new Map(this.policies.map((p) => [p.name, p.description]));
        return response
            .getDiagnosticsList()
            .map((d) =>
                row(
                    d.getPolicyname(),
                    d.getUrn() || fallbackUrn,
                    LEVEL_NAMES[d.getEnforcementlevel()] ?? "advisory",
                    normalizeMessage(d.getMessage(), descriptions.get(d.getPolicyname())),
                ),
            );
    }

    /**
     * Runs the pack's remediations on one resource, as the engine does before analyzing it: the properties
     * after every remediation that changed them (each sees the last one's output), and which policies did.
     */
    async remediate(r: WireResource): Promise<{ properties: unknown; remediations: Remediation[] }> {
        const res = await call<analyzerPb.AnalyzeRequest, analyzerPb.RemediateResponse>(
            "remediate",
            (q, cb) => this.client.remediate(q, cb),
            this.fill(new analyzerPb.AnalyzeRequest(), r),
        );
        let properties = r.properties;
        const remediations: Remediation[] = [];
        for (const m of res.getRemediationsList()) {
            const props = m.getProperties();
            if (!props) continue;
            properties = props.toJavaScript();
            remediations.push({ policy: m.getPolicyname(), urn: r.urn });
        }
        return { properties, remediations };
    }

    /**
     * Remediates and analyzes every resource (on its remediated properties), then the whole program (on
     * those too), returning violation rows; the remediations made are in `lastRemediations`.
     */
    async analyze(input: WireResource[]): Promise<Row[]> {
        const rows: Row[] = [];
        const resources: WireResource[] = [];
        this.lastRemediations = [];
        for (const given of input) {
            const remediated = this.remediating
                ? await this.remediate(given)
                : { properties: given.properties, remediations: [] };
            this.lastRemediations.push(...remediated.remediations);
            const r = remediated.remediations.length > 0 ? { ...given, properties: remediated.properties } : given;
            resources.push(r);
            const res = await call<analyzerPb.AnalyzeRequest, analyzerPb.AnalyzeResponse>(
                "analyze",
                (q, cb) => this.client.analyze(q, cb),
                this.fill(new analyzerPb.AnalyzeRequest(), r),
            );
            rows.push(...this.rows(res, r.urn));
        }
        const req = new analyzerPb.AnalyzeStackRequest();
        req.setResourcesList(
            resources.map((r) => {
                const m = this.fill(new analyzerPb.AnalyzerResource(), r);
                if (r.parent) m.setParent(r.parent);
                m.setDependenciesList(r.dependencies ?? []);
                return m;
            }),
        );
        const res = await call<analyzerPb.AnalyzeStackRequest, analyzerPb.AnalyzeResponse>(
            "analyzeStack",
            (q, cb) => this.client.analyzeStack(q, cb),
            req,
        );
        // A stack-level diagnostic without a URN belongs to the program as a whole.
        rows.push(...this.rows(res, ""));
        return rows;
    }

    /** The pack's process id (for tests that prove it was killed). */
    get pid(): number | undefined {
        return this.process.child.pid;
    }

    /** False once stopped (or killed after a deadline): start a new one. */
    get alive(): boolean {
        return !this.stopped;
    }

    /** Closes the connection and kills the pack's process group. */
    stop(): void {
        this.stopped = true;
        try {
            this.client.close();
        } catch {
            /* already closed */
        }
        this.process.kill();
    }
}

/** One unary call of the analyzer: the request sent with `send` (the client's method), its answer or one line. */
function call<Req, Res>(
    method: string,
    send: (req: Req, callback: (err: grpc.ServiceError | null, res: Res) => void) => unknown,
    req: Req,
): Promise<Res> {
    return new Promise((resolve, reject) => {
        send(req, (err, res) => {
            if (err) {
                reject(
                    new AnalyzerError(
                        `analyzer ${method} failed: ${String(err.details || err.message).split("\n")[0]}`,
                    ),
                );
            } else {
                resolve(res);
            }
        });
    });
}
