/**
 * An informer-style cache of the cluster objects pko-guard's rules read (kinds.ts): per kind, a paged list,
 * then a watch from its resourceVersion with bookmarks. A 410 Gone relists, and so does a watch refused at its
 * start (an API server restarted on another store answers "Too large resource version" forever); a watch that ends
 * having sent nothing may sit ahead of a replaced store's revision (the watch cache sends nothing until it
 * passes), so the server's revision is read and such a kind relists. A watch silent past its timeout plus
 * `watchStallMs` (a hanging proxy) makes its kind stale and is reopened. An object that cannot be decoded is
 * kept as an UnreadableObject, so admission can fail closed on it and audit report it.
 */
import * as k8s from "@kubernetes/client-node";
import { ObjectClient, Transport, WatchFn, listAll, objectClient, watchFn } from "./client";
import {
    Decoded,
    KObject,
    UnreadableObject,
    WATCHED_KINDS,
    WatchedKind,
    decodeObject,
    unreadableIdentity,
} from "./kinds";
import { ClusterStore, KindState, meta } from "./store";
import { errorText, isAbsent, isExpired } from "./list-errors";
import { record } from "../support/records";

export { KindState } from "./store";

export interface CacheOptions {
    kinds?: WatchedKind[];
    pageSize?: number;
    absentRecheckMs?: number;
    /** Reconnect delay after a watch error (doubles up to 10 s; reset by any event). */
    retryMs?: number;
    log?: (event: string, fields: Record<string, unknown>) => void;
    /** Stand-ins for the API server's requests and watches (tests). */
    transport?: Transport;
    /** The server ends each watch after this (default 60 s): a healthy watch is never silent for longer. */
    watchTimeoutSeconds?: number;
    /** A watch silent for this long is stalled (default: watchTimeoutSeconds and 10 s). */
    watchStallMs?: number;
}

/**
 * The name of the ClusterRoleBinding listed to read the server's revision, and by the webhook's readiness probe
 * (deadline.ts): no object has it, so the answer is an empty list.
 */
export const PROBE_NAME = "pko-guard-readiness-probe";

export class ClusterCache extends ClusterStore {
    private readonly states = new Map<string, KindState>();
    private readonly versions = new Map<string, string>();
    private readonly aborts = new Set<AbortController>();
    private readonly timers = new Set<NodeJS.Timeout>();
    private stopped = false;
    private readonly kinds: WatchedKind[];
    private readonly client: ObjectClient;
    private readonly watcher: WatchFn;
    private syncWaiters: (() => void)[] = [];
    /** Kinds whose watch failed and has not been opened again since (stale()). */
    private readonly watchesDown = new Set<string>();
    /** Kinds whose watch stalled, until an event arrives or the server ends a watch (stale()). */
    private readonly stalled = new Set<string>();
    /** Counts of watch events applied and of relists, for metrics and tests. */
    readonly counters = { events: 0, relists: 0, reconnects: 0 };

    constructor(
        kc: k8s.KubeConfig,
        private readonly o: CacheOptions = {},
    ) {
        const kinds = o.kinds ?? WATCHED_KINDS;
        super(
            kinds.map((k) => k.kind),
            (event, fields) => o.log?.(event, fields),
        );
        this.kinds = kinds;
        this.client = objectClient(kc, undefined, o.transport?.send);
        this.watcher = watchFn(kc, o.transport);
        for (const k of this.kinds) this.states.set(k.kind, "syncing");
    }

    /**
     * One kind (in a namespace, or all; only the object named `name` when given, by field selector: list
     * permission suffices), listed now from the API server, kept as the cache keeps objects: a quorum read, or
     * with `notOlderThan` a read at that resourceVersion or later, which the API server answers from its watch
     * cache once that cache has reached it.
     * An object of it that cannot be read fails the read (UnreadableObjectsError): the caller cannot tell
     * what the list holds. `signal` aborts the list on its way (a deadline: cluster/deadline.ts).
     */
    async listFresh(
        kind: string,
        ns?: string,
        name?: string,
        signal?: AbortSignal,
        notOlderThan?: string,
        retry = true,
    ): Promise<KObject[]> {
        const k = this.kinds.find((x) => x.kind === kind);
        if (!k) return [];
        const out: KObject[] = [];
        const unreadable: UnreadableObject[] = [];
        const q = { namespace: ns, name, pageSize: this.o.pageSize ?? 500, notOlderThan };
        try {
            await listAll(
                this.client,
                k,
                q,
                (item) => {
                    const same = this.sameVersion(kind, item);
                    if (same) return void out.push(same);
                    const d = decodeObject(item, k);
                    if (d.object) out.push(d.object);
                    else unreadable.push(d.unreadable);
                },
                signal,
            );
        } catch (e) {
            if (k.optional && isAbsent(e)) return [];
            // A kept-alive connection the server closed as the request left: a list is safe to send again, once.
            if (retry && !signal?.aborted && /ECONNRESET|socket hang up|EPIPE/i.test(errorText(e)))
                return this.listFresh(kind, ns, name, signal, notOlderThan, false);
            throw e;
        }
        if (unreadable.length > 0) throw new UnreadableObjectsError(unreadable);
        return out;
    }

    /**
     * The cached object a listed item is a copy of: same uid and resourceVersion (the API server gives every
     * write a new resourceVersion), so the same stored object, kept already. A fresh read then hands the rules
     * the cache's object (decoded once, and deserialized once for every evaluation: evaluation/evaluate.ts).
     */
    private sameVersion(kind: string, item: unknown): KObject | undefined {
        const m = record(record(item)?.metadata);
        if (typeof m?.resourceVersion !== "string" || typeof m.uid !== "string" || typeof m.name !== "string")
            return undefined;
        const cached = this.get(kind, typeof m.namespace === "string" ? m.namespace : "", m.name);
        const c = cached?.metadata;
        return c && c.resourceVersion === m.resourceVersion && c.uid === m.uid ? cached : undefined;
    }

    /**
     * The API server's current revision: the resourceVersion of a quorum list of the ClusterRoleBinding named
     * PROBE_NAME (one no object has, so the answer is empty). Every write the API server had acknowledged when
     * the list was sent is at or before it.
     */
    async currentRevision(signal?: AbortSignal): Promise<string> {
        const k = this.kinds.find((x) => x.kind === "ClusterRoleBinding");
        if (!k) throw new Error("ClusterRoleBindings are not watched");
        const rv = await listAll(this.client, k, { name: PROBE_NAME, pageSize: 1 }, () => undefined, signal);
        if (!rv) throw new Error("the API server gave its list no resourceVersion");
        return rv;
    }

    start(): void {
        for (const k of this.kinds) this.background(k, this.relist(k));
    }

    /**
     * Replaces a kind's objects as a list would and marks it synced, without a server: for benchmarks and
     * unit tests of what is judged with a given cluster state (not started: no watch follows).
     */
    seed(kind: string, objects: KObject[]): void {
        const k = this.kinds.find((x) => x.kind === kind)!;
        this.replace(
            kind,
            objects.map((o) => decodeObject(o, k)),
        );
        this.setState(kind, "synced");
    }

    stop(): void {
        this.stopped = true;
        for (const a of this.aborts) a.abort();
        for (const t of this.timers) clearTimeout(t);
        this.client.close();
        this.aborts.clear();
        this.timers.clear();
    }

    /** True when every kind has been listed (or is known absent) and is being watched. */
    synced(): boolean {
        return [...this.states.values()].every((s) => s === "synced" || s === "absent");
    }

    state(): Record<string, KindState> {
        return Object.fromEntries(this.states);
    }

    /**
     * The kinds whose objects may be out of date: a list that failed (state "error"), or a watch that failed
     * and has not been opened again since (the reflector keeps retrying; readiness reports these).
     */
    stale(): string[] {
        return this.kinds
            .map((k) => k.kind)
            .filter((k) => this.states.get(k) === "error" || this.watchesDown.has(k) || this.stalled.has(k));
    }

    /** Resolves once synced (or rejects after timeoutMs). */
    waitForSync(timeoutMs: number): Promise<void> {
        if (this.synced()) return Promise.resolve();
        return new Promise((resolve, reject) => {
            const t = setTimeout(
                () =>
                    reject(
                        new Error(
                            `cluster cache not synced after ${timeoutMs / 1000}s: ${JSON.stringify(this.state())}`,
                        ),
                    ),
                timeoutMs,
            );
            this.syncWaiters.push(() => (clearTimeout(t), resolve()));
        });
    }

    private setState(kind: string, s: KindState): void {
        this.states.set(kind, s);
        if (this.synced()) {
            const waiters = this.syncWaiters;
            this.syncWaiters = [];
            for (const w of waiters) w();
        }
    }

    private later(ms: number, fn: () => void): void {
        if (this.stopped) return;
        const t = setTimeout(() => {
            this.timers.delete(t);
            if (!this.stopped) fn();
        }, ms);
        this.timers.add(t);
    }

    /**
     * Lists kind `k` whole, replaces its objects, then watches it; a list that fails is tried again after `retry`
     * ms (doubling); `watchRetry` is the watch's back-off when it was refused before. A continue token that
     * expired on the way (410: etcd compacted the revision the list was read at, as a long list of a large
     * cluster can meet) lists again from the start at once, up to MAX_EXPIRED times in a row.
     */
    private async relist(
        k: WatchedKind,
        retry = this.o.retryMs ?? 500,
        watchRetry?: number,
        expired = 0,
    ): Promise<void> {
        if (this.stopped) return;
        this.counters.relists++;
        const items: Decoded[] = [];
        let rv = "";
        try {
            rv = await listAll(this.client, k, { pageSize: this.o.pageSize ?? 500 }, (item) =>
                items.push(decodeObject(item, k)),
            );
        } catch (e) {
            if (this.stopped) return;
            if (k.optional && isAbsent(e)) {
                this.replace(k.kind, []);
                this.setState(k.kind, "absent");
                this.later(this.o.absentRecheckMs ?? 30_000, () => this.background(k, this.relist(k)));
                return;
            }
            if (isExpired(e) && expired < MAX_EXPIRED) {
                this.log("cache.list_expired", { kind: k.kind });
                return this.relist(k, retry, watchRetry, expired + 1);
            }
            this.log("cache.list_failed", { kind: k.kind, error: errorText(e) });
            this.setState(k.kind, "error");
            this.later(retry, () => this.background(k, this.relist(k, Math.min(retry * 2, 10_000))));
            return;
        }
        if (this.stopped) return;
        this.replace(k.kind, items);
        this.stalled.delete(k.kind);
        this.versions.set(k.kind, rv);
        this.setState(k.kind, "synced");
        this.log("cache.listed", {
            kind: k.kind,
            objects: this.size(k.kind),
            unreadable: this.unreadable(k.kind).length,
        });
        this.background(k, this.watch(k, watchRetry ?? this.o.retryMs ?? 500));
    }

    /** A step of kind `k`'s list-and-watch loop run in the background: one that throws is logged, and `k` relisted. */
    private background(k: WatchedKind, step: Promise<void>): void {
        step.catch((e: unknown) => {
            this.log("cache.step_failed", { kind: k.kind, error: errorText(e) });
            this.setState(k.kind, "error");
            this.later(this.o.retryMs ?? 500, () => this.background(k, this.relist(k)));
        });
    }

    /** A timer that marks the kind stalled and ends its watch when re-armed no sooner than watchStallMs. */
    private stallGuard(k: WatchedKind, onStall: () => void) {
        const ms = this.o.watchStallMs ?? (this.o.watchTimeoutSeconds ?? 60) * 1000 + 10_000;
        let t: NodeJS.Timeout | undefined;
        const clear = () => {
            if (t) clearTimeout(t);
            if (t) this.timers.delete(t);
        };
        const arm = () => {
            clear();
            if (this.stopped) return;
            t = setTimeout(() => {
                this.timers.delete(t!);
                this.stalled.add(k.kind);
                this.log("cache.watch_stalled", { kind: k.kind, silentMs: ms });
                onStall();
            }, ms);
            this.timers.add(t);
        };
        arm();
        return { arm, clear };
    }

    /**
     * After a watch that sent nothing: relists when the server's revision is behind the kind's resourceVersion
     * (its store was replaced), else watches on. Revisions compare as numbers, as etcd's do.
     */
    private async resumeOrRelist(k: WatchedKind): Promise<void> {
        const ours = this.versions.get(k.kind) ?? "";
        const theirs = await this.currentRevision().catch(() => "");
        if (this.stopped) return;
        if (/^\d+$/.test(ours) && /^\d+$/.test(theirs) && BigInt(theirs) < BigInt(ours)) {
            this.log("cache.store_replaced", { kind: k.kind, resourceVersion: ours, serverRevision: theirs });
            this.background(k, this.relist(k));
        } else this.background(k, this.watch(k, this.o.retryMs ?? 500));
    }

    private async watch(k: WatchedKind, retry: number): Promise<void> {
        if (this.stopped) return;
        let gone = false;
        let ended = false;
        let sent = false;
        let abort: AbortController | undefined;
        let stalledOut = false;
        let abandoned = false;
        const stall = this.stallGuard(k, () => {
            stalledOut = true;
            if (abort || ended) return abort?.abort();
            // A start that never answers (a connection held open): left behind, and another one sent.
            abandoned = true;
            this.later(retry, () => this.background(k, this.watch(k, Math.min(retry * 2, 10_000))));
        });
        const done = (err: unknown) => {
            ended = true;
            stall.clear();
            if (abort) this.aborts.delete(abort);
            if (this.stopped) return;
            if (err) this.watchesDown.add(k.kind);
            // Ended by the server (its timeout): it answers; a stalled watch ended by us is not that.
            else if (!stalledOut) this.stalled.delete(k.kind);
            if (gone) {
                this.background(k, this.relist(k));
                return;
            }
            if (err && abort === undefined && typeof (err as { statusCode?: unknown }).statusCode === "number") {
                // Refused by the server at its start (not a connection that failed): its resourceVersion may be
                // one the server will never serve.
                this.log("cache.watch_refused", { kind: k.kind, error: errorText(err) });
                this.later(retry, () => this.background(k, this.relist(k, undefined, Math.min(retry * 2, 10_000))));
                return;
            }
            this.counters.reconnects++;
            if (!err && !sent) {
                this.background(k, this.resumeOrRelist(k));
                return;
            }
            // A server-side close (its watch timeout) or a dropped connection: resume where we were.
            if (err) this.log("cache.watch_dropped", { kind: k.kind, error: errorText(err) });
            this.later(err ? retry : 0, () =>
                this.background(k, this.watch(k, err ? Math.min(retry * 2, 10_000) : (this.o.retryMs ?? 500))),
            );
        };
        try {
            abort = await this.watcher(
                k.path,
                {
                    resourceVersion: this.versions.get(k.kind),
                    allowWatchBookmarks: true,
                    timeoutSeconds: this.o.watchTimeoutSeconds ?? 60,
                },
                (phase: string, obj: KObject) => {
                    sent = true;
                    stall.arm();
                    this.stalled.delete(k.kind);
                    if (phase !== "ERROR") return this.applyEvent(k, phase, obj);
                    const code = (obj as { code?: number }).code;
                    gone ||= code === 410;
                    this.log("cache.watch_error", { kind: k.kind, code });
                    abort?.abort();
                },
                (err: unknown) => (abandoned ? undefined : done(err)),
            );
            if (abandoned) return abort.abort();
            this.aborts.add(abort);
            // The watch function returns once the server answered; a refused watch has called done already.
            if (!ended) this.watchesDown.delete(k.kind);
            if (this.stopped) abort.abort();
        } catch (e) {
            // The watch request itself failed (e.g. 410 answered as a status code before streaming).
            if (/\b410\b|Gone|too old/i.test(errorText(e))) gone = true;
            if (!abandoned) done(e);
        }
    }

    /** Applies a watch event that is not an error: its resourceVersion, and the object unless a bookmark. */
    private applyEvent(k: WatchedKind, phase: string, obj: KObject): void {
        const rv = meta(obj).resourceVersion;
        if (typeof rv === "string") this.versions.set(k.kind, rv);
        if (phase === "BOOKMARK") return;
        this.counters.events++;
        if (phase === "DELETED") this.remove(k.kind, obj);
        else this.put(k.kind, decodeObject(obj, k));
    }

    private log(event: string, fields: Record<string, unknown>): void {
        this.o.log?.(event, fields);
    }
}

/** A fresh read that met objects pko-guard cannot read: what it lists cannot be told. */
export class UnreadableObjectsError extends Error {
    constructor(readonly objects: UnreadableObject[]) {
        const first = objects[0];
        const more = objects.length > 1 ? ` and ${objects.length - 1} more object(s)` : "";
        super(`${unreadableIdentity(first)}${more} cannot be read: ${first.reason}`);
    }
}

/** Lists again from the start after this many expired continue tokens in a row, then as after any failure. */
const MAX_EXPIRED = 3;
