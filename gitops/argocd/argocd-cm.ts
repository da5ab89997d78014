/**
 * The Argo CD instance's settings a repository declares (its `argocd-cm` ConfigMap, when the repository holds it as
 * a manifest): what of them changes how check renders. Only kustomize's Helm chart generator for now: Argo CD
 * builds a kustomization's `helmCharts` only when `kustomize.buildOptions` carries `--enable-helm` (argo-cd
 * util/settings `GetKustomizeSettings`, util/kustomize `isHelmEnabled`); an Application cannot ask for it.
 */
import { record } from "../../support/records";

type Obj = Record<string, unknown>;

/** What check takes from argocd-cm for kustomize sources. */
export interface ArgoKustomizeSettings {
    /** `kustomize.buildOptions` carries `--enable-helm` in every argocd-cm of the repository (at least one). */
    enableHelm: boolean;
}

/**
 * The kustomize settings of the argocd-cm ConfigMaps among `objects` (the repository's manifests as written):
 * Helm is enabled only when there is one and every one enables it (with several Argo CD instances, check does not
 * know which one renders an Application). Only the default version's `kustomize.buildOptions` is read: the repo
 * server passes it, not a `kustomize.buildOptions.<version>`, to `kustomize build`.
 */
export function argoKustomizeSettings(objects: readonly { object: Obj }[]): ArgoKustomizeSettings {
    const maps = objects
        .map((o) => o.object)
        .filter((o) => o.kind === "ConfigMap" && o.apiVersion === "v1" && record(o.metadata)?.name === "argocd-cm");
    const enables = (cm: Obj) => {
        const options = record(cm.data)?.["kustomize.buildOptions"];
        return typeof options === "string" && /(^|\s)--enable-helm(=true)?(\s|$)/.test(options);
    };
    return { enableHelm: maps.length > 0 && maps.every(enables) };
}
