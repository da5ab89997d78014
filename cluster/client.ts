/**
 * The Kubernetes API client the cluster cache and admission's fresh reads use: `@kubernetes/client-node` for
 * kubeconfig and authentication, Node's HTTPS client over kept-alive connections for lists, the library's
 * Watch for watches. Lists are read as raw JSON because the library's typed model drops `metadata.continue`
 * for CRD lists (a StackList would end after its first page). The library's per-request `https.Agent` has no
 * keep-alive, so one kept-alive agent per distinct TLS setting replaces it; see
 * docs/contributing/benchmarks.md (admission) for the cost this avoids.
 */
import * as http from "http";
import * as https from "https";
import * as k8s from "@kubernetes/client-node";
import { extended } from "../support/shapes";
import { str } from "../support/records";
import { KObject, WatchedKind } from "./kinds";

/** The TLS options of an agent the library built, as one comparable key. */
const TLS_KEYS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

function tlsKey(options: Record<string, unknown>): string {
    return JSON.stringify(
        TLS_KEYS.map((k) => (Buffer.isBuffer(options[k]) ? options[k].toString("base64") : (options[k] ?? null))),
    );
}

/** Reuses kept-alive HTTPS agents in place of the library's one-shot ones. */
class KeepAlive implements k8s.Middleware {
    private readonly agents = new Map<string, https.Agent>();
    constructor(private readonly maxSockets: number) {}

    pre(context: k8s.RequestContext): Promise<k8s.RequestContext> {
        const given = context.getAgent();
        // Only plain HTTPS agents are pooled (a proxy agent is kept as the library made it).
        if (given && given.constructor === https.Agent) {
            const options = (given as https.Agent & { options: Record<string, unknown> }).options;
            const key = tlsKey(options);
            let pooled = this.agents.get(key);
            if (!pooled) {
                if (this.agents.size >= 8) this.close();
                // An idle connection is closed after 30 s, before the server's own idle timeout (90 s for
                // kube-apiserver) can close it under a request being sent.
                pooled = new https.Agent(
                    extended(options as https.AgentOptions, {
                        keepAlive: true,
                        maxSockets: this.maxSockets,
                        timeout: 30_000,
                    }),
                );
                this.agents.set(key, pooled);
            }
            context.setAgent(pooled);
        }
        return Promise.resolve(context);
    }

    post(context: k8s.ResponseContext): Promise<k8s.ResponseContext> {
        return Promise.resolve(context);
    }

    close(): void {
        for (const a of this.agents.values()) a.destroy();
        this.agents.clear();
    }
}

/**
 * Starts a watch of `path` as `k8s.Watch#watch` does: `onEvent` for each event, `done` once when it ends
 * (aborted, closed by the server, or failed).
 */
export type WatchFn = (
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (phase: string, obj: KObject) => void,
    done: (err: unknown) => void,
) => Promise<AbortController>;

/** The answer to a list request: its status and its body's text. */
export interface ListResponse {
    status: number;
    body: string;
}

/** Sends one authenticated list request (its URL, headers, agent and abort signal as the library set them). */
export type ListSend = (request: k8s.RequestContext) => Promise<ListResponse>;

/**
 * How the API server is reached: list requests through `send` (default: Node's HTTPS client, sendList) and
 * watches through `watch` (default: the library's Watch). Tests give stand-ins for both.
 */
export interface Transport {
    send?: ListSend;
    watch?: WatchFn;
}

/**
 * A list page's body is at most this many bytes: the most a JavaScript string holds, so a larger one could
 * not be parsed anyway, and failing here fails the read closed with one line.
 */
export const MAX_LIST_BYTES = 0x1fffffe8;

/** Sends a list request with Node's HTTP(S) client; the body is read whole, up to MAX_LIST_BYTES. */
export const sendList: ListSend = (request) =>
    new Promise((resolve, reject) => {
        const url = new URL(request.getUrl());
        const client = url.protocol === "http:" ? http : https;
        const req = client.request(
            url,
            {
                method: "GET",
                headers: request.getHeaders(),
                agent: request.getAgent(),
                signal: request.getSignal(),
            },
            (res) => {
                const chunks: Buffer[] = [];
                let size = 0;
                res.on("data", (c: Buffer) => {
                    size += c.length;
                    if (size > MAX_LIST_BYTES) {
                        req.destroy(new Error(`the list answer is over ${MAX_LIST_BYTES} bytes`));
                        return;
                    }
                    chunks.push(c);
                });
                res.on("end", () =>
                    resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks, size).toString("utf8") }),
                );
                res.on("error", reject);
            },
        );
        req.on("error", reject);
        req.end();
    });

/** The watch function of `transport`, else the library's Watch for `kc`. */
export function watchFn(kc: k8s.KubeConfig, transport?: Transport): WatchFn {
    if (transport?.watch) return transport.watch;
    const watcher = new k8s.Watch(kc);
    return (path, query, onEvent, done) => watcher.watch(path, query, onEvent, done);
}

/** A list request: a kind in every namespace or in one, all of it or only the object of one name. */
export interface ListQuery {
    namespace?: string;
    name?: string;
    /** Objects a page (the API server's `limit`). */
    pageSize: number;
    /** A resourceVersion the answer is at least as new as (served from the API server's watch cache). */
    notOlderThan?: string;
}

/** One page of a list, as the API server sends it. */
export interface ListPage {
    items: unknown[];
    /** The token of the next page; undefined on the last page. */
    continueToken?: string;
    resourceVersion: string;
}

export interface ObjectClient {
    api: k8s.KubernetesObjectApi;
    /** One page of a list (the page after `continueToken`, or the first); `signal` aborts the request. */
    listPage(kind: WatchedKind, q: ListQuery, continueToken?: string, signal?: AbortSignal): Promise<ListPage>;
    /** Closes the kept-alive connections. */
    close(): void;
}

/**
 * The path that lists `kind` in `namespace`, or in every namespace when undefined (the only way a cluster-scoped
 * kind, ClusterRole or ClusterRoleBinding, is listed: the API server has no namespaced path for it).
 */
export function listPath(kind: WatchedKind, namespace?: string): string {
    if (namespace === undefined) return kind.path;
    const slash = kind.path.lastIndexOf("/");
    return `${kind.path.slice(0, slash)}/namespaces/${encodeURIComponent(namespace)}${kind.path.slice(slash)}`;
}

/**
 * `v` as the value of a field selector. The API server splits a selector at `,` and `=` and reads `\` as an
 * escape (k8s.io/apimachinery/pkg/fields/selector.go, EscapeValue), and an RBAC object's name may hold any of
 * them (it need only be a path segment): unescaped, a ClusterRole named `x,metadata.name=y` would be read as
 * absent, and a binding to it judged as granting nothing.
 */
export function fieldSelectorValue(v: string): string {
    return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** `text` as JSON, or undefined when it is not JSON (V8's message would quote the text). */
function parsedJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return undefined;
    }
}

/**
 * Every object of a list, page by page: `each` is given each object as the API server sent it (plain JSON),
 * in the server's order, as its page arrives. Returns the list's resourceVersion (the last page's). `signal`
 * aborts the page on its way (admission's fresh reads give each list a deadline: cluster/deadline.ts).
 */
export async function listAll(
    client: ObjectClient,
    kind: WatchedKind,
    q: ListQuery,
    each: (item: unknown) => void,
    signal?: AbortSignal,
): Promise<string> {
    let token: string | undefined;
    let resourceVersion = "";
    // A token handed back twice would page the same objects for ever (a misbehaving server or proxy): the
    // list fails instead, and its reader fails closed (a stale cache kind, a refused review, audit exit 2).
    const seen = new Set<string>();
    do {
        signal?.throwIfAborted();
        const page = await client.listPage(kind, q, token, signal);
        for (const item of page.items) each(item);
        resourceVersion = page.resourceVersion || resourceVersion;
        token = page.continueToken;
        if (token !== undefined && seen.has(token))
            throw new Error(`the list of ${kind.kind} loops: the API server sent a continue token it gave before`);
        if (token !== undefined) seen.add(token);
    } while (token);
    return resourceVersion;
}

/**
 * A client for `kc` whose list requests share kept-alive connections (at most `maxSockets` at once), sent by
 * `send` (default sendList).
 */
export function objectClient(kc: k8s.KubeConfig, maxSockets = 16, send: ListSend = sendList): ObjectClient {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    const keepAlive = new KeepAlive(maxSockets);
    const config = k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: kc },
        promiseMiddleware: [keepAlive],
    });
    const listPage = async (
        kind: WatchedKind,
        q: ListQuery,
        continueToken?: string,
        signal?: AbortSignal,
    ): Promise<ListPage> => {
        const request = config.baseServer.makeRequestContext(listPath(kind, q.namespace), k8s.HttpMethod.GET);
        // Node's client ends the request (and its connection) when the signal aborts.
        if (signal) request.setSignal(signal);
        request.setHeaderParam("Accept", "application/json");
        if (q.name !== undefined) request.setQueryParam("fieldSelector", `metadata.name=${fieldSelectorValue(q.name)}`);
        request.setQueryParam("limit", String(q.pageSize));
        if (continueToken !== undefined) request.setQueryParam("continue", continueToken);
        else if (q.notOlderThan !== undefined) {
            request.setQueryParam("resourceVersion", q.notOlderThan);
            request.setQueryParam("resourceVersionMatch", "NotOlderThan");
        }
        // What KubernetesObjectApi does before sending: the kubeconfig's credentials and TLS, then the pool.
        await kc.applySecurityAuthentication(request);
        await keepAlive.pre(request);
        const response = await send(request);
        if (response.status < 200 || response.status > 299)
            throw new k8s.ApiException(
                response.status,
                "Unsuccessful HTTP Request",
                parsedJson(response.body) ?? response.body,
                {},
            );
        const list = parsedJson(response.body) as { items?: unknown; metadata?: Record<string, unknown> } | undefined;
        if (list === undefined) throw new Error(`the list of ${kind.kind} is not JSON`);
        if (!list || !Array.isArray(list.items)) throw new Error(`the list of ${kind.kind} holds no items`);
        return {
            items: list.items,
            continueToken: str(list.metadata?.continue) || undefined,
            resourceVersion: str(list.metadata?.resourceVersion) || "",
        };
    };
    // Only lists are sent through listPage; `api` serves the bench's creates (no default namespace needed).
    return { api: new k8s.KubernetesObjectApi(config), listPage, close: () => keepAlive.close() };
}
