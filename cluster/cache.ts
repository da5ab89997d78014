/**
 * An informer-style cache of the cluster objects pko-guard's rules read (kinds.ts): for each kind, a
 * reflector lists every object, page by page (client.ts listAll), then watches from the list's
 * resourceVersion, with bookmarks. A watch that ends (the server's timeout, a dropped connection) resumes
 * from the last resourceVersion it saw, so no update is lost; a resourceVersion too old for the server
 * (410 Gone) relists and replaces the kind's objects (a delete missed while disconnected disappears then).
 * Kinds a CRD defines (Stack, Application) may be absent: then no such object can exist, the kind counts as
 * synced and empty, and the reflector looks again every `absentRecheckMs`.
 *
 * Objects are stored as `keepReadable` makes them (never a Secret value), each decoded alone
 * (kinds.ts decodeObject): one pko-guard cannot read (nested too deep) is not stored but kept as an
 * UnreadableObject, named in the log, counted, and given to admission (which fails closed on the decisions
 * it could change) and audit (which reports it); the objects around it are read as usual.
 *
 * Indexes: by kind and namespace, and bindings by the namespaces of their ServiceAccount subjects (plus every
 * binding with a Group or User subject, which may cover any namespace's accounts), so admission can pick the
 * objects related to one.
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
    identityOf,
    unreadableIdentity,
} from "./kinds";
import { escapeText } from "../support/escape";
import { extended } from "../support/shapes";

export type KindState = "syncing" | "synced" | "absent" | "error";

export interface CacheOptions {
    kinds?: WatchedKind[];
    pageSize?: number;
    absentRecheckMs?: number;
    /** Reconnect delay after a watch error (doubles up to 10 s; reset by any event). */
    retryMs?: number;
    log?: (event: string, fields: Record<string, unknown>) => void;
    /** Stand-ins for the API server's requests and watches (tests). */
    transport?: Transport;
}

const ANY = "*any*";
const CLUSTER = "";

function meta(o: KObject): Record<string, unknown> {
    return (o.metadata ?? {}) as Record<string, unknown>;
}

/** Namespaces whose service accounts a binding's subjects name; ANY for groups and users (they may cover any). */
export function subjectNamespaces(binding: KObject): string[] {
    const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Record<string, unknown>[]) : [];
    const own = typeof meta(binding).namespace === "string" ? (meta(binding).namespace as string) : "";
    const out = new Set<string>();
    for (const s of subjects) {
        if (s && s.kind === "ServiceAccount")
            out.add(typeof s.namespace === "string" && s.namespace ? s.namespace : own);
        else out.add(ANY);
    }
    return [...out];
}

class KindStore {
    /** namespace ("" when cluster-scoped) -> identity -> object */
    readonly byNs = new Map<string, Map<string, KObject>>();
    size = 0;
    set(o: KObject): KObject | undefined {
        const ns = (meta(o).namespace as string) || CLUSTER;
        let m = this.byNs.get(ns);
        if (!m) this.byNs.set(ns, (m = new Map()));
        const id = identityOf(o);
        const prev = m.get(id);
        if (!prev) this.size++;
        m.set(id, o);
        return prev;
    }
    delete(o: KObject): KObject | undefined {
        const ns = (meta(o).namespace as string) || CLUSTER;
        const m = this.byNs.get(ns);
        const id = identityOf(o);
        const prev = m?.get(id);
        if (prev) {
            m!.delete(id);
            this.size--;
            if (m!.size === 0) this.byNs.delete(ns);
        }
        return prev;
    }
    all(): KObject[] {
        const out: KObject[] = [];
        for (const m of this.byNs.values()) out.push(...m.values());
        return out;
    }
}

export class ClusterCache {
    private readonly stores = new Map<string, KindStore>();
    /** kind -> identity -> an object of that kind pko-guard could not read (not in `stores`). */
    private readonly unreadables = new Map<string, Map<string, UnreadableObject>>();
    private readonly states = new Map<string, KindState>();
    private readonly versions = new Map<string, string>();
    /** subject namespace (or ANY) -> binding identity -> binding */
    private readonly bindingsBySubject = new Map<string, Map<string, KObject>>();
    /** Argo CD Applications by destination namespace, and the aggregating ClusterRoles (identity -> object). */
    private readonly applicationsByDestination = new Map<string, Map<string, KObject>>();
    private readonly aggregating = new Map<string, KObject>();
    private readonly aborts = new Set<AbortController>();
    private readonly timers = new Set<NodeJS.Timeout>();
    private stopped = false;
    private readonly kinds: WatchedKind[];
    private readonly client: ObjectClient;
    private readonly watcher: WatchFn;
    private syncWaiters: (() => void)[] = [];
    /** Kinds whose watch failed and has not been opened again since (stale()). */
    private readonly watchesDown = new Set<string>();
    /** Counts of watch events applied and of relists, for metrics and tests. */
    readonly counters = { events: 0, relists: 0, reconnects: 0 };

    constructor(
        kc: k8s.KubeConfig,
        private readonly o: CacheOptions = {},
    ) {
        this.kinds = o.kinds ?? WATCHED_KINDS;
        this.client = objectClient(kc, undefined, o.transport?.httpApi);
        this.watcher = watchFn(kc, o.transport);
        for (const k of this.kinds) {
            this.stores.set(k.kind, new KindStore());
            this.unreadables.set(k.kind, new Map());
            this.states.set(k.kind, "syncing");
        }
    }

    /**
     * One kind (in a namespace, or all; only the object named `name` when given, by field selector: list
     * permission suffices), listed now from the API server (a quorum read), kept as the cache keeps objects.
     * An object of it that cannot be read fails the read (UnreadableObjectsError): the caller cannot tell
     * what the list holds. `signal` aborts the list on its way (a deadline: cluster/deadline.ts).
     */
    async listFresh(kind: string, ns?: string, name?: string, signal?: AbortSignal, retry = true): Promise<KObject[]> {
        const k = this.kinds.find((x) => x.kind === kind);
        if (!k) return [];
        const out: KObject[] = [];
        const unreadable: UnreadableObject[] = [];
        const q = { namespace: ns, name, pageSize: this.o.pageSize ?? 500 };
        try {
            await listAll(
                this.client,
                k,
                q,
                (item) => {
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
                return this.listFresh(kind, ns, name, signal, false);
            throw e;
        }
        if (unreadable.length > 0) throw new UnreadableObjectsError(unreadable);
        return out;
    }

    start(): void {
        for (const k of this.kinds) void this.relist(k);
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
        return this.kinds.map((k) => k.kind).filter((k) => this.states.get(k) === "error" || this.watchesDown.has(k));
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

    /** The objects of a kind (or of every kind) that pko-guard could not read, none of them stored. */
    unreadable(kind?: string): UnreadableObject[] {
        if (kind) return [...(this.unreadables.get(kind)?.values() ?? [])];
        return [...this.unreadables.values()].flatMap((m) => [...m.values()]);
    }

    /** The objects pko-guard could not read that could change a decision about these namespaces. */
    unreadableFor(namespaces: Iterable<string>): UnreadableObject[] {
        const wanted = new Set(namespaces);
        return this.unreadable().filter((u) => u.everywhere || u.namespaces.some((n) => wanted.has(n)));
    }

    /** Objects held of a kind (or of every kind); those that could not be read are not held (unreadable()). */
    size(kind?: string): number {
        if (kind) return this.stores.get(kind)?.size ?? 0;
        let n = 0;
        for (const s of this.stores.values()) n += s.size;
        return n;
    }

    /** Objects of a kind in a namespace ("" for cluster-scoped kinds), or in every namespace when ns is undefined. */
    list(kind: string, ns?: string): KObject[] {
        const store = this.stores.get(kind);
        if (!store) return [];
        if (ns === undefined) return store.all();
        return [...(store.byNs.get(ns)?.values() ?? [])];
    }

    get(kind: string, ns: string, name: string): KObject | undefined {
        return this.stores
            .get(kind)
            ?.byNs.get(ns)
            ?.get(ns ? `${kind}/${ns}/${name}` : `${kind}/${name}`);
    }

    /** Bindings (RoleBinding, ClusterRoleBinding) with a ServiceAccount subject in `ns`, or any Group/User subject. */
    bindingsFor(ns: string): KObject[] {
        return [
            ...(this.bindingsBySubject.get(ns)?.values() ?? []),
            ...(this.bindingsBySubject.get(ANY)?.values() ?? []),
        ];
    }

    /** Argo CD Applications whose destination is namespace `ns`. */
    applicationsFor(ns: string): KObject[] {
        return [...(this.applicationsByDestination.get(ns)?.values() ?? [])];
    }

    /** ClusterRoles with an aggregationRule (their rules are those of the ClusterRoles they select). */
    aggregatingClusterRoles(): KObject[] {
        return [...this.aggregating.values()];
    }

    /** Namespaces holding at least one Stack (one that could not be read included). */
    stackNamespaces(): string[] {
        const out = new Set(this.stores.get("Stack")?.byNs.keys() ?? []);
        for (const u of this.unreadable("Stack")) if (u.namespace) out.add(u.namespace);
        return [...out];
    }

    private index(o: KObject, add: boolean): void {
        if (o.kind === "Application") {
            const dest = destinationOf(o);
            if (dest === undefined) return;
            let m = this.applicationsByDestination.get(dest);
            if (add) {
                if (!m) this.applicationsByDestination.set(dest, (m = new Map()));
                m.set(identityOf(o), o);
            } else if (m) {
                m.delete(identityOf(o));
                if (m.size === 0) this.applicationsByDestination.delete(dest);
            }
            return;
        }
        if (o.kind === "ClusterRole") {
            if (add && o.aggregationRule) this.aggregating.set(identityOf(o), o);
            else this.aggregating.delete(identityOf(o));
            return;
        }
        if (o.kind !== "RoleBinding" && o.kind !== "ClusterRoleBinding") return;
        const id = identityOf(o);
        for (const ns of subjectNamespaces(o)) {
            let m = this.bindingsBySubject.get(ns);
            if (add) {
                if (!m) this.bindingsBySubject.set(ns, (m = new Map()));
                m.set(id, o);
            } else if (m) {
                m.delete(id);
                if (m.size === 0) this.bindingsBySubject.delete(ns);
            }
        }
    }

    /** Stores a decoded object (replacing its previous version), or records it as unreadable (dropping that one). */
    private put(kind: string, d: Decoded): void {
        if (d.unreadable) {
            const u = d.unreadable;
            const prev = this.stores.get(kind)!.delete({ kind, metadata: { namespace: u.namespace, name: u.name } });
            if (prev) this.index(prev, false);
            this.unreadables.get(kind)!.set(unreadableIdentity(u), u);
            this.log("cache.unreadable", {
                kind,
                namespace: escapeText(u.namespace),
                name: escapeText(u.name),
                reason: u.reason,
            });
            return;
        }
        const o = d.object;
        this.unreadables.get(kind)!.delete(identityOf(o));
        const prev = this.stores.get(kind)!.set(o);
        if (prev) this.index(prev, false);
        this.index(o, true);
    }

    private remove(kind: string, raw: KObject): void {
        const o = extended(raw, { kind }) as KObject;
        const prev = this.stores.get(kind)!.delete(o);
        if (prev) this.index(prev, false);
        this.unreadables.get(kind)!.delete(identityOf(o));
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

    private async relist(k: WatchedKind, retry = this.o.retryMs ?? 500): Promise<void> {
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
                this.later(this.o.absentRecheckMs ?? 30_000, () => void this.relist(k));
                return;
            }
            this.log("cache.list_failed", { kind: k.kind, error: errorText(e) });
            this.setState(k.kind, "error");
            this.later(retry, () => void this.relist(k, Math.min(retry * 2, 10_000)));
            return;
        }
        if (this.stopped) return;
        this.replace(k.kind, items);
        this.versions.set(k.kind, rv);
        this.setState(k.kind, "synced");
        this.log("cache.listed", {
            kind: k.kind,
            objects: this.size(k.kind),
            unreadable: this.unreadables.get(k.kind)!.size,
        });
        void this.watch(k, this.o.retryMs ?? 500);
    }

    private replace(kind: string, items: Decoded[]): void {
        for (const o of this.stores.get(kind)!.all()) this.remove(kind, o);
        this.unreadables.get(kind)!.clear();
        for (const d of items) this.put(kind, d);
    }

    private async watch(k: WatchedKind, retry: number): Promise<void> {
        if (this.stopped) return;
        let gone = false;
        let ended = false;
        let abort: AbortController | undefined;
        const done = (err: unknown) => {
            ended = true;
            if (abort) this.aborts.delete(abort);
            if (this.stopped) return;
            if (err) this.watchesDown.add(k.kind);
            if (gone) {
                void this.relist(k);
                return;
            }
            this.counters.reconnects++;
            // A server-side close (its watch timeout) or a dropped connection: resume where we were.
            if (err) this.log("cache.watch_dropped", { kind: k.kind, error: errorText(err) });
            this.later(
                err ? retry : 0,
                () => void this.watch(k, err ? Math.min(retry * 2, 10_000) : (this.o.retryMs ?? 500)),
            );
        };
        try {
            abort = await this.watcher(
                k.path,
                { resourceVersion: this.versions.get(k.kind), allowWatchBookmarks: true },
                (phase: string, obj: KObject) => {
                    if (phase === "ERROR") {
                        const code = (obj as { code?: number }).code;
                        if (code === 410) gone = true;
                        this.log("cache.watch_error", { kind: k.kind, code });
                        abort?.abort();
                        return;
                    }
                    const rv = meta(obj).resourceVersion;
                    if (typeof rv === "string") this.versions.set(k.kind, rv);
                    if (phase === "BOOKMARK") return;
                    this.counters.events++;
                    if (phase === "DELETED") this.remove(k.kind, obj);
                    else this.put(k.kind, decodeObject(obj, k));
                },
                done,
            );
            this.aborts.add(abort);
            // The watch function returns once the server answered; a refused watch has called done already.
            if (!ended) this.watchesDown.delete(k.kind);
            if (this.stopped) abort.abort();
        } catch (e) {
            // The watch request itself failed (e.g. 410 answered as a status code before streaming).
            if (/\b410\b|Gone|too old/i.test(errorText(e))) gone = true;
            done(e);
        }
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

/** An Application's destination namespace (spec.destination.namespace), when it names one. */
export function destinationOf(o: KObject): string | undefined {
    const spec = o.spec as { destination?: { namespace?: unknown } } | undefined;
    const ns = spec && typeof spec === "object" ? spec.destination?.namespace : undefined;
    return typeof ns === "string" && ns ? ns : undefined;
}

function errorText(e: unknown): string {
    const m = e instanceof Error ? e.message : String(e);
    return m.split("\n")[0].slice(0, 300);
}

/** A list that failed because the API group or kind is not served (its CRD is not installed). */
function isAbsent(e: unknown): boolean {
    const code = (e as { code?: number; statusCode?: number }).code ?? (e as { statusCode?: number }).statusCode;
    return code === 404 || /Unrecognized API version and kind|404|not found/i.test(errorText(e));
}
