/**
 * Which rendered objects Argo CD never applies, from its hook annotations, as gitops-engine and Argo CD's
 * controller decide it:
 * - gitops-engine pkg/sync/sync_phase.go `syncPhases`: an object that is not a hook is applied in the Sync
 *   phase; a hook (pkg/sync/hook/hook.go `IsHook`: an `argocd.argoproj.io/hook` annotation that is not `Skip`
 *   alone, else a `helm.sh/hook` annotation other than `crd-install`) runs in the phases of its types among
 *   PreSync, Sync, PostSync and SyncFail; `argocd.argoproj.io/hook: Skip` alone is never applied.
 * - Hook types (pkg/sync/hook/hook.go `Types`): the Argo CD types of the annotation (comma-separated, trimmed,
 *   pkg/sync/resource/annotations.go `GetAnnotationCSVs`); only when there is none, the Helm types gitops-engine
 *   maps (pkg/sync/hook/helm/type.go: `pre-install`/`pre-upgrade` to PreSync, `post-install`/`post-upgrade` to
 *   PostSync). Helm's `test`, `pre-rollback` and `post-rollback` map to nothing.
 * - Argo CD's controller (argo-cd controller/hook.go) also runs deletion hooks when the Application is deleted:
 *   `argocd.argoproj.io/hook: PreDelete`/`PostDelete` and Helm's `pre-delete`/`post-delete`. Those are applied
 *   (later), so they are judged like any other object.
 */
type Obj = Record<string, unknown>;

const ARGO_HOOK = "argocd.argoproj.io/hook";
const HELM_HOOK = "helm.sh/hook";
const ARGO_TYPES = new Set(["PreSync", "Sync", "PostSync", "SyncFail", "Skip"]);
const SYNC_PHASES = new Set(["PreSync", "Sync", "PostSync", "SyncFail"]);
const HELM_TYPES: Record<string, string> = {
    "pre-install": "PreSync",
    "pre-upgrade": "PreSync",
    "post-install": "PostSync",
    "post-upgrade": "PostSync",
};
const DELETE_HOOKS: [string, string][] = [
    [ARGO_HOOK, "PreDelete"],
    [ARGO_HOOK, "PostDelete"],
    [HELM_HOOK, "pre-delete"],
    [HELM_HOOK, "post-delete"],
];

function csv(v: unknown): string[] {
    return [
        ...new Set(
            String(v ?? "")
                .split(",")
                .map((x) => x.trim())
                .filter((x) => x !== ""),
        ),
    ];
}

/** The hook types gitops-engine reads of an object (`Types`). */
function hookTypes(annotations: Obj): string[] {
    const argo = csv(annotations[ARGO_HOOK]).filter((t) => ARGO_TYPES.has(t));
    if (argo.length > 0) return argo;
    return [...new Set(csv(annotations[HELM_HOOK]).flatMap((t) => (HELM_TYPES[t] ? [HELM_TYPES[t]] : [])))];
}

/**
 * Why Argo CD never applies this object (one line naming the annotation, its value quoted), or undefined when
 * it applies it in some sync phase or when its Application is deleted.
 */
export function neverApplied(object: Obj): string | undefined {
    const meta = object.metadata;
    const annotations = (meta !== null && typeof meta === "object" ? (meta as Obj).annotations : undefined) as
        Obj | undefined;
    if (!annotations || typeof annotations !== "object") return undefined;
    const argo = typeof annotations[ARGO_HOOK] === "string";
    const helm = typeof annotations[HELM_HOOK] === "string";
    if (!argo && !helm) return undefined;
    const types = hookTypes(annotations);
    const skip = types.length === 1 && types[0] === "Skip";
    const isHook = argo ? !skip : annotations[HELM_HOOK] !== "crd-install";
    if (!skip && !isHook) return undefined;
    if (!skip && types.some((t) => SYNC_PHASES.has(t))) return undefined;
    if (DELETE_HOOKS.some(([k, v]) => csv(annotations[k]).includes(v))) return undefined;
    const [key, value] = argo ? [ARGO_HOOK, annotations[ARGO_HOOK]] : [HELM_HOOK, annotations[HELM_HOOK]];
    return `a hook Argo CD never applies (${key}: ${JSON.stringify(value)})`;
}
