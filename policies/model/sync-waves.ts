/**
 * When Argo CD applies an object in a sync, as gitops-engine orders its tasks (pkg/sync/sync_tasks.go
 * `syncTasks.Less`): by phase first (PreSync, Sync, PostSync, then SyncFail, which runs only when the sync
 * fails), then by wave, then by kind and name. The wave is the sync-wave annotation parsed as Go's strconv.Atoi
 * does, else Helm's `helm.sh/hook-weight` (read for every object, hook or not), else 0 (syncwaves/waves.go).
 */
import { Plain, UNKNOWN, Unknown, get } from "./values";

export const SYNC_WAVE = "argocd.argoproj.io/sync-wave";
export const HOOK_WEIGHT = "helm.sh/hook-weight";

const ATOI = /^[+-]?\d+$/;

/**
 * The wave of an object from its metadata: a number, UNKNOWN when a deciding annotation is unknown during
 * preview, undefined when neither annotation gives one (Argo CD's wave 0).
 */
export function syncWave(metadata: Plain): number | Unknown | undefined {
    for (const key of [SYNC_WAVE, HOOK_WEIGHT]) {
        const v = get(metadata, "annotations", key);
        if (v === UNKNOWN) return UNKNOWN;
        if (typeof v === "string" && ATOI.test(v)) return Number(v);
    }
    return undefined;
}

export const ARGO_HOOK = "argocd.argoproj.io/hook";
export const HELM_HOOK = "helm.sh/hook";

/** The phases of a sync, in the order Argo CD runs them (SyncFail only when the sync fails). */
export const SYNC_PHASES = ["PreSync", "Sync", "PostSync", "SyncFail"] as const;
export type SyncPhase = (typeof SYNC_PHASES)[number];

const ARGO_TYPES = new Set(["PreSync", "Sync", "PostSync", "SyncFail", "Skip"]);
const HELM_TYPES: Record<string, SyncPhase> = {
    "pre-install": "PreSync",
    "pre-upgrade": "PreSync",
    "post-install": "PostSync",
    "post-upgrade": "PostSync",
};

/** An annotation's comma-separated values, trimmed, once each (pkg/sync/resource/annotations.go `GetAnnotationCSVs`). */
export function annotationValues(v: unknown): string[] {
    return [
        ...new Set(
            String(v ?? "")
                .split(",")
                .map((x) => x.trim())
                .filter((x) => x !== ""),
        ),
    ];
}

/** The hook types gitops-engine reads of an object's annotations (`hook.Types`): Argo CD's, else Helm's mapped. */
export function hookTypes(annotations: Record<string, unknown>): string[] {
    const argo = annotationValues(annotations[ARGO_HOOK]).filter((t) => ARGO_TYPES.has(t));
    if (argo.length > 0) return argo;
    return [
        ...new Set(annotationValues(annotations[HELM_HOOK]).flatMap((t) => (HELM_TYPES[t] ? [HELM_TYPES[t]] : []))),
    ];
}

/**
 * The first phase of a sync in which Argo CD applies the object (Sync when it is not a hook); undefined when it is
 * applied in none (a hook of other types only: never, or only when its Application is deleted); UNKNOWN when a
 * hook annotation is unknown during preview.
 */
export function syncPhase(metadata: Plain): SyncPhase | Unknown | undefined {
    const annotations = get(metadata, "annotations");
    if (annotations === UNKNOWN) return UNKNOWN;
    if (annotations === null || typeof annotations !== "object" || Array.isArray(annotations)) return "Sync";
    const a = annotations as Record<string, unknown>;
    if (a[ARGO_HOOK] === UNKNOWN || (a[ARGO_HOOK] === undefined && a[HELM_HOOK] === UNKNOWN)) return UNKNOWN;
    const argo = typeof a[ARGO_HOOK] === "string";
    if (!argo && (typeof a[HELM_HOOK] !== "string" || a[HELM_HOOK] === "crd-install")) return "Sync";
    const types = hookTypes(a);
    return SYNC_PHASES.find((p) => types.includes(p));
}
