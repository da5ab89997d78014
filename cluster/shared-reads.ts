/**
 * Fresh reads shared by concurrent reviews (cluster/view.ts reads the cluster around a reviewed object through
 * them; cluster/deadline.ts puts them under deadlines).
 */
import { performance } from "perf_hooks";
import { KObject } from "./kinds";

/**
 * Lists one kind (in one namespace, or all; only the object of that name when `name` is given) straight
 * from the API server, as `keepReadable` keeps objects: a quorum read, or with `floor` a read at that
 * resourceVersion or later.
 */
export type FreshList = (kind: string, ns?: string, name?: string, floor?: string) => Promise<KObject[]>;

/** Revision reads on their way at once (each may wait for the API server's next watch progress request). */
const MAX_REVISION_READS = 32;

/**
 * A revision read is sent at least this long after the one before it (group commit): the reviews arriving
 * meanwhile share it. Under load each review then costs a fraction of a request (the request, not the API
 * server, is most of a review's CPU beyond its judgement), for at most this much more latency; with reviews
 * further apart than this, each sends its own at once. docs/contributing/benchmarks.md has the figures behind the value.
 */
export const REVISION_READ_SPACING_MS = 20;

/** At most this many answers are kept for the newest revision (each a list of objects the cache mostly holds). */
const MAX_ANSWERS_AT_REVISION = 10_000;

/** Resolves once `performance.now()` has reached `at` (a timer may fire a little early: it waits again). */
function until(at: number): Promise<void> {
    const wait = at - performance.now();
    if (!(wait > 0)) return Promise.resolve();
    return new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(wait))).then(() => until(at));
}

/** At most `max` holders at once; the others wait, in order, for a release. */
class Slots {
    private held = 0;
    private readonly waiters: (() => void)[] = [];

    constructor(private readonly max: number) {}

    /** Resolves with the slot's release once one is free. */
    take(): Promise<() => void> {
        const release = () => {
            const next = this.waiters.shift();
            if (next) next();
            else this.held--;
        };
        if (this.held < this.max) {
            this.held++;
            return Promise.resolve(release);
        }
        return new Promise((resolve) => this.waiters.push(() => resolve(release)));
    }
}

/**
 * Fresh reads shared by concurrent reviews, still each as new as its review. A review may join a read of the
 * same kind and namespace that has not been sent yet; a quorum read already on its way was sent before the
 * review arrived (it may miss what the review's own client wrote just before), so the review waits for it to
 * end and joins the next one, which every review arriving meanwhile shares. So there is at most one read of a
 * kind and namespace on its way and one waiting, however many reviews arrive; and at most `maxConcurrent`
 * lists are sent at once in all. The API server's current revision is read much the same way (`revision`).
 * A read at a floor (a revision read after its review arrived) answers as of that revision or later
 * whenever it was sent, so a review joins one on its way at the same floor; and once answered, it answers
 * every later review whose floor is the same revision: while the revision read after each review arrived is
 * unchanged, nothing has been stored since (every write takes the next revision of the one etcd, see
 * docs/cluster.md), so a list sent now would hold the same. Those answers are kept for the newest revision
 * read alone, and dropped when a revision read returns another. A read that fails fails every review that
 * shared it (each fails closed) and is never kept.
 */
export class SharedReads {
    private readonly sent = new Map<string, Promise<unknown>>();
    private readonly waiting = new Map<string, Promise<unknown>>();
    private readonly lists: Slots;
    private readonly revisionReads = new Slots(MAX_REVISION_READS);
    /** The newest revision read, and the reads answered at it, by key. */
    private newest: { revision?: string; sent: number; answers: Map<string, KObject[]> } = {
        sent: 0,
        answers: new Map(),
    };
    private revisionReadsSent = 0;
    /** Lists sent, reviews' reads answered, and those answered by a read kept at their revision (no list). */
    readonly counters = { lists: 0, reads: 0, kept: 0 };

    constructor(
        private readonly fresh: FreshList,
        maxConcurrent = 8,
        private readonly currentRevision?: () => Promise<string>,
        private readonly revisionSpacingMs = REVISION_READ_SPACING_MS,
    ) {
        this.lists = new Slots(maxConcurrent);
    }

    /** A FreshList whose answer was listed by a request sent after this call, or at a floor read after it. */
    readonly read: FreshList = (kind, ns, name, floor) => {
        this.counters.reads++;
        const key = `${kind}\u0000${ns ?? "\u0000all"}\u0000${name ?? ""}\u0000${floor ?? ""}`;
        const kept = floor !== undefined && floor === this.newest.revision ? this.newest.answers.get(key) : undefined;
        if (kept) {
            this.counters.kept++;
            return Promise.resolve(kept);
        }
        return this.shared(key, floor !== undefined, async () => {
            const answer = await this.fresh(kind, ns, name, floor);
            const newest = this.newest;
            if (floor !== undefined && floor === newest.revision && newest.answers.size < MAX_ANSWERS_AT_REVISION)
                newest.answers.set(key, answer);
            return answer;
        });
    };

    /** Whether reads can be made at a revision (a source of the current revision was given). */
    get atRevisions(): boolean {
        return this.currentRevision !== undefined;
    }

    /**
     * The API server's current revision, read by a request sent after this call. Unlike lists, revision reads
     * do not wait for one another: the API server answers one once its watch cache has caught up with etcd,
     * which can take until its next watch progress request (docs/cluster.md), and a review that waited for
     * the read on its way to end before sending its own could wait for two. A read is sent no sooner than
     * `revisionSpacingMs` after the one before it, nor while every one of `MAX_REVISION_READS` is on its way;
     * the reviews arriving until it is sent share it. The answers kept are those at the revision the read sent
     * last answered.
     */
    revision(): Promise<string> {
        const current = this.currentRevision;
        if (!current) return Promise.reject(new Error("no source of the API server's revision"));
        if (this.revisionQueued) return this.revisionQueued;
        const read: Promise<string> = until(this.lastRevisionSentAt + this.revisionSpacingMs)
            .then(() => this.revisionReads.take())
            .then(async (release) => {
                if (this.revisionQueued === read) this.revisionQueued = undefined;
                this.lastRevisionSentAt = performance.now();
                try {
                    this.counters.lists++;
                    const sent = ++this.revisionReadsSent;
                    const revision = await current();
                    // The newest is the answer of the read sent last: one sent earlier may end later, and a read
                    // sent later that answers another revision, even a lower one (etcd restored from a backup),
                    // means what was kept may no longer hold.
                    if (sent > this.newest.sent) {
                        const same = revision === this.newest.revision;
                        this.newest = {
                            revision,
                            sent,
                            answers: same ? this.newest.answers : new Map<string, KObject[]>(),
                        };
                    }
                    return revision;
                } finally {
                    release();
                }
            });
        this.revisionQueued = read;
        return read;
    }

    private revisionQueued?: Promise<string>;
    private lastRevisionSentAt = -Infinity;

    private shared<T>(key: string, joinOnItsWay: boolean, list: () => Promise<T>): Promise<T> {
        const queued = this.waiting.get(key) as Promise<T> | undefined;
        if (queued) return queued;
        const onItsWay = this.sent.get(key) as Promise<T> | undefined;
        if (!onItsWay) return this.send(key, list);
        if (joinOnItsWay) return onItsWay;
        const next = onItsWay
            .then(
                () => undefined,
                () => undefined,
            )
            .then(() => {
                this.waiting.delete(key);
                return this.send(key, list);
            });
        this.waiting.set(key, next);
        return next;
    }

    private send<T>(key: string, list: () => Promise<T>): Promise<T> {
        const p = this.lists.take().then(async (release) => {
            try {
                this.counters.lists++;
                return await list();
            } finally {
                release();
                if (this.sent.get(key) === p) this.sent.delete(key);
            }
        });
        this.sent.set(key, p);
        return p;
    }
}
