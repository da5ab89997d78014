/**
 * The pieces of the programs the rules give as their examples (`about.example`: the resources the pack sees,
 * type, Pulumi name and properties in manifest form). A test runs every rule over its example, so an example
 * that stops passing fails the build.
 */
export interface ExampleResource {
    type: string;
    name: string;
    props: Record<string, unknown>;
}

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

const serviceAccount: ExampleResource = {
    type: "kubernetes:core/v1:ServiceAccount",
    name: "webapp",
    props: {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "webapp", namespace: "pulumi", annotations: { "argocd.argoproj.io/sync-wave": "1" } },
    },
};

const authDelegator: ExampleResource = {
    type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    name: "webapp-auth-delegator",
    props: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "pulumi:webapp:system:auth-delegator", annotations: { "argocd.argoproj.io/sync-wave": "1" } },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
        subjects: [{ kind: "ServiceAccount", name: "webapp", namespace: "pulumi" }],
    },
};

/** A governed production Stack: OIDC (no stored token), ESC for cloud credentials, pinned commit, refresh. */
export const stack: ExampleResource = {
    type: "kubernetes:pulumi.com/v1:Stack",
    name: "webapp-production",
    props: {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: {
            name: "webapp-production",
            namespace: "pulumi",
            annotations: { "argocd.argoproj.io/sync-wave": "2" },
        },
        spec: {
            serviceAccountName: "webapp",
            stack: "myorg/webapp/production",
            projectRepo: "https://github.com/myorg/pulumi-webapp.git",
            commit: SHA,
            refresh: true,
            resyncFrequencySeconds: 300,
            environment: ["aws-credentials"],
        },
    },
};

export const governed = [serviceAccount, authDelegator, stack];

export const bucket: ExampleResource = {
    type: "aws:s3/bucketV2:BucketV2",
    name: "reports",
    props: { bucket: "acme-reports" },
};
export const ownership: ExampleResource = {
    type: "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    name: "reports",
    props: { bucket: "acme-reports", rule: { objectOwnership: "BucketOwnerEnforced" } },
};

/** A Workspace created directly, with its credentials from a Secret. */
export const workspace: ExampleResource = {
    type: "kubernetes:auto.pulumi.com/v1alpha1:Workspace",
    name: "webapp-ws",
    props: {
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Workspace",
        metadata: { name: "webapp-ws", namespace: "pulumi" },
        spec: {
            serviceAccountName: "webapp",
            git: { url: "https://github.com/acme/webapp", ref: SHA },
            env: [{ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "webapp-db", key: "password" } } }],
            stacks: [
                {
                    name: "acme/webapp/production",
                    config: [{ key: "webapp:dbPassword", valueFrom: { env: "DB_PASSWORD" }, secret: true }],
                },
            ],
        },
    },
};
