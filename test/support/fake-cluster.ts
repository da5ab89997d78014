/**
 * A stand-in for the API server behind `@kubernetes/client-node`, for unit specs of the cluster cache,
 * admission's fresh reads and audit (cluster/client.ts `Transport`): no connection is opened.
 *
 * List requests are built and authenticated by the library as they would be for a server, then handed to this
 * class in place of the HTTPS send (the client's own parsing of the answer runs); it answers them as
 * kube-apiserver does: discovery of the watched
 * kinds' groups, and lists of a kind in all namespaces or one, by `metadata.name` field selector, in pages
 * of `limit` objects ordered by namespace and name (as etcd's keys order them) with an opaque `continue`
 * token in the list's `metadata` while objects remain. Watches get the events `emit` sends, each parsed
 * from JSON text as the library parses a watch line, and an exception thrown by the callback is dropped,
 * as the library's Watch drops it.
 *
 * Objects are kept as JSON text, so one nested deeper than JSON.stringify can go still reaches the client.
 */
import * as k8s from "@kubernetes/client-node";
import { CacheOptions, ClusterCache } from "../../cluster/cache";
import { ListResponse, Transport, WatchFn } from "../../cluster/client";
import { KObject, WATCHED_KINDS, WatchedKind } from "../../cluster/kinds";

interface Stored {
    namespace: string;
    name: string;
    text: string;
}

interface Watcher {
    kind: WatchedKind;
    onEvent: (phase: string, obj: never) => void;
    controller: AbortController;
    done: (err: unknown) => void;
}

/** An offline kubeconfig (nothing listens at its server's address). */
export function offlineKubeConfig(): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
        clusters: [{ name: "fake", server: "https://127.0.0.1:1" }],
        users: [{ name: "u", token: "t" }],
        contexts: [{ name: "fake", cluster: "fake", user: "u" }],
        currentContext: "fake",
    });
    return kc;
}

/**
 * A cluster cache over an offline kubeconfig, as if synced with `objects`: every watched kind seeded with its
 * objects, but the kinds in `unsynced`, which stay unsynced (`o`: a transport, for fresh reads).
 */
export function seededCache(objects: KObject[] = [], unsynced: string[] = [], o: CacheOptions = {}): ClusterCache {
    const c = new ClusterCache(offlineKubeConfig(), o);
    for (const k of WATCHED_KINDS)
        if (!unsynced.includes(k.kind))
            c.seed(
                k.kind,
                objects.filter((x) => x.kind === k.kind),
            );
    return c;
}

/** The JSON text of `obj` with `depth` objects nested under `field` of its spec (`{"a":{"a":...}}`). */
export function deepJson(obj: Record<string, unknown>, field: string, depth: number): string {
    const marker = '"__deep__"';
    const spec = { ...((obj.spec as Record<string, unknown>) ?? {}), [field]: "__deep__" };
    return JSON.stringify({ ...obj, spec }).replace(marker, `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
}

/** The API server's answer to an expired continue token (k8s.io/apiserver storage errors, NewResourceExpired). */
const EXPIRED = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message:
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
    reason: "Expired",
    code: 410,
};

export class FakeCluster {
    private readonly byKind = new Map<string, Stored[]>();
    private readonly watchers = new Set<Watcher>();
    /** The revision: one more for every store or removal, given as a list's resourceVersion (as etcd's is). */
    private version = 1;
    /** The path and query of every request answered, in order. */
    readonly requests: string[] = [];

    constructor(private readonly absent: string[] = []) {
        for (const k of WATCHED_KINDS) this.byKind.set(k.kind, []);
    }

    /** Stores objects (given as objects or as JSON text) without telling watchers; each store is a new revision. */
    add(...objects: (Record<string, unknown> | string)[]): this {
        for (const o of objects) {
            this.version++;
            const s = this.stored(o);
            const list = this.byKind.get(this.kindOf(s).kind)!;
            const at = list.findIndex((x) => x.namespace === s.namespace && x.name === s.name);
            if (at >= 0) list[at] = s;
            else list.push(s);
        }
        return this;
    }

    /** Sends a watch event to every watch of the object's kind (the object stored or removed as it says). */
    emit(phase: "ADDED" | "MODIFIED" | "DELETED", o: Record<string, unknown> | string): void {
        const s = this.stored(o);
        const kind = this.kindOf(s);
        if (phase === "DELETED") {
            this.version++;
            this.byKind.set(
                kind.kind,
                this.byKind.get(kind.kind)!.filter((x) => x.namespace !== s.namespace || x.name !== s.name),
            );
        } else this.add(s.text);
        const line = `{"type":"${phase}","object":${s.text}}`;
        for (const w of this.watchers) {
            if (w.kind !== kind || w.controller.signal.aborted) continue;
            const event = JSON.parse(line) as { type: string; object: never };
            try {
                w.onEvent(event.type, event.object);
            } catch {
                // dropped, as k8s.Watch drops it
            }
        }
    }

    /** Lists held unanswered while hanging, and those aborted by their caller meanwhile. */
    private held: (() => void)[] = [];
    readonly hung = { held: 0, aborted: 0 };

    /**
     * Stops answering lists (an API server that hangs): each is held until `recover()` or until its request's
     * signal aborts (rejected then, as fetch rejects an aborted request).
     */
    hang(): void {
        this.hanging = true;
    }

    /** Answers again, the held lists included. */
    recover(): void {
        this.hanging = false;
        const held = this.held;
        this.held = [];
        for (const go of held) go();
    }

    private hanging = false;

    private async send(ctx: k8s.RequestContext): Promise<ListResponse> {
        if (this.hanging) {
            this.hung.held++;
            await new Promise<void>((resolve, reject) => {
                const signal = ctx.getSignal();
                this.held.push(resolve);
                signal?.addEventListener("abort", () => {
                    this.hung.aborted++;
                    reject(new Error("The operation was aborted."));
                });
            });
        }
        return this.answer(ctx);
    }

    /**
     * While above zero, a list page asked for by a continue token is answered 410 Expired, as the API server
     * answers one whose revision etcd has compacted, and the count goes down by one.
     */
    expireContinues = 0;

    /** While set, a watch is refused (as by a server that fails). */
    refuseWatches = false;

    /** Ends every open watch with an error (a dropped connection). */
    dropWatches(): void {
        for (const w of [...this.watchers]) {
            this.watchers.delete(w);
            w.done(new Error("connection reset"));
        }
    }

    /** Ends every open watch without an error, as the server does at a watch's timeoutSeconds. */
    endWatches(): void {
        for (const w of [...this.watchers]) w.controller.abort();
    }

    /** The number of open watches. */
    watching(): number {
        return this.watchers.size;
    }

    readonly transport: Transport = {
        send: (ctx) => this.send(ctx),
        watch: ((path, _query, onEvent, done) => {
            const kind = WATCHED_KINDS.find((k) => k.path === path);
            if (!kind) return Promise.reject(new Error(`no such watch path ${path}`));
            if (this.refuseWatches) return Promise.reject(new Error("watch refused"));
            const controller = new AbortController();
            const w: Watcher = { kind, onEvent: onEvent as Watcher["onEvent"], controller, done };
            this.watchers.add(w);
            controller.signal.addEventListener("abort", () => {
                if (this.watchers.delete(w)) done(null);
            });
            return Promise.resolve(controller);
        }) as WatchFn,
    };

    private stored(o: Record<string, unknown> | string): Stored {
        const text = typeof o === "string" ? o : JSON.stringify(o);
        // JSON.parse is not recursive: any depth parses.
        const parsed = JSON.parse(text) as { metadata?: { namespace?: string; name?: string } };
        return { namespace: parsed.metadata?.namespace ?? "", name: parsed.metadata?.name ?? "", text };
    }

    private kindOf(s: Stored): WatchedKind {
        const kind = (JSON.parse(s.text) as { kind?: string }).kind;
        const k = WATCHED_KINDS.find((x) => x.kind === kind);
        if (!k) throw new Error(`not a watched kind: ${kind}`);
        return k;
    }

    private respond(status: number, body: string): ListResponse {
        return { status, body };
    }

    private answer(ctx: k8s.RequestContext): ListResponse {
        const url = new URL(ctx.getUrl());
        this.requests.push(`${url.pathname}${url.search}`);
        const discovery = WATCHED_KINDS.filter(
            (k) => url.pathname === (k.apiVersion === "v1" ? "/api/v1" : `/apis/${k.apiVersion}`),
        ).filter((k) => !this.absent.includes(k.kind));
        if (discovery.length > 0)
            return this.respond(
                200,
                JSON.stringify({
                    kind: "APIResourceList",
                    apiVersion: "v1",
                    groupVersion: discovery[0].apiVersion,
                    resources: discovery.map((k) => ({
                        name: k.path.slice(k.path.lastIndexOf("/") + 1),
                        kind: k.kind,
                        namespaced: !k.kind.startsWith("Cluster"),
                        verbs: ["list", "watch"],
                    })),
                }),
            );
        for (const k of WATCHED_KINDS) {
            const slash = k.path.lastIndexOf("/");
            const prefix = k.path.slice(0, slash);
            const plural = k.path.slice(slash + 1);
            const m = new RegExp(`^${prefix}(?:/namespaces/([^/]+))?/${plural}$`).exec(url.pathname);
            if (!m) continue;
            if (this.absent.includes(k.kind))
                return this.respond(404, JSON.stringify({ kind: "Status", code: 404, message: "not found" }));
            if (url.searchParams.get("continue") && this.expireContinues > 0) {
                this.expireContinues--;
                return this.respond(410, JSON.stringify(EXPIRED));
            }
            return this.respond(200, this.list(k, m[1] ? decodeURIComponent(m[1]) : undefined, url.searchParams));
        }
        return this.respond(404, JSON.stringify({ kind: "Status", code: 404, message: "not found" }));
    }

    private list(k: WatchedKind, namespace: string | undefined, q: URLSearchParams): string {
        // The value unescaped as the API server reads it (client.ts fieldSelectorValue escapes it).
        const byName = /^metadata\.name=(.*)$/.exec(q.get("fieldSelector") ?? "")?.[1]?.replace(/\\(.)/g, "$1");
        const all = this.byKind
            .get(k.kind)!
            .filter((s) => (namespace === undefined || s.namespace === namespace) && (!byName || s.name === byName))
            .sort((a, b) =>
                a.namespace !== b.namespace ? (a.namespace < b.namespace ? -1 : 1) : a.name < b.name ? -1 : 1,
            );
        const from = q.get("continue") ? Number(Buffer.from(q.get("continue")!, "base64url").toString()) : 0;
        const limit = q.get("limit") ? Number(q.get("limit")) : all.length;
        const page = all.slice(from, from + limit);
        const rest = all.length - from - page.length;
        const metadata: Record<string, unknown> = { resourceVersion: String(this.version) };
        if (rest > 0) {
            metadata.continue = Buffer.from(String(from + limit)).toString("base64url");
            metadata.remainingItemCount = rest;
        }
        return `{"apiVersion":"${k.apiVersion}","kind":"${k.kind}List","metadata":${JSON.stringify(metadata)},"items":[${page.map((s) => s.text).join(",")}]}`;
    }
}
