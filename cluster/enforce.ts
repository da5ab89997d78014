/**
 * The enforce loop (`pko-guard webhook --enforce`): closes, after the fact and within seconds, the window
 * admission cannot close across replicas, where two replicas each admit one half of a violation. A young
 * binding that a mandatory pko-stack-no-cluster-admin finding denies is deleted with uid and resourceVersion
 * preconditions, so only the object judged goes. Only bindings: deleting one destroys nothing (deleting a
 * Stack could run `destroyOnFinalize`). Only young ones: an older binding was in every cache when the Stack
 * was reviewed, so its violation predates the door and is left to `pko-guard audit`.
 */
import * as k8s from "@kubernetes/client-node";
import { PackConfig } from "../evaluation/pack-config";
import { NAME as NO_CLUSTER_ADMIN } from "../policies/pko-stack-no-cluster-admin";
import { AdmittedOverlay } from "./admitted";
import { ClusterCache } from "./cache";
import { boundRole, mayGrantForbidden } from "./grant-scope";
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { KObject, identityOf } from "./kinds";
import { reviewObject } from "./ordered-review";
import { ReviewLocks } from "./review-locks";
import { escapeText } from "../support/escape";

/** The rule whose mandatory findings on a binding the loop acts on. */
export const ENFORCED_RULE = NO_CLUSTER_ADMIN;
/** How young a binding must be to be removed (ms): longer than any review and cache lag. */
export const ENFORCE_WINDOW_MS = 5 * 60_000;
export const ENFORCE_INTERVAL_MS = 1000;

/** What deleting a binding came to: deleted, already gone, or changed since it was judged. */
export type Removal = "removed" | "gone" | "changed";
export type RemoveBinding = (b: KObject) => Promise<Removal>;

export interface EnforceOptions {
    cache: ClusterCache;
    config: PackConfig;
    remove: RemoveBinding;
    windowMs?: number;
    intervalMs?: number;
    now?: () => number;
    log?: (level: string, event: string, fields?: Record<string, unknown>) => void;
}

function created(o: KObject): number {
    const t = Date.parse(String((o.metadata ?? {}).creationTimestamp ?? ""));
    return Number.isFinite(t) ? t : NaN;
}

function clip(v: unknown): string {
    return escapeText(String(v ?? "").slice(0, 253));
}

/** Deletes a binding through the API server, only if it is still the object judged (uid, resourceVersion). */
export function bindingRemover(kc: k8s.KubeConfig): RemoveBinding {
    const api = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    return async (b) => {
        const m = b.metadata ?? {};
        const body = { preconditions: { uid: String(m.uid ?? ""), resourceVersion: String(m.resourceVersion ?? "") } };
        try {
            if (b.kind === "ClusterRoleBinding") await api.deleteClusterRoleBinding({ name: String(m.name), body });
            else await api.deleteNamespacedRoleBinding({ name: String(m.name), namespace: String(m.namespace), body });
            return "removed";
        } catch (e) {
            const code = (e as { code?: number }).code;
            if (code === 404) return "gone";
            if (code === 409) return "changed";
            throw e;
        }
    };
}

export class Enforcer {
    private timer?: NodeJS.Timeout;
    private running?: Promise<void>;
    private lastStamp = -1;
    /** Bindings removed by this loop (metrics and tests). */
    removed = 0;

    constructor(private readonly o: EnforceOptions) {}

    start(): void {
        if (this.timer) return;
        this.timer = setInterval(() => {
            if (this.running) return;
            this.running = this.pass()
                .catch((e: unknown) =>
                    this.o.log?.("error", "enforce.failed", { error: escapeText(String((e as Error).message ?? e)) }),
                )
                .finally(() => (this.running = undefined));
        }, this.o.intervalMs ?? ENFORCE_INTERVAL_MS);
        this.timer.unref();
    }

    async stop(): Promise<void> {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        await this.running;
    }

    /** One pass over the young bindings (when the cache changed since the last); resolves once acted. */
    async pass(): Promise<void> {
        const { cache } = this.o;
        if (!cache.synced()) return;
        const stamp = cache.counters.events + cache.counters.relists;
        if (stamp === this.lastStamp) return;
        this.lastStamp = stamp;
        const now = (this.o.now ?? Date.now)();
        const window = this.o.windowMs ?? ENFORCE_WINDOW_MS;
        const young = [...cache.list("ClusterRoleBinding"), ...cache.list("RoleBinding")].filter(
            (b) => now - created(b) <= window,
        );
        // What a binding was judged with last: itself, its role and the Stacks and Workspaces of the namespaces it
        // reaches. Judged again only when one of them changed; between two, the event loop serves reviews.
        const seen = new Map<string, string>();
        const judged = new Map<string, string>();
        for (const b of young) {
            const ref = boundRole(b);
            const role = ref ? cache.get(ref.kind, ref.ns, ref.name) : undefined;
            if (!mayGrantForbidden(b, role, cache)) continue;
            const key = this.judgedWith(b, role, seen);
            const id = identityOf(b);
            judged.set(id, key);
            if (this.judged.get(id) === key) continue;
            await new Promise((r) => setImmediate(r));
            if (await this.violates(b)) {
                await this.act(b);
                judged.delete(id);
            }
        }
        this.judged = judged;
    }

    /** What a binding was judged with last, by its identity (see pass). */
    private judged = new Map<string, string>();

    /** A fingerprint of what the verdict on `b` depends on (`seen`: namespaces' fingerprints of this pass). */
    private judgedWith(b: KObject, role: KObject | undefined, seen: Map<string, string>): string {
        const { cache } = this.o;
        const version = (o: KObject | undefined) =>
            `${String(o?.metadata?.uid)}@${String(o?.metadata?.resourceVersion)}`;
        const reach = accountNamespaces(b);
        const namespaces = reach.includes(EVERY_NAMESPACE) ? cache.stackNamespaces() : reach;
        const parts = [version(b), version(role)];
        for (const ns of namespaces) {
            let f = seen.get(ns);
            if (f === undefined) {
                f = [...cache.list("Stack", ns), ...cache.list("Workspace", ns)].map(version).join(",");
                seen.set(ns, f);
            }
            parts.push(`${ns}:${f}`);
        }
        return parts.join("|");
    }

    /** Whether the door would deny the binding now for the enforced rule (a finding on the binding itself). */
    private async violates(b: KObject): Promise<boolean> {
        const d = await reviewObject(
            { operation: "CREATE", object: b, dryRun: true },
            {
                cache: this.o.cache,
                judge: { config: this.o.config, warnOnly: false },
                overlay: new AdmittedOverlay(this.o.cache),
                locks: new ReviewLocks(),
            },
        );
        return d.findings.some(
            (f) => f.status === "blocking" && f.policy === ENFORCED_RULE && f.resource === identityOf(b),
        );
    }

    private async act(b: KObject): Promise<void> {
        const m = b.metadata ?? {};
        const id = { kind: clip(b.kind), namespace: clip(m.namespace), name: clip(m.name) };
        let outcome: Removal;
        try {
            outcome = await this.o.remove(b);
        } catch (e) {
            this.o.log?.("error", "enforce.remove_failed", {
                kind: id.kind,
                namespace: id.namespace,
                name: id.name,
                error: escapeText(String((e as Error).message ?? e).split("\n")[0]),
            });
            this.lastStamp = -1; // tried again on the next pass
            return;
        }
        if (outcome === "removed") this.removed++;
        this.o.log?.(outcome === "removed" ? "warn" : "info", `enforce.${outcome}`, {
            kind: id.kind,
            namespace: id.namespace,
            name: id.name,
            rule: ENFORCED_RULE,
        });
        if (outcome === "changed") this.lastStamp = -1;
    }
}

/**
 * The enforce loop a webhook runs when asked for (`enforce`): not with `warnOnly`, which removes nothing, nor
 * without a cluster (a given cache); says which in the log.
 */
export function enforceLoop(
    o: { enforce?: boolean; warnOnly: boolean; enforceWindowMs?: number },
    w: {
        cache: ClusterCache;
        config: PackConfig;
        kc: k8s.KubeConfig | undefined;
        log: (level: string, event: string, fields?: Record<string, unknown>) => void;
    },
): Enforcer | undefined {
    if (!o.enforce) return undefined;
    if (o.warnOnly || !w.kc) {
        w.log("warn", "enforce.off", { reason: o.warnOnly ? "--warn-only removes nothing" : "no cluster" });
        return undefined;
    }
    w.log("info", "enforce.on", { windowSeconds: (o.enforceWindowMs ?? ENFORCE_WINDOW_MS) / 1000 });
    const remove = bindingRemover(w.kc);
    return new Enforcer({ cache: w.cache, config: w.config, remove, windowMs: o.enforceWindowMs, log: w.log });
}
