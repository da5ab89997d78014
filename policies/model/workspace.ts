/**
 * The workspace pod a PKO Stack runs in, as its CRD and PKO's workspace controller define it: the pod spec of its
 * workspace template, the pod's containers with their field paths, and the service account the pod runs as.
 */
import { StackView } from "./stack";
import { Obj, Plain, UNKNOWN, Unknown, get, isObject, list } from "./values";

/** The workspace template's pod spec (`spec.workspaceTemplate.spec.podTemplate.spec`). */
export function workspacePodSpec(view: StackView): Plain {
    return get(view.workspaceTemplate, "spec", "podTemplate", "spec");
}

/** Every container of a pod spec found at `podField` (init containers included), with its field path. */
export function podContainers(pod: Plain, podField: string): { field: string; container: Obj }[] {
    const out: { field: string; container: Obj }[] = [];
    for (const kind of ["containers", "initContainers"]) {
        list(get(pod, kind)).forEach((c, i) => {
            if (isObject(c)) out.push({ field: `${podField}.${kind}[${i}]`, container: c });
        });
    }
    return out;
}

/**
 * The account a workspace pod runs as, given a Workspace spec (`auto.pulumi.com` WorkspaceSpec, or a
 * Stack's `spec.workspaceTemplate.spec`) and where that spec sits (`at`). PKO's workspace controller
 * (`operator/internal/controller/auto/workspace_controller.go`, v2.9.0) builds the StatefulSet's pod with
 * `serviceAccountName: <Workspace spec.serviceAccountName>` (the CRD defaults it to `default`) and then
 * strategic-merges the Workspace's `spec.podTemplate` over the pod last, so a non-empty
 * `podTemplate.spec.serviceAccountName` wins. The deprecated `podTemplate.spec.serviceAccount` alias never
 * does: the merged pod always has `serviceAccountName`, which Kubernetes prefers over the alias.
 * `undefined` when the spec names no account (the caller's fallback applies).
 */
export function workspaceAccount(wsSpec: Plain, at: string): { name: string | Unknown; source: string } | undefined {
    const podField = `${at}.podTemplate.spec.serviceAccountName`;
    if (wsSpec === UNKNOWN) return { name: UNKNOWN, source: podField };
    const podTemplate = get(wsSpec, "podTemplate");
    const podSpec = get(podTemplate, "spec");
    const fromPod = get(podSpec, "serviceAccountName");
    if (podTemplate === UNKNOWN || podSpec === UNKNOWN || fromPod === UNKNOWN)
        return { name: UNKNOWN, source: podField };
    if (typeof fromPod === "string" && fromPod.length > 0) return { name: fromPod, source: podField };
    const own = get(wsSpec, "serviceAccountName");
    if (own === UNKNOWN) return { name: UNKNOWN, source: `${at}.serviceAccountName` };
    if (typeof own === "string" && own.length > 0) return { name: own, source: `${at}.serviceAccountName` };
    return undefined;
}

/**
 * The service account the Stack's workspace runs as, in PKO's merge order: the Stack controller
 * (`operator/internal/controller/pulumi/stack_controller.go`, `setupWorkspace`) copies `spec.serviceAccountName`
 * into the Workspace and strategic-merges `spec.workspaceTemplate` over it; the workspace controller then
 * merges the template's pod template over the pod last (`workspaceAccount`). So:
 * `workspaceTemplate.spec.podTemplate.spec.serviceAccountName` > `workspaceTemplate.spec.serviceAccountName`
 * > `spec.serviceAccountName` > `default`. Any of them unknown during preview where it may decide: unknown.
 */
export function effectiveServiceAccount(view: StackView): { name: string | Unknown; source: string } {
    const wt = view.workspaceTemplate;
    const fromTemplate: { name: string | Unknown; source: string } | undefined =
        wt === UNKNOWN
            ? { name: UNKNOWN, source: "spec.workspaceTemplate" }
            : workspaceAccount(get(wt, "spec"), "spec.workspaceTemplate.spec");
    if (fromTemplate) return fromTemplate;
    if (view.serviceAccountName === UNKNOWN || view.spec === UNKNOWN) {
        return { name: UNKNOWN, source: "spec.serviceAccountName" };
    }
    if (typeof view.serviceAccountName === "string" && view.serviceAccountName.length > 0) {
        return { name: view.serviceAccountName, source: "spec.serviceAccountName" };
    }
    return { name: "default", source: IMPLICIT_ACCOUNT };
}

/** The `source` of `effectiveServiceAccount` when no field names the account (every other source is a field path). */
export const IMPLICIT_ACCOUNT = "the implicit default service account";
