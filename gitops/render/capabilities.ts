/**
 * What the destination cluster tells a chart about itself, as Argo CD passes it.
 * Argo CD runs `helm template` with `--kube-version` and one `--api-versions` for every API the cluster serves
 * (an Application's `helm.kubeVersion` / `helm.apiVersions` replace them). `check` has no cluster to ask, so it
 * assumes one that serves PKO v2's and Argo CD's APIs: otherwise a chart that renders its Stack only
 * `if .Capabilities.APIVersions.Has "pulumi.com/v1/Stack"` would render nothing here and everything in the cluster.
 */
import { BadInputError } from "../../support/errors";

/** PKO v2.9.0's CRDs (schemas/pko/v2.9.0; a unit test compares) and Argo CD's, as Argo CD lists them. */
export const OPERATOR_API_VERSIONS: readonly string[] = [
    ...apis("pulumi.com/v1", ["Stack", "Program"]),
    ...apis("pulumi.com/v1alpha1", ["Stack"]),
    ...apis("auto.pulumi.com/v1alpha1", ["Workspace", "Update"]),
    ...apis("argoproj.io/v1alpha1", ["Application", "ApplicationSet", "AppProject"]),
];

function apis(groupVersion: string, kinds: string[]): string[] {
    return [groupVersion, ...kinds.map((k) => `${groupVersion}/${k}`)];
}

/** The cluster a render assumes: its version (unset: Helm's default) and the API versions it serves. */
export interface ClusterCapabilities {
    kubeVersion?: string;
    apiVersions: readonly string[];
}

export const DEFAULT_CAPABILITIES: ClusterCapabilities = { apiVersions: OPERATOR_API_VERSIONS };

/**
 * A Kubernetes version as Argo CD normalizes it before Helm sees it (k8s.io/apimachinery `ParseGeneric`:
 * an optional `v`, major.minor[.patch], anything after a `-` or `+` dropped): `v1.31.4-eks-1` is `1.31.4`.
 * Anything else is bad input (Argo CD refuses to render it too).
 */
export function normalizeKubeVersion(value: string, what: string): string {
    const m = /^v?(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(value.trim());
    if (!m) throw new BadInputError(`${what}: not a Kubernetes version (expected e.g. 1.31 or v1.31.4)`);
    return `${Number(m[1])}.${Number(m[2])}.${Number(m[3] ?? 0)}`;
}

/** An API version as `--api-versions` takes it: `version`, `group/version` or `group/version/Kind`. */
export function checkApiVersion(value: string, what: string): string {
    if (
        !/^(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?v[0-9][a-z0-9]{0,62}(?:\/[A-Za-z][A-Za-z0-9]{0,62})?$/.test(value)
    ) {
        throw new BadInputError(
            `${what}: not an API version (expected group/version or group/version/Kind, e.g. example.com/v1/Widget)`,
        );
    }
    return value;
}

/** The capabilities given on the command line, on top of the defaults. */
export function clusterCapabilities(o: { kubeVersion?: string; apiVersions?: string[] }): ClusterCapabilities {
    const extra = (o.apiVersions ?? []).map((v) => checkApiVersion(v, "--api-versions"));
    return {
        kubeVersion: o.kubeVersion === undefined ? undefined : normalizeKubeVersion(o.kubeVersion, "--kube-version"),
        apiVersions: [...new Set([...OPERATOR_API_VERSIONS, ...extra])],
    };
}
