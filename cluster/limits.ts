/**
 * What `pko-guard webhook` accepts of a caller, so that no request, however made, holds more than a bounded
 * share of memory, time or metrics. In-flight bytes are counted as they arrive (a trickled body holds only
 * what it sent), and concurrency is capped per requesting user as well as overall, so one tenant's burst
 * never fills the door. Metric labels come from closed sets, so made-up kinds add no series.
 */
import type { IncomingMessage } from "http";
import { policies } from "../policies/index";
import { WATCHED_KINDS } from "./kinds";

export interface ServeLimits {
    maxBodyBytes: number;
    maxConcurrent: number;
    /** Reviews of one requesting user judged at once. */
    maxPerUser: number;
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
    // A quarter of the door: four tenants bursting at once still leave room for a fifth.
    maxPerUser: 16,
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

/**
 * The body bytes held by requests (arriving or being judged) and the reviews being judged: bytes are taken
 * as they arrive (`take`), a place to be judged once the body is whole (`enter`), each within its limit.
 */
export class InFlight {
    private reviews = 0;
    private bytes = 0;
    private readonly byUser = new Map<string, number>();
    /** Reviews refused for being beyond the limits (metrics). */
    refused = 0;

    constructor(private readonly limits: ServeLimits) {}

    private refuse(why?: string): never {
        this.refused++;
        throw new Refused(
            429,
            why ??
                `too many reviews at once (${this.reviews} being judged, at most ${this.limits.maxConcurrent}; ${this.bytes} bytes of bodies held, at most ${this.limits.maxInflightBytes}); retry`,
        );
    }

    /** Takes `n` more bytes of a body as they arrive, or throws Refused (429) and takes none. */
    take(n: number): void {
        if (this.bytes + n > this.limits.maxInflightBytes) this.refuse();
        this.bytes += n;
    }

    /** Gives back bytes taken. */
    give(n: number): void {
        this.bytes -= n;
    }

    /**
     * A place to judge a review of `user` whose `bytes` were taken as they arrived; returns its release, which
     * gives them back too. Beyond maxConcurrent, or maxPerUser for that user, gives them back and throws Refused
     * (429).
     */
    enter(bytes: number, user = ""): () => void {
        const mine = this.byUser.get(user) ?? 0;
        if (this.reviews >= this.limits.maxConcurrent || mine >= this.limits.maxPerUser) {
            this.give(bytes);
            if (mine >= this.limits.maxPerUser)
                this.refuse(
                    `too many reviews at once for this user (${mine} being judged, at most ${this.limits.maxPerUser} a user); retry`,
                );
            this.refuse();
        }
        this.reviews++;
        this.byUser.set(user, mine + 1);
        let released = false;
        return () => {
            if (released) return;
            released = true;
            this.reviews--;
            const left = (this.byUser.get(user) ?? 1) - 1;
            if (left > 0) this.byUser.set(user, left);
            else this.byUser.delete(user);
            this.give(bytes);
        };
    }

    /** Reviews being judged now. */
    size(): number {
        return this.reviews;
    }

    /** Bytes of bodies held now, arriving or judged. */
    heldBytes(): number {
        return this.bytes;
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

/**
 * The body, at most `length` bytes (announcedLength; more is refused), each chunk taken from `inFlight` as it
 * arrives (429 beyond its bytes). Resolves with the text and the bytes taken, which the caller gives back
 * (InFlight#enter's release); on a refusal they are given back here.
 */
export function readBody(
    req: IncomingMessage,
    length: number,
    inFlight: InFlight,
): Promise<{ text: string; bytes: number }> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const fail = (e: Error) => {
            if (settled) return;
            settled = true;
            inFlight.give(size);
            // What else arrives is read and dropped; the refusal closes the connection (cli/webhook.ts).
            chunks.length = 0;
            reject(e);
        };
        req.on("data", (c: Buffer) => {
            if (settled) return;
            if (size + c.length > length) return fail(new Refused(413, `request body larger than ${length} bytes`));
            try {
                inFlight.take(c.length);
            } catch (e) {
                return fail(e as Error);
            }
            size += c.length;
            chunks.push(c);
        });
        req.on("end", () => {
            if (settled) return;
            settled = true;
            resolve({ text: Buffer.concat(chunks).toString("utf8"), bytes: size });
        });
        req.on("error", fail);
        req.on("aborted", () => fail(new Refused(400, "the request was aborted")));
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
