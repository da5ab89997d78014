/**
 * Flux's objects as check reads them (the CRDs in schemas/flux/): kustomize-controller's `Kustomization`
 * (kustomize.toolkit.fluxcd.io), helm-controller's `HelmRelease` (helm.toolkit.fluxcd.io) and source-controller's
 * sources (source.toolkit.fluxcd.io), told apart by API group and kind, whatever the version.
 */
import { record, str } from "../../support/records";

type Obj = Record<string, unknown>;

export const KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io";
export const HELM_GROUP = "helm.toolkit.fluxcd.io";
export const SOURCE_GROUP = "source.toolkit.fluxcd.io";

/** The source kinds a Kustomization, a HelmRelease or a PKO Stack's fluxSource can name. */
export const SOURCE_KINDS = [
    "GitRepository",
    "OCIRepository",
    "Bucket",
    "HelmRepository",
    "HelmChart",
    "ExternalArtifact",
];

function groupOf(o: Obj): string {
    const apiVersion = typeof o.apiVersion === "string" ? o.apiVersion : "";
    return apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : "";
}

export function isFluxKustomization(o: Obj): boolean {
    return o.kind === "Kustomization" && groupOf(o) === KUSTOMIZE_GROUP;
}

export function isHelmRelease(o: Obj): boolean {
    return o.kind === "HelmRelease" && groupOf(o) === HELM_GROUP;
}

/** A Kustomization or a HelmRelease: what makes Flux apply objects. */
export function isFluxApplier(o: Obj): boolean {
    return isFluxKustomization(o) || isHelmRelease(o);
}

export function isFluxSource(o: Obj): boolean {
    return groupOf(o) === SOURCE_GROUP && SOURCE_KINDS.includes(String(o.kind));
}

/** `namespace/name` of a Flux object, as messages show it (its namespace, else `default`, as the API server does). */
export function fluxName(o: Obj): { namespace: string; name: string; shown: string } {
    const meta = record(o.metadata) ?? {};
    const namespace = str(meta.namespace) || "default";
    const name = str(meta.name) ?? "";
    return { namespace, name, shown: `${namespace}/${name}` };
}
