/**
 * The Kubernetes API client the cluster cache and admission's fresh reads use: lists sent through
 * `@kubernetes/client-node`'s configuration (its authentication and HTTP library) over kept-alive
 * connections, read page by page by one function (listAll), and the library's Watch.
 *
 * Lists are read as the API server's JSON, not through KubernetesObjectApi#list: the library turns a list
 * into its typed model, and the token of the next page with it. A list of a built-in kind (RoleBindingList)
 * becomes a V1RoleBindingList whose metadata holds the token as `_continue`; a list of a kind the library
 * does not know (StackList, ApplicationList: CRDs) keeps its items as sent but has its metadata read as a
 * V1ObjectMeta, which has no such field, so the token is dropped and the list ends after its first page (500
 * objects). Read as JSON, every list has its token in `metadata.continue`, as the API documents it, and its
 * objects exactly as stored.
 *
 * The library builds a new `https.Agent` (without keep-alive) for every request it sends, so every list
 * pays a TCP connection and a TLS handshake on both sides; admission reads the cluster on every review, and
 * at hundreds of reviews a second the handshakes cost more than the reads. A middleware replaces that
 * per-request agent with one kept-alive agent per distinct TLS setting (CA, client certificate and key,
 * verification, server name): credentials the library refreshes (a rotated client certificate) get an
 * agent of their own, and authentication headers are untouched (the library sets them on each request).
 */
import * as https from "https";
import * as k8s from "@kubernetes/client-node";
import { extended } from "../support/shapes";
import { str } from "../support/records";
import { KObject, WatchedKind } from "./kinds";

/** The TLS options of an agent the library built, as one comparable key. */
const TLS_KEYS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

function tlsKey(options: Record<string, unknown>): string {
    return JSON.stringify(
        TLS_KEYS.map((k) =>
            Buffer.isBuffer(options[k]) ? (options[k] as Buffer).toString("base64") : (options[k] ?? null),
        ),
    );
}

/** Reuses kept-alive HTTPS agents in place of the library's one-shot ones. */
class KeepAlive implements k8s.Middleware {
    private readonly agents = new Map<string, https.Agent>();
    constructor(private readonly maxSockets: number) {}

    async pre(context: k8s.RequestContext): Promise<k8s.RequestContext> {
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
        return context;
    }

    async post(context: k8s.ResponseContext): Promise<k8s.ResponseContext> {
        return context;
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

/**
 * How the API server is reached: requests through `httpApi` (default: the library's own HTTP library) and
 * watches through `watch` (default: the library's Watch). Tests give stand-ins for both.
 */
export interface Transport {
    httpApi?: k8s.HttpLibrary;
    watch?: WatchFn;
}

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
    do {
        signal?.throwIfAborted();
        const page = await client.listPage(kind, q, token, signal);
        for (const item of page.items) each(item);
        resourceVersion = page.resourceVersion || resourceVersion;
        token = page.continueToken;
    } while (token);
    return resourceVersion;
}

/**
 * A KubernetesObjectApi for `kc` whose requests share kept-alive connections (at most `maxSockets` at once),
 * sent through `httpApi` when given.
 */
export function objectClient(kc: k8s.KubeConfig, maxSockets = 16, httpApi?: k8s.HttpLibrary): ObjectClient {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    const keepAlive = new KeepAlive(maxSockets);
    const config = k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: kc },
        promiseMiddleware: [keepAlive],
        httpApi,
    });
    const listPage = async (
        kind: WatchedKind,
        q: ListQuery,
        continueToken?: string,
        signal?: AbortSignal,
    ): Promise<ListPage> => {
        const request = config.baseServer.makeRequestContext(listPath(kind, q.namespace), k8s.HttpMethod.GET);
        // The library's fetch ends the request (and its connection) when the signal aborts.
        if (signal) request.setSignal(signal);
        request.setHeaderParam("Accept", "application/json");
        if (q.name !== undefined) request.setQueryParam("fieldSelector", `metadata.name=${q.name}`);
        request.setQueryParam("limit", String(q.pageSize));
        if (continueToken !== undefined) request.setQueryParam("continue", continueToken);
        // What KubernetesObjectApi does before sending: the kubeconfig's credentials and TLS, then the pool.
        await kc.applySecurityAuthentication(request);
        await keepAlive.pre(request);
        const response = await config.httpApi.send(request).toPromise();
        if (response.httpStatusCode < 200 || response.httpStatusCode > 299)
            throw new k8s.ApiException(
                response.httpStatusCode,
                "Unsuccessful HTTP Request",
                await response.getBodyAsAny(),
                response.headers,
            );
        const list = JSON.parse(await response.body.text()) as { items?: unknown; metadata?: Record<string, unknown> };
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
