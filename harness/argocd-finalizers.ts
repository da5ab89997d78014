/**
 * The part of Argo CD's application controller that deletion needs, for test clusters that run no Argo CD.
 * An Application with Argo CD's finalizers is only dropped once Argo CD's controller has removed them, so
 * without it `pulumi destroy` waits for it until its deadline. The harness's Applications have deployed
 * nothing, so this watcher removes every `*.argocd.argoproj.io` finalizer once an Application has a
 * `deletionTimestamp`, and leaves every other finalizer to its owner.
 */
import * as k8s from "@kubernetes/client-node";
import * as path from "path";
import { REPO_ROOT } from "../support/paths";

/** The Argo CD release whose Application CRD the test clusters install and the deploy leg validates against. */
export const ARGOCD_VERSION = "v3.6.1";
/** Argo CD's own Application CRD, as that release ships it (schemas/argocd/<version>/PROVENANCE.md). */
export const APPLICATION_CRD = path.join(REPO_ROOT, "schemas", "argocd", ARGOCD_VERSION, "application-crd.yaml");

const GROUP = "argoproj.io";
const VERSION = "v1alpha1";
const PLURAL = "applications";

/** A finalizer Argo CD's controller owns: a name in the `argocd.argoproj.io` domain, with or without a `/suffix`. */
export function isArgoCdFinalizer(f: string): boolean {
    return /^[a-z0-9-]+\.argocd\.argoproj\.io(\/[A-Za-z0-9._-]+)?$/.test(f);
}

/** The finalizers left once Argo CD's are removed; undefined when there is nothing to remove. */
export function finalizersAfterArgoCd(o: k8s.KubernetesObject): string[] | undefined {
    const finalizers = o.metadata?.finalizers ?? [];
    if (!o.metadata?.deletionTimestamp || !finalizers.some(isArgoCdFinalizer)) return undefined;
    return finalizers.filter((f) => !isArgoCdFinalizer(f));
}

export interface ApplicationFinalizer {
    /** Finalizers removed so far, as `namespace/name`. */
    finalized: string[];
    /** Errors the watcher met (a patch the server refused, a watch that failed). */
    errors: string[];
    stop(): Promise<void>;
}

/**
 * Starts the watcher against the cluster of `kubeconfigFile`; resolves once the first list is done (from
 * then on every deleted Application is seen). The Application CRD must be installed.
 */
export async function startApplicationFinalizer(kubeconfigFile: string): Promise<ApplicationFinalizer> {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigFile);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const informer = k8s.makeInformer<k8s.KubernetesObject>(kc, `/apis/${GROUP}/${VERSION}/${PLURAL}`, () =>
        api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }),
    );
    const state: ApplicationFinalizer = { finalized: [], errors: [], stop: () => Promise.resolve() };
    let stopped = false;
    const finalize = async (o: k8s.KubernetesObject) => {
        const kept = finalizersAfterArgoCd(o);
        const { name, namespace, resourceVersion } = o.metadata ?? {};
        if (kept === undefined || !name || !namespace) return;
        try {
            // The resourceVersion makes the patch conditional: if the object changed meanwhile (409), the
            // watch delivers the newer version and this runs again on it.
            await api.patchNamespacedCustomObject(
                {
                    group: GROUP,
                    version: VERSION,
                    namespace,
                    plural: PLURAL,
                    name,
                    body: { metadata: { resourceVersion, finalizers: kept } },
                },
                k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
            );
            state.finalized.push(`${namespace}/${name}`);
        } catch (e) {
            const code = (e as { code?: number }).code;
            if (code !== 404 && code !== 409)
                state.errors.push(
                    `removing Argo CD's finalizers from ${namespace}/${name}: ${String((e as Error).message).split("\n")[0]}`,
                );
        }
    };
    // finalize records its own failures; what else escapes it is recorded the same way.
    const handled = (o: k8s.KubernetesObject): void => {
        finalize(o).catch((e: unknown) =>
            state.errors.push(`finalizing an Application: ${String((e as Error)?.message ?? e).split("\n")[0]}`),
        );
    };
    informer.on("add", handled);
    informer.on("update", handled);
    // The informer stops on a watch error; it is restarted (listing again) after a pause, as the library's
    // documentation does, unless the watcher was stopped.
    let restart: NodeJS.Timeout | undefined;
    informer.on("error", (e: unknown) => {
        if (stopped) return;
        state.errors.push(`watch of Applications: ${String((e as Error)?.message ?? e).split("\n")[0]}`);
        restart = setTimeout(() => {
            if (!stopped) informer.start().catch((err: unknown) => state.errors.push(String(err)));
        }, 1000);
    });
    await informer.start();
    state.stop = async () => {
        stopped = true;
        if (restart) clearTimeout(restart);
        await informer.stop();
    };
    return state;
}
