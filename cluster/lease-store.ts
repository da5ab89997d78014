/**
 * The Leases claims.ts writes, through the API server (coordination.k8s.io/v1, the webhook's own namespace; the
 * shipped RBAC allows get, list, create, update and delete of Leases there and nowhere else).
 */
import * as crypto from "crypto";
import * as os from "os";
import * as k8s from "@kubernetes/client-node";
import { withDeadline } from "./deadline";
import { Claims, LeaseConflict, LeaseRecord, LeaseStore, LeaseWrite } from "./claims";
import { escapeText } from "../support/escape";

/** How long a claim is kept after its review admitted an object that the cache does not show yet (ms). */
export const CLAIM_HOLD_MS = 2000;

/** The label every claim's Lease carries: `key`, `shared` or `all`. */
export const CLAIM_LABEL = "pko-guard.io/claim";
/** The label of a shared claim: the name of its key's exclusive Lease. */
export const CLAIM_OF_LABEL = "pko-guard.io/claim-of";

function code(e: unknown): number | undefined {
    return (e as { code?: number }).code;
}

function record(l: k8s.V1Lease): LeaseRecord {
    const renew = l.spec?.renewTime ? new Date(l.spec.renewTime).getTime() : NaN;
    return {
        name: String(l.metadata?.name ?? ""),
        uid: String(l.metadata?.uid ?? ""),
        resourceVersion: String(l.metadata?.resourceVersion ?? ""),
        holder: String(l.spec?.holderIdentity ?? ""),
        // A Lease without a readable renewTime counts as expired long ago: taken over, never waited on.
        renewMs: Number.isFinite(renew) ? renew : 0,
        durationS: Number(l.spec?.leaseDurationSeconds ?? 0),
    };
}

function lease(ns: string, w: LeaseWrite, resourceVersion?: string): k8s.V1Lease {
    const at = new k8s.V1MicroTime(w.renewMs);
    return {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
            name: w.name,
            namespace: ns,
            labels: {
                "app.kubernetes.io/managed-by": "pko-guard",
                [CLAIM_LABEL]: w.all ? "all" : w.sharedOf ? "shared" : "key",
                ...(w.sharedOf ? { [CLAIM_OF_LABEL]: w.sharedOf } : {}),
            },
            ...(resourceVersion ? { resourceVersion } : {}),
        },
        spec: { holderIdentity: w.holder, leaseDurationSeconds: w.durationS, acquireTime: at, renewTime: at },
    };
}

/** The Leases of `namespace`, read and written with `kc`'s identity. */
export function leaseStore(kc: k8s.KubeConfig, namespace: string): LeaseStore {
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const remove = async (r: LeaseRecord) => {
        const body = { preconditions: { uid: r.uid, resourceVersion: r.resourceVersion } };
        try {
            await api.deleteNamespacedLease({ name: r.name, namespace, body });
        } catch (e) {
            // Gone (expired and taken over, then released) or changed (taken over): not ours to delete.
            if (code(e) !== 404 && code(e) !== 409) throw e;
        }
    };
    const written = (what: string, signal: AbortSignal, write: () => Promise<k8s.V1Lease>) => {
        const sent = write().then(record);
        // A write the API server makes after the review stopped waiting is given back at once, not left to expire.
        sent.then(
            (r) => (signal.aborted ? remove(r) : undefined),
            () => undefined,
        ).catch(() => undefined);
        return withDeadline(what, signal, () =>
            sent.catch((e: unknown) => {
                if (code(e) === 409) throw new LeaseConflict(`${what}: held`);
                throw e;
            }),
        );
    };
    const list = (what: string, labelSelector: string, signal: AbortSignal) =>
        withDeadline(what, signal, async () =>
            (await api.listNamespacedLease({ namespace, labelSelector })).items.map(record),
        );
    return {
        create: (w, signal) =>
            written(`the claim ${w.name}`, signal, () =>
                api.createNamespacedLease({ namespace, body: lease(namespace, w) }),
            ),
        takeOver: (old, w, signal) =>
            written(`the expired claim ${w.name}`, signal, () =>
                api.replaceNamespacedLease({
                    name: w.name,
                    namespace,
                    body: lease(namespace, w, old.resourceVersion),
                }),
            ),
        get: (name, signal) =>
            withDeadline(`the claim ${name}`, signal, async () => {
                try {
                    return record(await api.readNamespacedLease({ name, namespace }));
                } catch (e) {
                    if (code(e) === 404) return undefined;
                    throw e;
                }
            }),
        remove,
        keyLeases: (signal) => list("the claims on namespaces", `${CLAIM_LABEL} in (key,shared)`, signal),
        sharedLeases: (name, signal) => list(`the shared claims of ${name}`, `${CLAIM_OF_LABEL}=${name}`, signal),
    };
}

/**
 * A replica's claims in the webhook's namespace, held as this replica (host name, process and a random part), for
 * reviews whose deadline is `readTimeoutMs`; a release that fails is logged (the Lease then expires).
 */
export function replicaClaims(
    kc: k8s.KubeConfig,
    namespace: string,
    readTimeoutMs: number,
    log: (level: string, event: string, fields?: Record<string, unknown>) => void,
    onClaimed?: (ms: number) => void,
): Claims {
    return new Claims(leaseStore(kc, namespace), {
        replica: `${os.hostname()}-${process.pid}-${crypto.randomBytes(4).toString("hex")}`,
        holdMs: CLAIM_HOLD_MS,
        // Never expires while its holder lives: a review's deadline and the hold after it, and a second to spare.
        durationS: Math.ceil((readTimeoutMs + CLAIM_HOLD_MS) / 1000) + 1,
        onClaimed,
        onReleaseError: (e) =>
            log("warn", "claim.release_failed", {
                error: escapeText(String((e as Error)?.message ?? e).split("\n")[0]).slice(0, 200),
                note: "the claim expires on its own",
            }),
    });
}
