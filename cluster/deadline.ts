/**
 * Deadlines on admission's fresh reads of the API server, and whether those reads are failing. Each list has
 * its own deadline and each review one for all its reads, so an API server that stops answering holds no
 * review past the webhook's timeout, nor later reviews behind a shared list that never ends. While reads fail,
 * `probe()` sends one small list so readiness recovers with no review arriving (an unready replica gets none).
 */
import { setMaxListeners } from "events";
import { PROBE_NAME, UnreadableObjectsError } from "./cache";
import { KObject } from "./kinds";
import { FreshList, SharedReads } from "./shared-reads";

/** Lists one kind as FreshList does, ended when `signal` aborts (ClusterCache#listFresh). */
export type SignalledList = (
    kind: string,
    ns?: string,
    name?: string,
    signal?: AbortSignal,
    floor?: string,
) => Promise<KObject[]>;

/** Reads the API server's current revision, ended when `signal` aborts (ClusterCache#currentRevision). */
export type SignalledRevision = (signal: AbortSignal) => Promise<string>;

/** A read that did not end by its deadline. */
export class DeadlineError extends Error {}

/**
 * `run(signal)`, failed with a DeadlineError as soon as `signal` aborts (whether or not `run` heeds it).
 */
export function withDeadline<T>(
    what: string,
    signal: AbortSignal,
    run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
    if (signal.aborted) return Promise.reject(new DeadlineError(`${what} did not answer before its deadline`));
    return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(new DeadlineError(`${what} did not answer before its deadline`));
        signal.addEventListener("abort", onAbort, { once: true });
        run(signal).then(
            (v) => {
                signal.removeEventListener("abort", onAbort);
                resolve(v);
            },
            (e: unknown) => {
                signal.removeEventListener("abort", onAbort);
                reject(signal.aborted ? new DeadlineError(`${what} did not answer before its deadline`) : e);
            },
        );
    });
}

export interface FreshReadsOptions {
    /** Each list's deadline, and each review's for all its reads. */
    readTimeoutMs: number;
    /** Lists sent at once, in all (SharedReads). */
    maxConcurrent?: number;
    /** Makes a deadline signal (default AbortSignal.timeout). */
    deadline?: (ms: number) => AbortSignal;
}

function describe(kind: string, ns?: string, name?: string): string {
    return `the list of ${kind}${ns !== undefined ? ` in namespace ${ns}` : ""}${name !== undefined ? ` named ${name}` : ""}`;
}

function firstLine(e: unknown): string {
    return String(e instanceof Error ? e.message : e)
        .split("\n")[0]
        .slice(0, 200);
}

/** Admission's fresh reads: shared, each list and each review under a deadline, and their health. */
export class FreshReads {
    readonly shared: SharedReads;
    /** Set while the last list sent failed: its error, first line. */
    private failure?: string;
    private probing?: Promise<void>;
    private readonly deadline: (ms: number) => AbortSignal;

    /**
     * `list` sends one list; `revision`, when given, reads the API server's current revision, and each review's
     * lists are then made at the revision read after it arrived (see forReview).
     */
    constructor(
        private readonly list: SignalledList,
        private readonly o: FreshReadsOptions,
        revision?: SignalledRevision,
    ) {
        this.deadline = o.deadline ?? ((ms) => AbortSignal.timeout(ms));
        this.shared = new SharedReads(
            (kind, ns, name, floor) =>
                this.sendOne(describe(kind, ns, name), (signal) => this.list(kind, ns, name, signal, floor)),
            o.maxConcurrent,
            revision && (() => this.sendOne("the API server's current revision", revision)),
        );
    }

    /** One request sent under its own deadline; its outcome is the reads' health (an unreadable object is not). */
    private async sendOne<T>(what: string, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
        try {
            const out = await withDeadline(what, this.deadline(this.o.readTimeoutMs), send);
            this.failure = undefined;
            return out;
        } catch (e) {
            if (!(e instanceof UnreadableObjectsError)) this.failure = firstLine(e);
            throw e;
        }
    }

    /**
     * The reads of one review: each fails once the review's deadline passes (the read left to its own). With a
     * source of revisions, the review first reads the API server's current revision (shared with the reviews
     * arriving meanwhile, sent after this one arrived), then lists at that revision or later: the API server
     * answers those from its watch cache, without a quorum read of etcd for each list, and every write it had
     * acknowledged when the review arrived is in the answer.
     */
    forReview(deadline?: AbortSignal): FreshList {
        // A review may read in steps (ordered-review.ts: the role a binding names, then the cluster around it once the
        // reviews it could interact with are done), all under the one deadline it arrived with.
        const review = deadline ?? this.deadline(this.o.readTimeoutMs);
        // Every read of the review listens on its deadline at once (a few dozen at most): not a leak.
        setMaxListeners(200, review);
        // Read on the review's first read (a review that reads nothing fresh, a skipped one, sends nothing).
        let floor: Promise<string> | undefined;
        const floorOfReview = () =>
            (floor ??= withDeadline("the API server's current revision (fresh read)", review, () =>
                this.shared.revision(),
            ));
        return (kind, ns, name) => {
            const read = (at?: string) =>
                withDeadline(`${describe(kind, ns, name)} (fresh read)`, review, () =>
                    this.shared.read(kind, ns, name, at),
                );
            return this.shared.atRevisions ? floorOfReview().then(read) : read();
        };
    }

    /** A review's deadline for all its reads, from now. */
    reviewDeadline(): AbortSignal {
        return this.deadline(this.o.readTimeoutMs);
    }

    /** Why fresh reads are failing, or undefined while they answer. */
    failing(): string | undefined {
        return this.failure;
    }

    /**
     * While failing (or whenever, with `always`: the periodic health check, cluster/health.ts): one small
     * list, at most one at a time, whose outcome sets the health. A list without a resourceVersion is a
     * consistent read: the API server answers it only while etcd does.
     */
    probe(always = false): Promise<void> {
        if (this.failure === undefined && !always) return Promise.resolve();
        if (!this.probing)
            this.probing = this.sendOne(describe("ClusterRoleBinding", undefined, PROBE_NAME), (signal) =>
                this.list("ClusterRoleBinding", undefined, PROBE_NAME, signal),
            )
                .then(
                    () => undefined,
                    () => undefined,
                )
                .finally(() => (this.probing = undefined));
        return this.probing;
    }
}
