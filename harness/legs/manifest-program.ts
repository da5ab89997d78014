/**
 * The Pulumi program the mock and real legs run for a manifest fixture.
 * A generated index.js hands the objects, read by `pko-guard check`'s loader, to one `kubernetes:yaml/v2:ConfigGroup`
 * named `manifests`. A minimal namespaced CustomResourceDefinition is declared first for every custom kind: with
 * no cluster, the provider cannot otherwise tell whether such a kind is namespaced. Children are named
 * `manifests:<namespace>/<name>` (manifestRowMapper in manifest.ts maps them back).
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
