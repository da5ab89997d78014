/**
 * Which rendered objects Argo CD never applies, from its hook annotations, as gitops-engine and Argo CD's
 * controller decide it (pkg/sync/hook/hook.go `IsHook`: `argocd.argoproj.io/hook`, else `helm.sh/hook` other
 * than `crd-install`); `argocd.argoproj.io/hook: Skip` alone is never applied. Hook types: policies/model/sync-waves.ts
 * `hookTypes`, the one table. Deletion hooks (PreDelete/PostDelete, Helm's pre/post-delete) are applied later by
 * the controller, so they are judged like any other object.
 */
import { ARGO_HOOK, HELM_HOOK, SYNC_PHASES, annotationValues, hookTypes } from "../../policies/model/sync-waves";

type Obj = Record<string, unknown>;

const DELETE_HOOKS: [string, string][] = [
    [ARGO_HOOK, "PreDelete"],
    [ARGO_HOOK, "PostDelete"],
    [HELM_HOOK, "pre-delete"],
    [HELM_HOOK, "post-delete"],
];
const PHASES: readonly string[] = SYNC_PHASES;

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
    if (!skip && types.some((t) => PHASES.includes(t))) return undefined;
    if (DELETE_HOOKS.some(([k, v]) => annotationValues(annotations[k]).includes(v))) return undefined;
    const [key, value] = argo ? [ARGO_HOOK, annotations[ARGO_HOOK]] : [HELM_HOOK, annotations[HELM_HOOK]];
    return `a hook Argo CD never applies (${key}: ${JSON.stringify(value)})`;
}
