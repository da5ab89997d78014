/**
 * The reasons check could not compute what an object applies, carried on it for argocd-app-rendered (which
 * reports each, failing closed): an Argo CD Application or ApplicationSet, a Flux Kustomization or HelmRelease.
 */
import { NOT_RENDERED } from "../../policies/model/origin";
import { extended } from "../../support/shapes";
import { record } from "../../support/records";
import { ManifestObject } from "./manifest-objects";

/**
 * Records on an object why check could not compute what it applies (one line a reason;
 * argocd-app-rendered reports each, failing closed), replacing whatever the manifest itself wrote there.
 */
export function markNotRendered(o: ManifestObject, reasons: string[]): void {
    const meta = (o.object.metadata ?? {}) as Record<string, unknown>;
    const annotations = { ...(record(meta.annotations) ?? {}) };
    delete annotations[NOT_RENDERED];
    const lines = reasons.map((r) => r.replace(/[\r\n]+/g, " "));
    if (lines.length > 0) annotations[NOT_RENDERED] = lines.join("\n");
    else if (meta.annotations === undefined || !(NOT_RENDERED in (meta.annotations as Record<string, unknown>))) return;
    o.object = extended(o.object, { metadata: extended(meta, { annotations }) });
}
