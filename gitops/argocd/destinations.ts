/**
 * The cluster an Argo CD Application sends its objects to, as one key: `spec.destination.server` (without a
 * trailing `/`), else `spec.destination.name` as `name:<name>`. Argo CD registers the cluster it runs in as
 * `in-cluster`, server `https://kubernetes.default.svc` (docs: operator-manual/declarative-setup, "Clusters"),
 * so that name and that server are one cluster here. Other names and servers cannot be matched offline: a
 * cluster named in one Application and addressed by its server in another counts as two.
 */
import { record, str } from "../../support/records";

/** The server Argo CD gives the cluster it runs in. */
export const IN_CLUSTER_SERVER = "https://kubernetes.default.svc";

/** The scope of objects no Application syncs (and of Applications that name no destination cluster). */
export const NO_CLUSTER = "";

/** The destination cluster's key of an Application (NO_CLUSTER when it names none). */
export function destinationCluster(app: Record<string, unknown>): string {
    const destination = record(record(app.spec)?.destination);
    const server = str(destination?.server)?.trim().replace(/\/+$/, "");
    if (server) return server;
    const name = str(destination?.name)?.trim();
    if (name) return name === "in-cluster" ? IN_CLUSTER_SERVER : `name:${name}`;
    return NO_CLUSTER;
}

/**
 * A scope as messages show it: `cluster "https://..."`, or what no Application syncs (`synced`: some of its
 * objects are synced by an Application that names no destination cluster).
 */
export function describeScope(scope: string, synced = false): string {
    if (scope === NO_CLUSTER)
        return synced ? "among the objects of no destination cluster" : "in the files no Application syncs";
    if (scope.startsWith("flux:"))
        return `in the cluster of Flux entry point ${JSON.stringify(scope.slice("flux:".length))}`;
    if (scope.startsWith("flux-kubeconfig:"))
        return `in the cluster of Flux kubeConfig ${JSON.stringify(scope.slice("flux-kubeconfig:".length))}`;
    const shown = scope.startsWith("name:") ? scope.slice("name:".length) : scope;
    return `in cluster ${JSON.stringify(shown)}`;
}

/**
 * The scope whose cross-object rules see an object: the cluster it lands in (`landed`); an Argo CD Application
 * in the cluster it sends objects to, so that a rule that relates an Application to the Stacks it syncs sees both.
 */
export function viewScope(object: Record<string, unknown>, landed: string | undefined): string {
    const application =
        object.kind === "Application" &&
        typeof object.apiVersion === "string" &&
        object.apiVersion.startsWith("argoproj.io/");
    return application ? destinationCluster(object) : (landed ?? NO_CLUSTER);
}
