/**
 * Objects landing where an Argo CD Application puts them (for gitops/manifests/load.ts): in its destination
 * namespace and cluster (ManifestObject.scope), marked with the tracking annotation Argo CD writes; an object of a
 * file that Applications send to several clusters or namespaces is one object in each.
 */
import { CLUSTER_SCOPED_KINDS } from "../../support/kube-kinds";
import { record } from "../../support/records";
import { extended } from "../../support/shapes";
import { LocatedObject, ManifestObject, ObjectFields } from "./manifest-objects";

const TRACKING_ID = "argocd.argoproj.io/tracking-id";

/** The Application objects land by: its name, as shown, and its destination cluster (../argocd/destinations.ts). */
export interface AppLanding {
    name: string;
    shown: string;
    cluster: string;
}

/** What an object was before any Application landed it, and the objects landing made of it (one a scope and identity). */
const landings = new WeakMap<ManifestObject, { base: ObjectFields; landed: ManifestObject[] }>();

/**
 * Lands an object read from a file an Application syncs: in place the first time, and again in place for
 * another Application that puts it at the same identity in the same cluster (the last one tracks it, as the
 * folder's one object); for another cluster or namespace, a copy of the object as read is landed there (`add`).
 */
export function landFileObject(
    x: ManifestObject,
    namespace: string | undefined,
    app: AppLanding,
    add: (x: ManifestObject) => void,
): void {
    const entry = landings.get(x);
    if (!entry || !x.named) {
        if (!entry) landings.set(x, { base: objectFields(x), landed: [x] });
        land(x, namespace, app);
        return;
    }
    const meta = record(entry.base.object.metadata) ?? {};
    const lands =
        namespace && x.named && (meta.namespace ?? "") === "" && !CLUSTER_SCOPED_KINDS.has(x.kind)
            ? `${x.kind}/${namespace}/${String(meta.name)}`
            : entry.base.identity;
    const same = entry.landed.find((v) => (v.scope ?? "") === app.cluster && v.identity === lands);
    if (same) return land(same, namespace, app);
    const copy = new LocatedObject({ ...entry.base }, x);
    entry.landed.push(copy);
    land(copy, namespace, app);
    add(copy);
}

function objectFields(x: ManifestObject): ObjectFields {
    const { file, identity, type, urn, kind, object, read, named, repoPath, abs, syncedBy, scope } = x;
    return { file, identity, type, urn, kind, object, read, named, repoPath, abs, syncedBy, scope };
}

/**
 * The object as it lands: in `namespace` when it is namespaced and names none, and marked as synced by the
 * Application `app` the way Argo CD v3 marks what it applies by default (annotation tracking,
 * `<app>:<group>/<Kind>:<namespace>/<name>`), so that rules know which Application manages it.
 */
export function land(o: ManifestObject, namespace: string | undefined, app: AppLanding): void {
    o.syncedBy = `Application ${app.shown}`;
    o.scope = app.cluster;
    if (!o.named) return;
    const meta = (o.object.metadata ?? {}) as Record<string, unknown>;
    const name = String(meta.name);
    let ns = typeof meta.namespace === "string" ? meta.namespace : "";
    if (namespace && ns === "" && !CLUSTER_SCOPED_KINDS.has(o.kind)) {
        ns = namespace;
        o.identity = `${o.kind}/${namespace}/${name}`;
        o.urn = `${o.urn.slice(0, o.urn.lastIndexOf("::") + 2)}${o.identity}`;
    }
    const apiVersion = typeof o.object.apiVersion === "string" ? o.object.apiVersion : "";
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : "";
    const annotations = record(meta.annotations) ?? {};
    const tracking = `${app.name}:${group}/${o.kind}:${CLUSTER_SCOPED_KINDS.has(o.kind) ? "" : ns}/${name}`;
    if (landedMetadata.has(meta) && landedMetadata.has(annotations)) {
        // Landed before in this load (several Applications sync its folder): the copies that landing made are
        // this object's own, so they are updated in place, to the same keys in the same order as a fresh copy.
        if (ns !== "") meta.namespace = ns;
        annotations[TRACKING_ID] = tracking;
        return;
    }
    const landedAnnotations = extended(annotations, { [TRACKING_ID]: tracking });
    const landed = extended(
        meta,
        ns !== "" ? { namespace: ns, annotations: landedAnnotations } : { annotations: landedAnnotations },
    );
    landedMetadata.add(landed);
    landedMetadata.add(landedAnnotations);
    o.object = extended(o.object, { metadata: landed });
}

/**
 * The metadata (and annotations) objects `land` made, which belong to the landed object alone. An object that
 * many Applications sync (the same folder) is landed once per Application; copying it each time was most of
 * the Argo CD step's time (in a generated 10k-object repository where 20 Applications sync each folder).
 */
const landedMetadata = new WeakSet<object>();
