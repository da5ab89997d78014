/**
 * `pko-guard webhook --cert FILE --key FILE [--port N] [--kubeconfig FILE] [--config FILE] [--warn-only]`:
 * a validating admission webhook (AdmissionReview admission.k8s.io/v1) over HTTPS.
 *
 *   POST /validate  the decision of cluster/admission.ts for the request's object: mandatory findings
 *                   deny (each rule, its field and its fix), advisory ones come back as warnings; with
 *                   --warn-only nothing is denied (would-be denials become warnings)
 *   GET /healthz    200 while the server runs
 *   GET /readyz     200 once the cluster cache has synced, else 503 (a replica is not sent requests before)
 *   GET /metrics    Prometheus text: requests, denials by rule, a latency histogram, cache sync state and size
 *
 * The certificate and key are read from files and read again when either changes (cert-manager and
 * kubelet secret-volume updates swap them in place); a pair that does not load is logged and the old one
 * kept. Logs are JSON lines on stdout: events, object identities, rule names and decisions, never an
 * object's content (no Secret value or literal credential can reach them).
 */
import * as fs from "fs";
import { escapeText } from "../support/escape";
import * as https from "https";
import type { IncomingMessage, ServerResponse } from "http";
import * as k8s from "@kubernetes/client-node";
import * as prom from "prom-client";
import { BadInputError } from "../support/errors";
import { packConfig } from "../evaluation/pack-config";
import { ClusterCache } from "../cluster/cache";
import { AdmissionInput, judgeAdmission, judgeAdmissionFresh } from "../cluster/admission";
import { WATCHED_KINDS } from "../cluster/kinds";
import { SharedReads } from "../cluster/view";
import { loadKubeConfig } from "../cluster/kubeconfig";
import { extended } from "../support/shapes";

export interface WebhookOptions {
    cert: string;
    key: string;
    port: number;
    host?: string;
    kubeconfig?: string;
    context?: string;
    config?: string;
    warnOnly: boolean;
    /** Where log lines go (default: stdout). */
    log?: (line: string) => void;
    /** Poll interval for certificate changes. */
    certPollMs?: number;
}

export interface Webhook {
    port: number;
    cache: ClusterCache;
    metrics: prom.Registry;
    close(): Promise<void>;
}

/** Request bodies larger than this are refused (the API server caps objects at about 3 MiB). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The API server truncates longer warnings; keep each whole and readable. */
const MAX_WARNING = 250;

/** A message of several lines (a denial): each line escaped (support/escape.ts), the line breaks kept. */
function escapeLines(s: string): string {
    return s
        .split("\n")
        .map((l) => escapeText(l))
        .join("\n");
}

function readPair(o: WebhookOptions): { cert: Buffer; key: Buffer } {
    try {
        return { cert: fs.readFileSync(o.cert), key: fs.readFileSync(o.key) };
    } catch (e) {
        throw new BadInputError(
            `cannot read the TLS certificate or key: ${String((e as Error).message).split("\n")[0]}`,
        );
    }
}

function readBody(req: IncomingMessage): Promise<string> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY_BYTES) {
                reject(new BadInputError(`request body larger than ${MAX_BODY_BYTES} bytes`));
                req.destroy();
                return;
            }
            chunks.push(c);
        });
        req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        req.on("error", reject);
    });
}

interface Review {
    uid: string;
    input: AdmissionInput;
    kind: string;
    namespace: string;
    name: string;
}

function parseReview(text: string): Review {
    let body: unknown;
    try {
        body = JSON.parse(text);
    } catch {
        throw new BadInputError("the body is not JSON");
    }
    const b = body as { apiVersion?: unknown; kind?: unknown; request?: Record<string, unknown> };
    if (b?.apiVersion !== "admission.k8s.io/v1" || b.kind !== "AdmissionReview")
        throw new BadInputError("expected an AdmissionReview of admission.k8s.io/v1");
    const r = b.request;
    if (!r || typeof r.uid !== "string") throw new BadInputError("the AdmissionReview has no request.uid");
    const object = (r.object ?? null) as AdmissionInput["object"];
    const kind = (r.kind as { kind?: string } | undefined)?.kind ?? String(object?.kind ?? "");
    return {
        uid: r.uid,
        input: {
            operation: String(r.operation ?? ""),
            object,
            oldObject: (r.oldObject ?? null) as AdmissionInput["oldObject"],
        },
        kind,
        namespace: typeof r.namespace === "string" ? r.namespace : "",
        name: typeof r.name === "string" ? r.name : String((object?.metadata ?? {}).name ?? ""),
    };
}

function truncate(s: string, n: number): string {
    return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

type Log = (level: string, event: string, fields?: Record<string, unknown>) => void;

/** The webhook's own metrics (the cache's and the fresh reads' are read from them when scraped). */
interface WebhookMetrics {
    registry: prom.Registry;
    requests: prom.Counter;
    denials: prom.Counter;
    latency: prom.Histogram;
}

/** What answering a request needs. */
interface Serving {
    o: WebhookOptions;
    /** Judged from the cache alone (a given cache has no server behind it). */
    cacheOnly: boolean;
    cache: ClusterCache;
    reads: SharedReads;
    config: ReturnType<typeof packConfig>;
    metrics: WebhookMetrics;
    log: Log;
}

/**
 * Starts the server. `cache` replaces the one read from the cluster (benchmarks seed one): it is used as
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
    const config = packConfig(o.config);
    const cache =
        given?.cache ??
        new ClusterCache(given?.kc ?? loadKubeConfig(o.kubeconfig, o.context), {
            log: (event, fields) => log("info", event, fields),
        });
    // Fresh reads of the bindings and Stacks around reviewed objects, shared by concurrent reviews (view.ts).
    const reads = new SharedReads((kind, ns, name) => cache.listFresh(kind, ns, name));
    const metrics = webhookMetrics(cache, reads);
    const { server, reload } = tlsServer(o, log);
    const serving: Serving = { o, cacheOnly: given?.cache !== undefined, cache, reads, config, metrics, log };
    server.on("request", (req, res) => handleRequest(req, res, serving));

    await new Promise<void>((resolve, reject) => {
        server.once("error", (e) =>
            reject(new BadInputError(`cannot listen on port ${o.port}: ${(e as Error).message}`)),
        );
        server.listen(o.port, o.host ?? "0.0.0.0", () => resolve());
    });
    if (!given?.cache) cache.start();
    const port = (server.address() as import("net").AddressInfo).port;
    log("info", "webhook.listening", { port, warnOnly: o.warnOnly });
    return {
        port,
        cache,
        metrics: metrics.registry,
        close: async () => {
            fs.unwatchFile(o.cert, reload);
            fs.unwatchFile(o.key, reload);
            cache.stop();
            server.closeAllConnections();
            await new Promise<void>((r) => server.close(() => r()));
        },
    };
}

/** The metrics registry: requests, denials by rule, latency, and the cache's and fresh reads' counts. */
function webhookMetrics(cache: ClusterCache, reads: SharedReads): WebhookMetrics {
    const registry = new prom.Registry();
    const requests = new prom.Counter({
        name: "pko_guard_admission_requests_total",
        help: "Admission reviews answered, by kind, operation and decision",
        labelNames: ["kind", "operation", "decision"],
        registers: [registry],
    });
    const denials = new prom.Counter({
        name: "pko_guard_admission_denials_total",
        help: "Mandatory findings that denied (or would deny, in warn-only mode) an admission, by rule",
        labelNames: ["policy"],
        registers: [registry],
    });
    const latency = new prom.Histogram({
        name: "pko_guard_admission_duration_seconds",
        help: "Time to judge one admission review",
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
        registers: [registry],
    });
    new prom.Gauge({
        name: "pko_guard_cache_synced",
        help: "1 when every watched kind has been listed and is watched",
        registers: [registry],
        collect() {
            this.set(cache.synced() ? 1 : 0);
        },
    });
    new prom.Gauge({
        name: "pko_guard_cache_objects",
        help: "Objects held in the cluster cache, by kind",
        labelNames: ["kind"],
        registers: [registry],
        collect() {
            for (const k of WATCHED_KINDS) this.set({ kind: k.kind }, cache.size(k.kind));
        },
    });
    new prom.Gauge({
        name: "pko_guard_cache_unreadable_objects",
        help: "Objects of the cluster that pko-guard could not read (not cached; decisions they could change are refused), by kind",
        labelNames: ["kind"],
        registers: [registry],
        collect() {
            for (const k of WATCHED_KINDS) this.set({ kind: k.kind }, cache.unreadable(k.kind).length);
        },
    });
    countedMetric(registry, "pko_guard_cache_watch_events_total", "Watch events applied to the cache", () => {
        return cache.counters.events;
    });
    countedMetric(
        registry,
        "pko_guard_fresh_lists_total",
        "Lists sent to the API server for admission's fresh reads (concurrent reviews share them)",
        () => reads.counters.lists,
    );
    countedMetric(registry, "pko_guard_cache_relists_total", "Full lists of a kind (start, 410 Gone, errors)", () => {
        return cache.counters.relists;
    });
    return { registry, requests, denials, latency };
}

/** A counter whose value is another object's count, read when scraped. */
function countedMetric(registry: prom.Registry, name: string, help: string, count: () => number): void {
    new prom.Counter({
        name,
        help,
        registers: [registry],
        collect() {
            this.reset();
            this.inc(count());
        },
    });
}

/**
 * The HTTPS server with the certificate and key read from their files, and the reload (kept to stop polling):
 * both files are polled (inotify misses the symlink swap of mounted Secrets), a pair that does not load is logged
 * and the old one kept.
 */
function tlsServer(o: WebhookOptions, log: Log): { server: https.Server; reload: () => void } {
    const pair = readPair(o);
    const server = https.createServer(extended(pair, { minVersion: "TLSv1.2" as const }));
    const reload = () => {
        try {
            const next = readPair(o);
            server.setSecureContext(extended(next, { minVersion: "TLSv1.2" as const }));
            log("info", "tls.reloaded", { cert: o.cert });
        } catch (e) {
            log("error", "tls.reload_failed", { error: escapeText(String((e as Error).message).split("\n")[0]) });
        }
    };
    const poll = o.certPollMs ?? 2000;
    fs.watchFile(o.cert, { interval: poll }, reload);
    fs.watchFile(o.key, { interval: poll }, reload);
    return { server, reload };
}

/** One request: a probe, the metrics, or an AdmissionReview judged and answered. */
async function handleRequest(req: IncomingMessage, res: ServerResponse, s: Serving): Promise<void> {
    const url = (req.url ?? "").split("?")[0];
    const send = (status: number, body: string, type = "text/plain; charset=utf-8") => {
        res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
        res.end(body);
    };
    try {
        if (req.method === "GET" && url === "/healthz") return send(200, "ok\n");
        if (req.method === "GET" && url === "/readyz")
            return s.cache.synced()
                ? send(200, "ok\n")
                : send(503, `cache not synced: ${JSON.stringify(s.cache.state())}\n`);
        if (req.method === "GET" && url === "/metrics")
            return send(200, await s.metrics.registry.metrics(), s.metrics.registry.contentType);
        if (url !== "/validate") return send(404, "not found\n");
        if (req.method !== "POST") return send(405, "POST an AdmissionReview\n");
    } catch {
        return send(500, "internal error\n");
    }
    const end = s.metrics.latency.startTimer();
    let review: Review;
    try {
        review = parseReview(await readBody(req));
    } catch (e) {
        end();
        s.log("warn", "admission.bad_request", { error: escapeText(String((e as Error).message)) });
        return send(400, `${(e as Error).message}\n`);
    }
    const { response, decision } = await decide(review, s);
    s.metrics.requests.inc({ kind: review.kind, operation: review.input.operation, decision });
    end();
    send(
        200,
        JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }),
        "application/json",
    );
}

/** The AdmissionReview's response and the decision counted; a decision that could not be made denies (unless warn-only). */
async function decide(review: Review, s: Serving): Promise<{ response: Record<string, unknown>; decision: string }> {
    const id = {
        uid: review.uid,
        kind: escapeText(review.kind),
        namespace: escapeText(review.namespace),
        name: escapeText(review.name),
        operation: review.input.operation,
    };
    try {
        const judge = { config: s.config, warnOnly: s.o.warnOnly };
        // A given cache (benchmarks) has no server behind it: judged from the cache alone.
        const d = s.cacheOnly
            ? judgeAdmission(review.input, s.cache, judge)
            : await judgeAdmissionFresh(review.input, s.cache, judge, s.reads.read);
        const blocking = d.findings.filter((f) => f.status === "blocking");
        for (const f of blocking) s.metrics.denials.inc({ policy: f.policy });
        const decision = d.skipped ? "skipped" : d.allowed ? (blocking.length > 0 ? "warn-only" : "allowed") : "denied";
        const response: Record<string, unknown> = { uid: review.uid, allowed: d.allowed };
        if (!d.allowed)
            response.status = { code: 403, reason: "Forbidden", message: escapeLines(d.message ?? "denied") };
        if (d.warnings.length > 0) response.warnings = d.warnings.map((w) => truncate(escapeText(w), MAX_WARNING));
        s.log(
            d.allowed ? "info" : "warn",
            "admission.decided",
            extended(id, {
                decision,
                policies: [...new Set(d.findings.map((f) => f.policy))],
                blocking: blocking.length,
                warnings: d.warnings.length,
            }),
        );
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
        s.log(
            "error",
            "admission.failed",
            extended(id, { error: escapeText(String((e as Error).message).split("\n")[0]) }),
        );
        return { response, decision: "error" };
    }
}

/** The command: serves until SIGTERM or SIGINT, then closes and exits 0. */
export async function runWebhook(o: WebhookOptions): Promise<number> {
    const w = await startWebhook(o);
    return new Promise<number>((resolve) => {
        const stop = async () => {
            await w.close();
            resolve(0);
        };
        process.once("SIGTERM", () => void stop());
        process.once("SIGINT", () => void stop());
    });
}
