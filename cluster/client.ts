/**
 * The Kubernetes API client the cluster cache and admission's fresh reads use: `@kubernetes/client-node`'s
 * KubernetesObjectApi, with its requests sent over kept-alive connections, and its Watch.
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
import { KObject } from "./kinds";

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

export interface ObjectClient {
    api: k8s.KubernetesObjectApi;
    /** Closes the kept-alive connections. */
    close(): void;
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
    // Only lists are sent (no create needs a default namespace).
    return { api: new k8s.KubernetesObjectApi(config), close: () => keepAlive.close() };
}
