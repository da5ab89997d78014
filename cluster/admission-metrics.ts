/**
 * The Prometheus metrics of `pko-guard webhook`: reviews answered, denials by rule, latency, refusals before
 * judging, and the cache's and fresh reads' state, read when scraped. Every label value comes from a closed set
 * (limits.ts kindLabel, operationLabel, policyLabel), so no caller can add series.
 */
import * as prom from "prom-client";
import { ClusterCache } from "./cache";
import { FreshReads } from "./deadline";
import { WATCHED_KINDS } from "./kinds";
import { InFlight } from "./limits";

/** The webhook's own metrics (the cache's and the fresh reads' are read from them when scraped). */
export interface WebhookMetrics {
    registry: prom.Registry;
    requests: prom.Counter;
    denials: prom.Counter;
    latency: prom.Histogram;
    /** Requests refused before judging, by HTTP status. */
    refused: prom.Counter;
    /** Time to take a review's claims across replicas (claims.ts). */
    claims: prom.Histogram;
}

/** The metrics registry. */
export function webhookMetrics(cache: ClusterCache, reads: FreshReads, inFlight: InFlight): WebhookMetrics {
    const registry = new prom.Registry();
    const requests = new prom.Counter({
        name: "pko_guard_admission_requests_total",
        help: "Admission reviews answered, by kind (a watched kind or other), operation and decision",
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
    const refused = new prom.Counter({
        name: "pko_guard_admission_refused_total",
        help: "Requests to /validate refused before judging (400, 413, 415, 429), by status",
        labelNames: ["status"],
        registers: [registry],
    });
    const claims = new prom.Histogram({
        name: "pko_guard_claim_duration_seconds",
        help: "Time to take an interacting review's claims across replicas (Leases), waiting for other reviews included",
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
        registers: [registry],
    });
    gauge(registry, "pko_guard_cache_synced", "1 when every watched kind has been listed and is watched", () =>
        cache.synced() ? 1 : 0,
    );
    gauge(registry, "pko_guard_cache_stale", "1 while a watched kind's list or watch is failing", () =>
        cache.stale().length > 0 ? 1 : 0,
    );
    gauge(registry, "pko_guard_fresh_reads_failing", "1 while admission's fresh reads of the API server fail", () =>
        reads.failing() !== undefined ? 1 : 0,
    );
    gauge(registry, "pko_guard_admission_in_flight", "Reviews being judged now", () => inFlight.size());
    gauge(registry, "pko_guard_admission_body_bytes", "Bytes of review bodies held now, arriving or being judged", () =>
        inFlight.heldBytes(),
    );
    byKind(registry, "pko_guard_cache_objects", "Objects held in the cluster cache, by kind", (k) => cache.size(k));
    byKind(
        registry,
        "pko_guard_cache_unreadable_objects",
        "Objects of the cluster that pko-guard could not read (not cached; decisions they could change are refused), by kind",
        (k) => cache.unreadable(k).length,
    );
    counted(registry, "pko_guard_cache_watch_events_total", "Watch events applied to the cache", () => {
        return cache.counters.events;
    });
    counted(
        registry,
        "pko_guard_fresh_lists_total",
        "Lists sent to the API server for admission's fresh reads (concurrent reviews share them)",
        () => reads.shared.counters.lists,
    );
    counted(
        registry,
        "pko_guard_fresh_reads_kept_total",
        "Fresh reads answered by a read made at the same API server revision (no write stored since), without a list",
        () => reads.shared.counters.kept,
    );
    counted(registry, "pko_guard_cache_relists_total", "Full lists of a kind (start, 410 Gone, errors)", () => {
        return cache.counters.relists;
    });
    return { registry, requests, denials, latency, refused, claims };
}

function gauge(registry: prom.Registry, name: string, help: string, value: () => number): void {
    new prom.Gauge({
        name,
        help,
        registers: [registry],
        collect() {
            this.set(value());
        },
    });
}

function byKind(registry: prom.Registry, name: string, help: string, value: (kind: string) => number): void {
    new prom.Gauge({
        name,
        help,
        labelNames: ["kind"],
        registers: [registry],
        collect() {
            for (const k of WATCHED_KINDS) this.set({ kind: k.kind }, value(k.kind));
        },
    });
}

/** A counter whose value is another object's count, read when scraped. */
function counted(registry: prom.Registry, name: string, help: string, count: () => number): void {
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
