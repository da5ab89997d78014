/**
 * Claims across replicas: the review locks (review-locks.ts) order interacting reviews within one replica; a claim
 * orders them across replicas, through the API server. Each key a review holds is a Lease in the webhook's own
 * namespace (tenants have no rights there), named from a hash of the key: created to claim it (409: another
 * review holds it, so wait, bounded by the review's deadline), deleted to release it (preconditions on uid and
 * resourceVersion, so a claim taken over is never deleted by its old holder). A Lease whose holder died is taken
 * over once expired, by an update at the resourceVersion read. The holder keeps it after deciding until the
 * object it admitted shows in its cache (so it is stored, and the next holder's fresh read, sent after the claim,
 * holds it) or `holdMs` passes (the API server may still refuse the write after the webhooks).
 *
 * A key is claimed exclusively (a review that changes what the key names) or shared (one that only reads it: a
 * binding reads its role); shared claims of one key do not wait for each other. ALL (every key) is claimed
 * exclusively and conflicts with every other claim. The wider claim waits holding its Lease: an exclusive one
 * until no other review holds a shared claim of its key, ALL until no other holds any key; the narrower one,
 * finding the wider held once it wrote its own Leases, gives its Leases back and waits until the wider is
 * released. Each writes its own Lease before reading the other's, so of two such reviews at least one sees the
 * other (every write and quorum read is ordered by the one etcd).
 */
import * as crypto from "crypto";
import { ALL } from "./review-locks";
import { withDeadline } from "./deadline";

/** A Lease as claims read it. */
export interface LeaseRecord {
    name: string;
    uid: string;
    resourceVersion: string;
    holder: string;
    /** When its holder last wrote it (ms since the epoch, the holder's clock). */
    renewMs: number;
    durationS: number;
}

/** A Lease to write: the name, who holds it, for how long, and whose claim it is. */
export interface LeaseWrite {
    name: string;
    holder: string;
    renewMs: number;
    durationS: number;
    /** ALL's; else a key's, exclusive, or shared of the key whose exclusive Lease is `sharedOf`. */
    all: boolean;
    sharedOf?: string;
}

/** Thrown by create and takeOver when another review wrote the Lease first (HTTP 409). */
export class LeaseConflict extends Error {}

/** The Leases of the webhook's namespace, through the API server (lease-store.ts; tests give a fake). */
export interface LeaseStore {
    /** Creates the Lease; LeaseConflict when it exists. */
    create(w: LeaseWrite, signal: AbortSignal): Promise<LeaseRecord>;
    /** The Lease, or undefined when there is none (a quorum read). */
    get(name: string, signal: AbortSignal): Promise<LeaseRecord | undefined>;
    /** Replaces `old` (at its resourceVersion) with `w`; LeaseConflict when it changed since read. */
    takeOver(old: LeaseRecord, w: LeaseWrite, signal: AbortSignal): Promise<LeaseRecord>;
    /** Deletes the Lease if it is still `r` (uid, resourceVersion); gone or changed is no error. */
    remove(r: LeaseRecord): Promise<void>;
    /** Every key's Lease, exclusive or shared (not ALL's), a quorum read. */
    keyLeases(signal: AbortSignal): Promise<LeaseRecord[]>;
    /** The shared claims of the key whose exclusive Lease is `name`, a quorum read. */
    sharedLeases(name: string, signal: AbortSignal): Promise<LeaseRecord[]>;
}

/** Why a review got no claim: its deadline passed first, or the API server could not be asked. */
export class ClaimError extends Error {}

export interface ClaimOptions {
    /** Who holds a claim: this replica and the review (each review's claims are its own). */
    replica: string;
    /** How long a claim is kept after the decision at most, waiting for the admitted object to show (ms). */
    holdMs: number;
    /** A Lease's duration (s): longer than a review's deadline and `holdMs` together, so a live holder's never expires. */
    durationS: number;
    /** The first pause between tries at a held Lease (ms); doubled up to ten times that, with jitter. */
    pollMs?: number;
    now?: () => number;
    /** Release failures (logged by the caller; the Lease then expires). */
    onReleaseError?: (e: unknown) => void;
    /** Each claim taken: how long taking it took (ms), waiting for other reviews included. */
    onClaimed?: (ms: number) => void;
}

/** What a review claims: keys it changes (exclusive) and keys it only reads (shared). */
export interface ClaimKeys {
    exclusive: string[];
    shared: string[];
}

/** A claim held: `release` gives it back once `shown()` says the admitted object is stored (or at once without it). */
export interface Claim {
    release(shown?: () => boolean): void;
}

export const ALL_LEASE = "pko-guard-claim-all";

/** The Lease name of a key: a hash, so a tenant's namespace or role name never reaches a name's limits. */
export function leaseName(key: string): string {
    if (key === ALL) return ALL_LEASE;
    return `pko-guard-claim-${crypto.createHash("sha256").update(key).digest("hex").slice(0, 40)}`;
}

function aborted(what: string): ClaimError {
    return new ClaimError(`waited until its deadline for another review's claim on ${what}`);
}

/** Resolves after `ms`, or rejects with `onAbort()` when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal, onAbort: () => Error): Promise<void> {
    if (signal.aborted) return Promise.reject(onAbort());
    return new Promise((resolve, reject) => {
        const done = () => {
            clearTimeout(t);
            reject(onAbort());
        };
        const t = setTimeout(() => {
            signal.removeEventListener("abort", done);
            resolve();
        }, ms);
        signal.addEventListener("abort", done, { once: true });
    });
}

export class Claims {
    private next = 0;
    private readonly now: () => number;
    private readonly pollMs: number;
    /** Claims held now (metrics, tests). */
    held = 0;

    constructor(
        private readonly store: LeaseStore,
        private readonly o: ClaimOptions,
    ) {
        this.now = o.now ?? (() => Date.now());
        this.pollMs = o.pollMs ?? 10;
    }

    private expired(r: LeaseRecord): boolean {
        return r.renewMs + r.durationS * 1000 < this.now();
    }

    /**
     * Claims `keys` for one review, before it reads the cluster. Rejects with ClaimError when the deadline passes
     * first or the API server cannot be asked; nothing is held then.
     */
    async claim(keys: ClaimKeys, signal: AbortSignal): Promise<Claim> {
        const started = this.now();
        const holder = `${this.o.replica}/${this.next++}`;
        const exclusive = [...new Set(keys.exclusive)].sort();
        const shared = [...new Set(keys.shared)].filter((k) => !exclusive.includes(k) && k !== ALL).sort();
        const all = exclusive.includes(ALL);
        const got: LeaseRecord[] = [];
        const giveBack = () => {
            for (const r of got.splice(0)) this.store.remove(r).catch((e: unknown) => this.o.onReleaseError?.(e));
        };
        const others = (r: LeaseRecord) => r.holder !== holder && !this.expired(r);
        try {
            for (;;) {
                if (all) {
                    got.push(await this.take(ALL, holder, signal));
                    await this.untilNone(() => this.store.keyLeases(signal), others, signal, "namespaces");
                    break;
                }
                for (const k of exclusive) got.push(await this.take(k, holder, signal));
                for (const k of shared) got.push(await this.share(k, holder, signal));
                // Narrower than ALL, and than the exclusive claims of the keys read: given back while they are held.
                const wider = [ALL_LEASE, ...shared.map(leaseName)];
                let held: string | undefined;
                for (const name of wider) {
                    const r = await this.ask(() => this.store.get(name, signal), signal);
                    if (r && others(r)) {
                        held = name;
                        break;
                    }
                }
                if (held) {
                    giveBack();
                    const what = held === ALL_LEASE ? "every namespace" : "a role this review reads";
                    await this.untilFree(held, signal, what);
                    continue;
                }
                // Wider than the shared claims of its keys: waits, holding them, until those are released.
                for (const k of exclusive)
                    await this.untilNone(
                        () => this.store.sharedLeases(leaseName(k), signal),
                        others,
                        signal,
                        "a role this review changes",
                    );
                break;
            }
        } catch (e) {
            giveBack();
            throw e;
        }
        this.held++;
        this.o.onClaimed?.(this.now() - started);
        let released = false;
        return {
            release: (shown) => {
                if (released) return;
                released = true;
                const until = this.now() + this.o.holdMs;
                const done = () => {
                    this.held--;
                    giveBack();
                };
                const check = () => {
                    if (!shown || shown() || this.now() >= until) done();
                    else setTimeout(check, this.pollMs);
                };
                check();
            },
        };
    }

    /** A store call under the review's deadline: a failure other than a conflict is a ClaimError. */
    private async ask<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T> {
        if (signal.aborted) throw this.late(signal, "the review's deadline passed before its claim");
        try {
            // Bounded here whatever the store: a call that never answers ends at the deadline.
            return await withDeadline("the review's claim", signal, call);
        } catch (e) {
            if (e instanceof LeaseConflict || e instanceof ClaimError) throw e;
            const line = String((e as Error)?.message ?? e)
                .split("\n")[0]
                .slice(0, 200);
            if (signal.aborted) throw this.late(signal, line);
            throw new ClaimError(`the API server did not take the review's claim (${line})`);
        }
    }

    /**
     * The deadline passed: while waiting for another review's claim, that claim is the reason; before any wait, the
     * API server did not answer in time (`line`), as a fresh read that does not answer is told (deadline.ts).
     */
    private late(signal: AbortSignal, line: string): ClaimError {
        const what = this.waitedOn.get(signal);
        return what ? aborted(what) : new ClaimError(`cluster state cannot be read (${line})`);
    }

    /** What each review (by its deadline) last waited for another review's claim on. */
    private readonly waitedOn = new WeakMap<AbortSignal, string>();

    /** Pauses before trying again, a claim on `what` held by another review. */
    private wait(ms: number, signal: AbortSignal, what: string): Promise<void> {
        this.waitedOn.set(signal, what);
        return pause(ms * (0.5 + Math.random()), signal, () => aborted(what));
    }

    /** Takes one key's Lease: created, or an expired one taken over; waits while another review holds it. */
    private async take(key: string, holder: string, signal: AbortSignal): Promise<LeaseRecord> {
        const w = () => ({
            name: leaseName(key),
            holder,
            renewMs: this.now(),
            durationS: this.o.durationS,
            all: key === ALL,
        });
        const what = key === ALL ? "every namespace" : "the same namespaces or role";
        for (let wait = this.pollMs; ; wait = Math.min(wait * 2, this.pollMs * 10)) {
            try {
                return await this.ask(() => this.store.create(w(), signal), signal);
            } catch (e) {
                if (!(e instanceof LeaseConflict)) throw e;
            }
            // Held by another review: from here a deadline is a wait for it, whatever call is in flight.
            this.waitedOn.set(signal, what);
            const held = await this.ask(() => this.store.get(leaseName(key), signal), signal);
            if (!held) continue; // released meanwhile: create again
            if (this.expired(held)) {
                try {
                    return await this.ask(() => this.store.takeOver(held, w(), signal), signal);
                } catch (e) {
                    if (!(e instanceof LeaseConflict)) throw e;
                    continue; // another review took it over first
                }
            }
            await this.wait(wait, signal, what);
        }
    }

    /** Waits until the Lease `name` is gone or expired. */
    private async untilFree(name: string, signal: AbortSignal, what: string): Promise<void> {
        for (let wait = this.pollMs; ; wait = Math.min(wait * 2, this.pollMs * 10)) {
            const r = await this.ask(() => this.store.get(name, signal), signal);
            if (!r || this.expired(r)) return;
            await this.wait(wait, signal, what);
        }
    }

    /** Waits until `list` shows no Lease that `held` counts. */
    private async untilNone(
        list: () => Promise<LeaseRecord[]>,
        held: (r: LeaseRecord) => boolean,
        signal: AbortSignal,
        what: string,
    ): Promise<void> {
        for (let wait = this.pollMs; ; wait = Math.min(wait * 2, this.pollMs * 10)) {
            const leases = await this.ask(list, signal);
            if (!leases.some(held)) return;
            await this.wait(wait, signal, what);
        }
    }

    /** Takes a shared claim of `key`: a Lease of this review's own, named from the key's and a random part. */
    private share(key: string, holder: string, signal: AbortSignal): Promise<LeaseRecord> {
        const of = leaseName(key);
        // A name of its own each time (a Lease given back may not be deleted yet when the review tries again).
        const name = `${of}-${crypto.randomBytes(6).toString("hex")}`;
        const w = { name, holder, renewMs: this.now(), durationS: this.o.durationS, all: false, sharedOf: of };
        return this.ask(() => this.store.create(w, signal), signal).catch((e: unknown) => {
            // A random name nobody else writes: a conflict is a bug, or a chance of one in 2^48.
            if (e instanceof LeaseConflict) throw new ClaimError(`the claim ${name} exists already`);
            throw e;
        });
    }
}
