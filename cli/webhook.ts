/**
 * `pko-guard webhook --cert FILE --key FILE ...`: a validating admission webhook (AdmissionReview admission.k8s.io/v1)
 * over HTTPS.
 * POST /validate returns cluster/admission.ts's decision (mandatory findings deny, advisory ones warn; --warn-only
 * denies nothing); /healthz, /readyz (cluster/health.ts: cache synced, API server answering, TLS material usable) and
 * /metrics are on --health-port when --client-ca restricts /validate to the API server. Logs are JSON lines of
 * identities, rule names and decisions, never an object's content, so no Secret value can reach them. Design and threat
 * model: docs/cluster.md.
 */
import { Command, InvalidArgumentError } from "commander";
import type { IncomingMessage, ServerResponse } from "http";
import type { Server } from "https";
import * as k8s from "@kubernetes/client-node";
import { escapeText } from "../support/escape";
import { packConfig } from "../evaluation/pack-config";
import { ClusterCache } from "../cluster/cache";
import { OWN_POLICIES } from "../cluster/admission";
import { reviewObject } from "../cluster/ordered-review";
import { Review, escapeLines, parseReview } from "../cluster/admission-review";
import { AdmittedOverlay } from "../cluster/admitted";
import { ReviewLocks } from "../cluster/review-locks";
import { Claims } from "../cluster/claims";
import { replicaClaims } from "../cluster/lease-store";
import { WebhookMetrics, webhookMetrics } from "../cluster/admission-metrics";
import { FreshReads } from "../cluster/deadline";
import {
    DEFAULT_LIMITS,
    InFlight,
    Refused,
    ServeLimits,
    announcedLength,
    boundedWarnings,
    kindLabel,
    operationLabel,
    policyLabel,
    readBody,
} from "../cluster/limits";
import { closeServer, listen, tlsServers } from "../cluster/serve";
import { Readiness } from "../cluster/health";
import { enforceLoop } from "../cluster/enforce";
import { loadKubeConfig } from "../cluster/kubeconfig";
import { portNumber, positiveInt } from "../support/options";
import type { Run } from "./guide";

export interface WebhookOptions {
    cert: string;
    key: string;
    /** The CA of the callers' client certificates; the review server then requires one (serve.ts). */
    clientCa?: string;
    port: number;
    /** The address to bind (default 127.0.0.1 without a client CA, every address with one). */
    host?: string;
    /** A port for /healthz, /readyz and /metrics without a client certificate. */
    healthPort?: number;
    kubeconfig?: string;
    context?: string;
    config?: string;
    warnOnly: boolean;
    /** The deadline of a review's fresh reads (ms), below the configuration's timeoutSeconds. */
    readTimeoutMs?: number;
    limits?: Partial<ServeLimits>;
    /** Where log lines go (default: stdout). */
    log?: (line: string) => void;
    /** Poll interval for certificate changes. */
    certPollMs?: number;
    /** How often readiness checks the API server (ms; cluster/health.ts). */
    healthCheckMs?: number;
    /** Run the enforce loop (cluster/enforce.ts): delete young bindings that a race let through. */
    enforce?: boolean;
    /** How young a binding the enforce loop removes (ms). */
    enforceWindowMs?: number;
    /**
     * The webhook's own namespace: interacting reviews claim their keys there as Leases, so replicas order them
     * (cluster/claims.ts). Absent: ordered within each replica only.
     */
    claimsNamespace?: string;
}

export interface Webhook {
    port: number;
    /** The health server's port, when asked for. */
    healthPort?: number;
    cache: ClusterCache;
    reads: FreshReads;
    metrics: import("prom-client").Registry;
    close(): Promise<void>;
}

/** The default deadline of a review's fresh reads: below the shipped timeoutSeconds (5), with time to judge. */
export const READ_TIMEOUT_MS = 3000;

type Log = (level: string, event: string, fields?: Record<string, unknown>) => void;

/** What answering a request needs. */
interface Serving {
    o: WebhookOptions;
    /** Judged from the cache alone (a given cache has no server behind it). */
    cacheOnly: boolean;
    cache: ClusterCache;
    reads: FreshReads;
    inFlight: InFlight;
    limits: ServeLimits;
    config: ReturnType<typeof packConfig>;
    metrics: WebhookMetrics;
    readiness: Readiness;
    /** What this replica admitted that the cluster may not show yet, and the order of reviews that interact. */
    overlay: AdmittedOverlay;
    locks: ReviewLocks;
    /** Claims across replicas, with --claims-namespace. */
    claims?: Claims;
    log: Log;
}

/**
 * Starts the servers. `cache` replaces the one read from the cluster (benchmarks seed one): it is used as
 * given, not started.
 */
export async function startWebhook(
    o: WebhookOptions,
    given?: { kc?: k8s.KubeConfig; cache?: ClusterCache },
): Promise<Webhook> {
    const log: Log = (level, event, fields = {}) =>
        (o.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(
            JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }),
        );
    const limits: ServeLimits = Object.assign({}, DEFAULT_LIMITS, o.limits);
    const config = packConfig(o.config);
    const kc = given?.cache ? given.kc : (given?.kc ?? loadKubeConfig(o.kubeconfig, o.context));
    const cache =
        given?.cache ??
        new ClusterCache(kc!, {
            log: (event, fields) => log("info", event, fields),
        });
    const enforcer = enforceLoop(o, { cache, config, kc, log });
    // Fresh reads of the bindings and Stacks around reviewed objects, shared by concurrent reviews (view.ts),
    // each list and each review under a deadline, made at a revision read after the review arrived (deadline.ts).
    const reads = new FreshReads(
        (kind, ns, name, signal, floor) => cache.listFresh(kind, ns, name, signal, floor),
        { readTimeoutMs: o.readTimeoutMs ?? READ_TIMEOUT_MS },
        (signal) => cache.currentRevision(signal),
    );
    const inFlight = new InFlight(limits);
    const metrics = webhookMetrics(cache, reads, inFlight);
    const servers = tlsServers(
        { cert: o.cert, key: o.key, clientCa: o.clientCa, pollMs: o.certPollMs },
        limits,
        o.healthPort !== undefined,
        log,
    );
    const cacheOnly = given?.cache !== undefined;
    const readiness = new Readiness({
        cache,
        reads: cacheOnly ? undefined : reads,
        tls: (now: Date) => servers.problems(now),
        intervalMs: o.healthCheckMs,
        log,
    });
    const s: Serving = {
        o,
        cacheOnly,
        cache,
        reads,
        inFlight,
        limits,
        config,
        metrics,
        readiness,
        overlay: new AdmittedOverlay(cache),
        locks: new ReviewLocks(),
        claims: cacheOnly ? undefined : claimsOf(o, kc, log, metrics),
        log,
    };
    servers.review.on("request", (req, res) => answered(res, s, handleRequest(req, res, s, !servers.health)));
    servers.health?.on("request", (req, res) => answered(res, s, handleProbe(req, res, s)));
    const host = o.host ?? (o.clientCa ? "0.0.0.0" : "127.0.0.1");
    const opened: Server[] = [];
    const close = async () => {
        servers.unwatch();
        readiness.stop();
        await enforcer?.stop();
        cache.stop();
        await Promise.all(opened.map(closeServer));
    };
    try {
        const port = await listen(servers.review, o.port, host);
        opened.push(servers.review);
        const healthPort = servers.health ? await listen(servers.health, o.healthPort!, host) : undefined;
        if (servers.health) opened.push(servers.health);
        if (!given?.cache) cache.start();
        readiness.start();
        enforcer?.start();
        log("info", "webhook.listening", { host, port, healthPort, clientCa: !!o.clientCa, warnOnly: o.warnOnly });
        if (!o.clientCa) log("warn", "webhook.unauthenticated", { note: "no --client-ca: any caller is answered" });
        return { port, healthPort, cache, reads, metrics: metrics.registry, close };
    } catch (e) {
        await close();
        throw e;
    }
}

/** Claims across replicas with --claims-namespace (cluster/claims.ts), each timed in the metrics. */
function claimsOf(o: WebhookOptions, kc: k8s.KubeConfig | undefined, log: Log, m: WebhookMetrics): Claims | undefined {
    if (!o.claimsNamespace || !kc) return undefined;
    const observe = (ms: number) => m.claims.observe(ms / 1000);
    return replicaClaims(kc, o.claimsNamespace, o.readTimeoutMs ?? READ_TIMEOUT_MS, log, observe);
}

/** A request's handling, in the background: one that throws is logged and answered 500, never the process's end. */
function answered(res: ServerResponse, s: Serving, handling: Promise<void>): void {
    handling.catch((e: unknown) => {
        s.log("error", "webhook.request_failed", { error: escapeText(e instanceof Error ? e.message : String(e)) });
        if (!res.headersSent) send(res, 500, "internal error\n");
        else res.destroy();
    });
}

function send(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
    res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
    res.end(body);
}

/** /healthz, /readyz and /metrics; true when the request was one of them. */
async function answerProbe(req: IncomingMessage, res: ServerResponse, s: Serving): Promise<boolean> {
    const url = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" || !["/healthz", "/readyz", "/metrics"].includes(url)) return false;
    try {
        if (url === "/healthz") send(res, 200, "ok\n");
        else if (url === "/metrics") send(res, 200, await s.metrics.registry.metrics(), s.metrics.registry.contentType);
        else {
            const reasons = s.readiness.reasons();
            send(res, reasons.length === 0 ? 200 : 503, reasons.length === 0 ? "ok\n" : `${reasons.join("\n")}\n`);
        }
    } catch {
        send(res, 500, "internal error\n");
    }
    return true;
}

/** A request to the health server. */
async function handleProbe(req: IncomingMessage, res: ServerResponse, s: Serving): Promise<void> {
    if (!(await answerProbe(req, res, s))) send(res, 404, "not found\n");
}

/** A request to the review server: an AdmissionReview judged and answered (and the probes, without a health server). */
async function handleRequest(req: IncomingMessage, res: ServerResponse, s: Serving, probes: boolean): Promise<void> {
    if (probes && (await answerProbe(req, res, s))) return;
    const url = (req.url ?? "").split("?")[0];
    if (url !== "/validate") return send(res, 404, "not found\n");
    if (req.method !== "POST") return send(res, 405, "POST an AdmissionReview\n");
    const end = s.metrics.latency.startTimer();
    let release: (() => void) | undefined;
    let review: Review;
    try {
        // Bytes are held as they arrive; a place to be judged is taken once the body is whole.
        const body = await readBody(req, announcedLength(req, s.limits), s.inFlight);
        try {
            review = parseReview(body.text);
        } catch (e) {
            s.inFlight.give(body.bytes);
            throw e;
        }
        release = s.inFlight.enter(body.bytes, review.user);
    } catch (e) {
        release?.();
        end();
        const status = e instanceof Refused ? e.status : 400;
        s.metrics.refused.inc({ status: String(status) });
        s.log("warn", "admission.refused", { status, error: escapeText(String((e as Error).message)) });
        if (status === 429) res.setHeader("Retry-After", "1");
        // The rest of a refused body is not read: the connection ends with the answer.
        res.setHeader("Connection", "close");
        return send(res, status, `${(e as Error).message}\n`);
    }
    try {
        const { response, decision } = await decide(review, s);
        s.metrics.requests.inc({
            kind: kindLabel(review.kind),
            operation: operationLabel(review.input.operation),
            decision,
        });
        send(
            res,
            200,
            JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }),
            "application/json",
        );
    } finally {
        release();
        end();
    }
}

/** The AdmissionReview's response and the decision counted; a decision that could not be made denies (unless warn-only). */
async function decide(review: Review, s: Serving): Promise<{ response: Record<string, unknown>; decision: string }> {
    // Identities as logged: escaped and clipped (a review's strings are the caller's).
    const clip = (v: string) => escapeText(v.slice(0, 253));
    const id = {
        uid: clip(review.uid),
        kind: clip(review.kind),
        namespace: clip(review.namespace),
        name: clip(review.name),
        operation: operationLabel(review.input.operation),
    };
    try {
        const judge = { config: s.config, warnOnly: s.o.warnOnly };
        // One deadline for the review's reads and its wait for the reviews it could interact with (ordered-review.ts).
        const deadline = s.reads.reviewDeadline();
        const d = await reviewObject(review.input, {
            cache: s.cache,
            judge,
            overlay: s.overlay,
            locks: s.locks,
            claims: s.claims,
            deadline,
            // A given cache (benchmarks) has no server behind it: judged from the cache alone.
            fresh: s.cacheOnly ? undefined : () => s.reads.forReview(deadline),
        });
        const blocking = d.findings.filter((f) => f.status === "blocking");
        for (const f of blocking) s.metrics.denials.inc({ policy: policyLabel(f.policy, OWN_POLICIES) });
        const decision = d.skipped ? "skipped" : d.allowed ? (blocking.length > 0 ? "warn-only" : "allowed") : "denied";
        const response: Record<string, unknown> = { uid: review.uid, allowed: d.allowed };
        if (!d.allowed)
            response.status = { code: 403, reason: "Forbidden", message: escapeLines(d.message ?? "denied") };
        if (d.warnings.length > 0) response.warnings = boundedWarnings(d.warnings.map((w) => escapeText(w)));
        s.log(d.allowed ? "info" : "warn", "admission.decided", {
            decision,
            ...id,
            policies: [...new Set(d.findings.map((f) => f.policy))].slice(0, 20),
            blocking: blocking.length,
            warnings: d.warnings.length,
        });
        return { response, decision };
    } catch (e) {
        // Fail closed: a decision that could not be made denies (unless warn-only).
        const response = s.o.warnOnly
            ? {
                  uid: review.uid,
                  allowed: true,
                  warnings: ["pko-guard could not judge this object (internal error); admitted in warn-only mode"],
              }
            : {
                  uid: review.uid,
                  allowed: false,
                  status: { code: 500, message: "pko-guard could not judge this object (internal error); refused" },
              };
        s.log("error", "admission.failed", { error: escapeText(String((e as Error).message).split("\n")[0]), ...id });
        return { response, decision: "error" };
    }
}

/** The command: serves until SIGTERM or SIGINT, then closes and exits 0. */
export async function runWebhook(o: WebhookOptions): Promise<number> {
    const w = await startWebhook(o);
    return new Promise<number>((resolve, reject) => {
        const stop = async () => {
            await w.close();
            resolve(0);
        };
        const stopOnce = () => {
            stop().catch((e: unknown) => reject(e instanceof Error ? e : new Error(String(e))));
        };
        process.once("SIGTERM", stopOnce);
        process.once("SIGINT", stopOnce);
    });
}

/** A review's read deadline: below the 30 s an API server waits at most for a webhook. */
function readTimeout(v: string): number {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || n >= 30) throw new InvalidArgumentError("seconds, above 0 and below 30");
    return n;
}

interface WebhookCliOptions extends Omit<
    WebhookOptions,
    "readTimeoutMs" | "limits" | "log" | "certPollMs" | "enforceWindowMs"
> {
    readTimeout: number;
    maxBodyBytes: number;
    maxConcurrent: number;
    maxPerUser: number;
    enforceWindow: number;
}

export function command(run: Run): Command {
    return new Command("webhook")
        .summary("serve a validating admission webhook")
        .description(
            "serve a validating admission webhook (HTTPS: POST /validate, GET /healthz, /readyz, /metrics) judging objects with the pko-guard policies and the cluster's state",
        )
        .requiredOption("--cert <file>", "TLS certificate (PEM; reloaded when the file changes)")
        .requiredOption("--key <file>", "TLS private key (PEM; reloaded when the file changes)")
        .option(
            "--client-ca <file>",
            "CA of the API server's client certificate (PEM): callers without one it signed are refused in the TLS handshake",
        )
        .option("--host <address>", "address to listen on (default: 127.0.0.1, or every address with --client-ca)")
        .option("--port <n>", "port to listen on", portNumber, 8443)
        .option(
            "--health-port <n>",
            "port for /healthz, /readyz and /metrics, asking no client certificate",
            portNumber,
        )
        .option(
            "--kubeconfig <file>",
            "kubeconfig for reading cluster state (default: in-cluster, then KUBECONFIG or ~/.kube/config)",
        )
        .option("--context <name>", "kubeconfig context")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--warn-only", "deny nothing: would-be denials come back as warnings", false)
        .option(
            "--read-timeout <seconds>",
            "deadline of a review's reads of the API server (keep it below the webhook's timeoutSeconds)",
            readTimeout,
            3,
        )
        .option("--max-body-bytes <n>", "largest review accepted (413 beyond)", positiveInt, 4 * 1024 * 1024)
        .option("--max-concurrent <n>", "reviews judged at once (429 beyond)", positiveInt, 64)
        .option(
            "--max-per-user <n>",
            "reviews of one requesting user judged at once (429 beyond, for that user)",
            positiveInt,
            16,
        )
        .option(
            "--enforce",
            "delete young bindings that give a Stack's account cluster-admin, which a race between replicas let through",
            false,
        )
        .option("--enforce-window <seconds>", "how young a binding --enforce deletes", positiveInt, 300)
        .option(
            "--claims-namespace <namespace>",
            "the webhook's own namespace: replicas claim interacting reviews there as Leases, so no two of them admit a violation together",
        )
        .action(async (o: WebhookCliOptions) => {
            const limits = { maxBodyBytes: o.maxBodyBytes, maxConcurrent: o.maxConcurrent, maxPerUser: o.maxPerUser };
            const enforceWindowMs = o.enforceWindow * 1000;
            run.code = await runWebhook(
                Object.assign({ readTimeoutMs: o.readTimeout * 1000, limits, enforceWindowMs }, o),
            );
        });
}
