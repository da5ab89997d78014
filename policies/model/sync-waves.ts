/**
 * An object's Argo CD sync wave, computed where Argo CD computes it: gitops-engine pkg/sync/syncwaves/waves.go
 * `Wave`. The `argocd.argoproj.io/sync-wave` annotation when it parses as an integer (Go's strconv.Atoi: an
 * optional sign and digits, no spaces), else Helm's `helm.sh/hook-weight` parsed the same way
 * (pkg/sync/hook/helm/weight.go `Weight`, read for every object, hook or not), else wave 0.
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
