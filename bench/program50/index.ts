import * as k8s from "@pulumi/kubernetes";

// 10 teams x (service account, auth-delegator binding, role binding, 2 Stacks) = 50 resources.
for (let i = 0; i < 10; i++) {
    const ns = `team-${i}`;
    new k8s.core.v1.ServiceAccount(`sa-${i}`, { metadata: { name: `sa-${i}`, namespace: ns } });
    new k8s.rbac.v1.ClusterRoleBinding(`delegator-${i}`, {
        metadata: { name: `delegator-${i}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
        subjects: [{ kind: "ServiceAccount", name: `sa-${i}`, namespace: ns }],
    });
    new k8s.rbac.v1.RoleBinding(`edit-${i}`, {
        metadata: { name: `edit-${i}`, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: `sa-${i}`, namespace: ns }],
    });
    for (const env of ["dev", "prod"]) {
        new k8s.apiextensions.CustomResource(`app-${i}-${env}`, {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: `app-${i}-${env}`, namespace: ns },
            spec: {
                serviceAccountName: `sa-${i}`,
                stack: `acme/app-${i}/${env}`,
                projectRepo: "https://github.com/acme/app",
                ...(env === "prod"
                    ? { commit: "2b0889718d3e63feeb6079ccd5e4488d8601e353", refresh: true }
                    : { branch: "main", destroyOnFinalize: true }),
                environment: ["aws"],
            },
        });
    }
}
