/**
 * What `pko-guard webhook` accepts of a caller, so that no request, however made, holds more than a bounded
 * share of memory, time or metrics:
 * - a review's body: JSON by its Content-Type, else 415; at most `maxBodyBytes`, else 413 (before a byte of it
 *   is read when its Content-Length says so);
 * - reviews judged at once: at most `maxConcurrent`, holding at most `maxInflightBytes` of bodies in all (one
 *   large review costs about ten times its size while judged); beyond, 429 with Retry-After;
 * - time: the HTTPS server's own limits (serve.ts): headers within `headersTimeoutMs`, the whole request within
 *   `requestTimeoutMs`, an idle kept-alive connection closed after `keepAliveTimeoutMs`, any connection silent
 *   for `idleTimeoutMs` (one that never sends a request) closed;
 * - metrics: label values from closed sets (the watched kinds, the admission operations, the pack's rules),
 *   anything else counted as "other", so made-up kinds do not add series.
 */
import type { IncomingMessage } from "http";
import { policies } from "../policies/index";
import { WATCHED_KINDS } from "./kinds";

export interface ServeLimits {
    maxBodyBytes: number;
    maxConcurrent: number;
    maxInflightBytes: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    idleTimeoutMs: number;
    maxHeaderSize: number;
}

export const DEFAULT_LIMITS: ServeLimits = {
    // An object is at most ~1.5 MiB in etcd; an update's review holds it twice.
    maxBodyBytes: 4 * 1024 * 1024,
    // Reviews are small and judged in milliseconds; the bytes in flight bound the memory of large ones.
    maxConcurrent: 64,
    maxInflightBytes: 16 * 1024 * 1024,
    headersTimeoutMs: 10_000,
    // The API server waits at most 30 s (timeoutSeconds' maximum) for a webhook.
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 30_000,
    idleTimeoutMs: 60_000,
    maxHeaderSize: 16 * 1024,
};

/** A request refused before it is judged: the status and the one line said. */
export class Refused extends Error {
    constructor(
        readonly status: number,
        message: string,
    ) {
        super(message);
    }
}

/** The reviews being judged and the body bytes they hold; a review enters only within both limits. */
export class InFlight {
    private reviews = 0;
    private bytes = 0;
    /** Reviews refused for being beyond the limits (metrics). */
    refused = 0;

    constructor(private readonly limits: ServeLimits) {}

    /** Takes a place for a review of `bytes`; returns its release, or throws Refused (429). */
    enter(bytes: number): () => void {
        if (this.reviews >= this.limits.maxConcurrent || this.bytes + bytes > this.limits.maxInflightBytes) {
            this.refused++;
            throw new Refused(
                429,
                `too many reviews at once (${this.reviews} being judged, at most ${this.limits.maxConcurrent} and ${this.limits.maxInflightBytes} bytes); retry`,
            );
        }
        this.reviews++;
        this.bytes += bytes;
        let released = false;
        return () => {
            if (released) return;
            released = true;
            this.reviews--;
            this.bytes -= bytes;
        };
    }

    /** Reviews being judged now. */
    size(): number {
        return this.reviews;
    }
}

/** Whether a Content-Type header names JSON (application/json, any parameters). */
export function isJson(contentType: string | undefined): boolean {
    return /^application\/json\s*(;|$)/i.test((contentType ?? "").trim());
}

/**
 * The most bytes the body may hold: its Content-Length, checked against the limits before any of it is read,
 * or the limit itself when it has none (chunked). Throws Refused.
 */
export function announcedLength(req: IncomingMessage, limits: ServeLimits): number {
    if (!isJson(req.headers["content-type"])) throw new Refused(415, "send the AdmissionReview as application/json");
    const header = req.headers["content-length"];
    if (header === undefined) return limits.maxBodyBytes;
    const length = Number(header);
    if (length > limits.maxBodyBytes)
        throw new Refused(413, `request body of ${length} bytes is larger than ${limits.maxBodyBytes} bytes`);
    return length;
}

/** The body, at most `length` bytes (announcedLength; more is refused). */
export function readBody(req: IncomingMessage, length: number): Promise<string> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (c: Buffer) => {
            size += c.length;
            if (size > length) {
                reject(new Refused(413, `request body larger than ${length} bytes`));
                req.destroy();
                return;
            }
            chunks.push(c);
        });
        req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        req.on("error", reject);
        req.on("aborted", () => reject(new Refused(400, "the request was aborted")));
    });
}

/** The API server truncates longer warnings; each is kept whole and readable. */
export const MAX_WARNING = 250;
/** Warnings returned at most, the last saying how many more there were. */
export const MAX_WARNINGS = 20;

/** At most MAX_WARNINGS warnings of at most MAX_WARNING characters each, the last naming how many were left out. */
export function boundedWarnings(warnings: string[]): string[] {
    const clip = (w: string) => (w.length <= MAX_WARNING ? w : `${w.slice(0, MAX_WARNING - 1)}…`);
    if (warnings.length <= MAX_WARNINGS) return warnings.map(clip);
    const more = warnings.length - (MAX_WARNINGS - 1);
    return [
        ...warnings.slice(0, MAX_WARNINGS - 1).map(clip),
        `and ${more} more warning(s); pko-guard audit lists them all`,
    ];
}

const KINDS = new Set(WATCHED_KINDS.map((k) => k.kind));
const OPERATIONS = new Set(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

/** A kind as a metric label: a watched kind, else "other". */
export function kindLabel(kind: string): string {
    return KINDS.has(kind) ? kind : "other";
}

/** An admission operation as a metric label: one of the four, else "other". */
export function operationLabel(operation: string): string {
    return OPERATIONS.has(operation) ? operation : "other";
}

/** A rule name as a metric label: one of the pack's rules or of `own` (pko-guard's own refusals), else "other". */
export function policyLabel(policy: string, own: readonly string[]): string {
    return POLICIES.has(policy) || own.includes(policy) ? policy : "other";
}

const POLICIES = new Set(policies.map((p) => p.name));
