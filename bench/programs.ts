/** Synthetic programs for the benchmark: PKO Stacks plus the RBAC objects of a realistic platform. */
import { TestResourceLike } from "./types";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

/**
 * n resources: per 10, 7 Stacks (a tenth production), 1 ServiceAccount token Secret, 1 ClusterRoleBinding
 * (auth-delegator, or cluster-admin on some other account), 1 RoleBinding of a namespaced Role.
 */
export function platformProgram(n: number): TestResourceLike[] {
    const out: TestResourceLike[] = [];
    for (let i = 0; out.length < n; i++) {
        const ns = `team-${i % 50}`;
        const sa = `sa-${i}`;
        const kind = i % 10;
        if (kind < 7) {
            const prod = i % 10 === 0;
            out.push({
                type: "kubernetes:pulumi.com/v1:Stack",
                name: `stack-${i}`,
                props: {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: `stack-${i}`, namespace: ns, labels: { env: prod ? "prod" : "dev" } },
                    spec: {
                        stack: `acme/app-${i}/${prod ? "prod" : "dev"}`,
                        projectRepo: "https://github.com/acme/app",
                        ...(prod ? { commit: SHA, refresh: true } : { branch: "main", destroyOnFinalize: true }),
                        serviceAccountName: sa,
                        envRefs: {
                            PULUMI_ACCESS_TOKEN: {
                                type: "Secret",
                                secret: { name: "pulumi-access-token", key: "accessToken" },
                            },
                        },
                    },
                },
            });
        } else if (kind === 7) {
            out.push({
                type: "kubernetes:core/v1:Secret",
                name: `token-${i}`,
                props: { metadata: { name: `token-${i}`, namespace: ns }, stringData: { accessToken: "x" } },
            });
        } else if (kind === 8) {
            out.push({
                type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
                name: `crb-${i}`,
                props: {
                    metadata: { name: `crb-${i}` },
                    roleRef: {
                        apiGroup: "rbac.authorization.k8s.io",
                        kind: "ClusterRole",
                        name: i % 20 === 8 ? "cluster-admin" : "system:auth-delegator",
                    },
                    subjects: [{ kind: "ServiceAccount", name: `sa-${i - 1}`, namespace: ns }],
                },
            });
        } else {
            out.push({
                type: "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
                name: `rb-${i}`,
                props: {
                    metadata: { name: `rb-${i}`, namespace: ns },
                    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
                    subjects: [{ kind: "ServiceAccount", name: `sa-${i - 2}`, namespace: ns }],
                },
            });
        }
    }
    return out;
}
