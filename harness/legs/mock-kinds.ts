/**
 * Which Kubernetes kinds are namespaced, as the provider decides without a cluster: its static table for built-in
 * group versions (support/kube-kinds.ts holds the cluster-scoped side), then CRDs.
 */
import { PROVIDER_CLUSTER_SCOPED_KINDS } from "../../support/kube-kinds";
import { Json, MockRefusal, Obj, isObj, unwrap } from "./mock-wire";

/** Built-in group versions the provider knows statically; kinds of other group versions come from CRDs. */
const KNOWN_GROUP_VERSIONS = new Set(
    [
        "admissionregistration.k8s.io/v1 v1alpha1 v1beta1",
        "apiextensions.k8s.io/v1 v1beta1",
        "apiregistration.k8s.io/v1 v1beta1",
        "apps/v1 v1beta1 v1beta2",
        "auditregistration.k8s.io/v1alpha1",
        "autoscaling/v1 v2 v2beta1 v2beta2",
        "batch/v1 v1beta1 v2alpha1",
        "certificates.k8s.io/v1 v1alpha1 v1beta1",
        "coordination.k8s.io/v1 v1alpha1 v1alpha2 v1beta1",
        "core/v1",
        "discovery.k8s.io/v1 v1beta1",
        "events.k8s.io/v1 v1beta1",
        "extensions/v1beta1",
        "flowcontrol.apiserver.k8s.io/v1 v1alpha1 v1beta1 v1beta2 v1beta3",
        "meta/v1",
        "networking.k8s.io/v1 v1alpha1 v1beta1",
        "node.k8s.io/v1 v1alpha1 v1beta1",
        "policy/v1 v1beta1",
        "rbac.authorization.k8s.io/v1 v1alpha1 v1beta1",
        "resource.k8s.io/v1 v1alpha1 v1alpha2 v1alpha3 v1beta1 v1beta2",
        "scheduling.k8s.io/v1 v1alpha1 v1beta1",
        "settings.k8s.io/v1alpha1",
        "storage.k8s.io/v1 v1alpha1 v1beta1",
        "storagemigration.k8s.io/v1alpha1 v1beta1",
    ].flatMap((line) => {
        const [first, ...more] = line.split(" ");
        const group = first.split("/")[0];
        return [first, ...more.map((v) => `${group}/${v}`)];
    }),
);
KNOWN_GROUP_VERSIONS.add("v1");

const NAMESPACED_BUILTIN = new Set(
    "Binding ConfigMap ControllerRevision CronJob CSIStorageCapacity DaemonSet Deployment Endpoints EndpointSlice Event HorizontalPodAutoscaler Ingress Job Lease LimitRange NetworkPolicy PersistentVolumeClaim Pod PodDisruptionBudget PodTemplate ReplicaSet ReplicationController ResourceQuota Role RoleBinding Secret Service ServiceAccount StatefulSet".split(
        " ",
    ),
);

export function groupOf(apiVersion: string): string {
    const i = apiVersion.indexOf("/");
    const group = i < 0 ? "" : apiVersion.slice(0, i);
    return group === "core" ? "" : group;
}

/** CRDs the program declared, by `<group>/<Kind>`: scope "Namespaced" or "Cluster". */
export type CrdScopes = Map<string, string>;

/** Records a CRD's scope (the provider caches every CRD it checks, for later YAML components). */
export function rememberCrd(crds: CrdScopes, obj: Json): void {
    if (!isObj(obj)) return;
    const plain = unwrap(obj) as Obj;
    if (plain.kind !== "CustomResourceDefinition" || groupOf(String(plain.apiVersion ?? "")) !== "apiextensions.k8s.io")
        return;
    const spec = isObj(plain.spec) ? plain.spec : {};
    const names = isObj(spec.names) ? spec.names : {};
    if (typeof spec.group === "string" && typeof names.kind === "string") {
        crds.set(`${spec.group}/${names.kind}`, String(spec.scope ?? ""));
    }
}

/**
 * Whether objects of this kind are namespaced, as the provider decides without a cluster: the static table
 * for built-in group versions, then CRDs among `objs`, then CRDs the program declared before. Otherwise
 * the provider fails, and so does this (same message).
 */
export function isNamespacedKind(apiVersion: string, kind: string, crds: CrdScopes, objs: Obj[] = []): boolean {
    const gv = apiVersion.startsWith("core/") ? apiVersion.slice("core/".length) : apiVersion;
    if (KNOWN_GROUP_VERSIONS.has(gv) || KNOWN_GROUP_VERSIONS.has(apiVersion)) {
        const base = kind.replace(/Patch$/, "").replace(/List$/, "");
        if (NAMESPACED_BUILTIN.has(base)) return true;
        if (PROVIDER_CLUSTER_SCOPED_KINDS.has(base)) return false;
    }
    const group = groupOf(apiVersion);
    const local = new Map<string, string>();
    for (const o of objs) rememberCrd(local, o);
    const scope = local.get(`${group}/${kind}`) ?? crds.get(`${group}/${kind}`);
    if (scope !== undefined) return scope === "Namespaced";
    const [g, v] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    throw new MockRefusal(
        `failed to determine if the following GVK is namespaced: ${g}/${v}, Kind=${kind} ` +
            `(declare its CustomResourceDefinition in the program, before the component, as the real preview needs too)`,
    );
}
