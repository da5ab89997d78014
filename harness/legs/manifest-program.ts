/**
 * The Pulumi program the mock and real legs run for a manifest fixture. The harness generates a program
 * folder (Pulumi.yaml + index.js, in a temporary folder) whose index.js calls `declareManifests` with the
 * fixture's `manifests/` folder:
 * - the objects are read by the same loader as `pko-guard check` (so each carries the same
 *   `pko-guard/source-path` annotation) and handed to one `kubernetes:yaml/v2:ConfigGroup` named
 *   `manifests` as `objs`: the provider expands them into its children, as it would expand the files;
 * - a minimal CustomResourceDefinition (namespaced, schema-less) is declared first for every custom kind
 *   (`Stack` of pulumi.com, `Application` of argoproj.io, ...): rendering to a folder with no cluster, the
 *   provider cannot otherwise tell whether such a kind is namespaced.
 * Resource names: a ConfigGroup child is named `manifests:<namespace>/<name>` (or `manifests:<name>`); the
 * harness maps that to the manifest identity `Kind/<namespace>/<name>` (manifestRowMapper in manifest.ts).
 */
import * as k8s from "@pulumi/kubernetes";
import { loadManifests } from "../../gitops/manifests/load";

export const CONFIG_GROUP = "manifests";

/** API groups the Kubernetes API server serves itself (no CRD needed). */
function builtIn(group: string): boolean {
    return (
        group === "core" ||
        group.endsWith(".k8s.io") ||
        ["apps", "batch", "autoscaling", "policy", "extensions"].includes(group)
    );
}

export function declareManifests(manifestsDir: string): void {
    const load = loadManifests([manifestsDir], { repoRoot: manifestsDir, cwd: manifestsDir });
    const objects = load.objects.filter((o) => o.named);
    const crds = new Map<string, k8s.apiextensions.v1.CustomResourceDefinition>();
    for (const o of objects) {
        const m = /^kubernetes:(.+)\/([^/]+):(.+)$/.exec(o.type);
        if (!m || builtIn(m[1])) continue;
        const [, group, version, kind] = m;
        const plural = `${kind.toLowerCase()}s`;
        const key = `${plural}.${group}`;
        if (crds.has(key)) continue;
        crds.set(
            key,
            new k8s.apiextensions.v1.CustomResourceDefinition(`crd-${key}`, {
                metadata: { name: key },
                spec: {
                    group,
                    scope: "Namespaced",
                    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
                    versions: [
                        {
                            name: version,
                            served: true,
                            storage: true,
                            schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
                        },
                    ],
                },
            }),
        );
    }
    new k8s.yaml.v2.ConfigGroup(
        CONFIG_GROUP,
        { objs: objects.map((o) => o.object) },
        { dependsOn: [...crds.values()] },
    );
}
