/** The kubeconfig the webhook and audit read the cluster with: a file, or the client library's defaults (in-cluster, KUBECONFIG, ~/.kube/config). */
import * as k8s from "@kubernetes/client-node";
import { BadInputError } from "../support/errors";

export function loadKubeConfig(file?: string, context?: string): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    try {
        if (file) kc.loadFromFile(file);
        else kc.loadFromDefault();
    } catch (e) {
        throw new BadInputError(
            `cannot read the kubeconfig${file ? ` ${file}` : ""}: ${String((e as Error).message).split("\n")[0]}`,
        );
    }
    if (context) {
        if (!kc.getContextObject(context))
            throw new BadInputError(`no context ${JSON.stringify(context)} in the kubeconfig`);
        kc.setCurrentContext(context);
    }
    if (!kc.getCurrentCluster())
        throw new BadInputError("the kubeconfig names no current cluster (use --kubeconfig or --context)");
    return kc;
}
