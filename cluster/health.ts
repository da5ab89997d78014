/**
 * The webhook's readiness (`/readyz`): why this replica should not be sent reviews, told from what it knows now,
 * never by waiting on a read, so a probe answers at once. A periodic consistent list (answered only while the
 * API server and etcd are) keeps readiness following them even when no reviews arrive.
 */
import { escapeText } from "../support/escape";
import { ClusterCache } from "./cache";
import { FreshReads } from "./deadline";

/** How often the API server is checked by default (ms). */
export const HEALTH_CHECK_MS = 2000;

export interface ReadinessOptions {
    cache: ClusterCache;
    /** Absent when the webhook judges from a given cache alone (benchmarks): nothing is read fresh. */
    reads?: FreshReads;
    /** Why the TLS material in use can answer nobody (serve.ts TlsServers.problems). */
    tls?: (now: Date) => string[];
    intervalMs?: number;
    log?: (level: string, event: string, fields?: Record<string, unknown>) => void;
}

export class Readiness {
    private timer?: NodeJS.Timeout;
    private lastFailing?: string;

    constructor(private readonly o: ReadinessOptions) {}

    /** Starts the periodic check of the API server (no-op without fresh reads). */
    start(): void {
        const reads = this.o.reads;
        if (!reads || this.timer) return;
        this.timer = setInterval(() => {
            reads
                .probe(true)
                .then(() => this.noteChange(reads.failing()))
                .catch((e: unknown) => this.o.log?.("error", "health.check_failed", { error: String(e) }));
        }, this.o.intervalMs ?? HEALTH_CHECK_MS);
        this.timer.unref();
    }

    stop(): void {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
    }

    /** Logs a change of the API server's health as the periodic check sees it. */
    private noteChange(failing: string | undefined): void {
        if (failing === this.lastFailing) return;
        if (failing !== undefined && this.lastFailing !== undefined) return void (this.lastFailing = failing);
        this.lastFailing = failing;
        if (failing === undefined) this.o.log?.("info", "health.api_server_answers");
        else this.o.log?.("warn", "health.api_server_failing", { error: escapeText(failing) });
    }

    /** Why the replica should not be sent reviews, one line each; empty when ready. */
    reasons(now = new Date()): string[] {
        const { cache, reads } = this.o;
        const reasons: string[] = [];
        if (!cache.synced()) reasons.push(`cache not synced: ${JSON.stringify(cache.state())}`);
        const stale = cache.stale();
        if (stale.length > 0) reasons.push(`cache stale (list or watch failing): ${stale.join(", ")}`);
        const failing = reads?.failing();
        if (failing !== undefined) reasons.push(`fresh reads of the API server failing: ${escapeText(failing)}`);
        for (const p of this.o.tls?.(now) ?? []) reasons.push(`TLS: ${p}`);
        return reasons;
    }
}
