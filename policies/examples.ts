/**
 * For `pko-guard explain <rule>`: a small program each rule passes, as the resources the pack sees
 * (type, Pulumi name, properties in manifest form). A unit test runs every rule over its example, so an
 * example that stops passing fails the build. Not part of the pack's entry point.
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
    props: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "webapp", namespace: "pulumi", annotations: { "argocd.argoproj.io/sync-wave": "1" } } },
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
const stack: ExampleResource = {
    type: "kubernetes:pulumi.com/v1:Stack",
    name: "webapp-production",
    props: {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name: "webapp-production", namespace: "pulumi", annotations: { "argocd.argoproj.io/sync-wave": "2" } },
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

const governed = [serviceAccount, authDelegator, stack];

const bucket: ExampleResource = {
    type: "aws:s3/bucketV2:BucketV2",
    name: "reports",
    props: { bucket: "acme-reports" },
};
const ownership: ExampleResource = {
    type: "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    name: "reports",
    props: { bucket: "acme-reports", rule: { objectOwnership: "BucketOwnerEnforced" } },
};

/** Rule name -> the resources of a program that passes it. */
export const EXAMPLES: Record<string, ExampleResource[]> = {
    "pko-stack-credentials-from-secrets": [stack],
    "pko-stack-no-cluster-admin": governed,
    "pko-stack-destroy-on-finalize-nonprod": [stack],
    "pko-stack-prod-pinned-commit": [stack],
    "rbac-no-cluster-admin-serviceaccount": governed,
    "aws-s3-no-public-acl": [bucket, ownership],
    "pko-stack-prod-refresh": [stack],
    "pko-stack-preview-only-nonprod": [stack],
    "pko-stack-repo-allowlist": [stack],
    "pko-stack-resync-floor": [stack],
    "pko-stack-workspace-hardening": [stack],
    "pko-stack-esc-or-oidc-preferred": [stack],
    "pko-stack-auth-delegator": governed,
    "argocd-app-pko-sync-order": governed,
    "pko-stack-name-length": [stack],
    "pko-stack-secret-committed": governed,
    "pko-guard-production": [stack],
    "pko-workspace-program-objects": [
        {
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
                    stacks: [{ name: "acme/webapp/production", config: [{ key: "webapp:dbPassword", valueFrom: { env: "DB_PASSWORD" }, secret: true }] }],
                },
            },
        },
    ],
};
