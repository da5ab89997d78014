/** The kubeconfig the webhook and audit read the cluster with: a file, or the client library's defaults (in-cluster, KUBECONFIG, ~/.kube/config). */
import * as k8s from "@kubernetes/client-node";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../support/errors";

/** The token a pod's service account mounts: the client library configures itself in-cluster when it is there. */
export const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Why there is no kubeconfig to read when none is given, naming every place the client library would look
 * (KUBECONFIG, ~/.kube/config, a pod's service account), or undefined when one of them is there. Without any, the
 * library would fall back to http://localhost:8080 and the command would fail on that instead.
 */
export function noKubeconfig(
    env: NodeJS.ProcessEnv = process.env,
    home: string = env.HOME || os.homedir(),
    exists: (file: string) => boolean = fs.existsSync,
): string | undefined {
    if (env.KUBECONFIG) return undefined;
    const file = path.join(home, ".kube", "config");
    if (exists(file) || exists(SERVICE_ACCOUNT_TOKEN)) return undefined;
    return `no kubeconfig found: KUBECONFIG is not set, there is no ${file}, and no in-cluster service account (${SERVICE_ACCOUNT_TOKEN}); give --kubeconfig FILE`;
}

export function loadKubeConfig(file?: string, context?: string): k8s.KubeConfig {
    if (!file) {
        const none = noKubeconfig();
        if (none) throw new BadInputError(none);
    }
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
