/**
 * A governed Argo CD + Pulumi Kubernetes Operator setup that passes every mandatory pko-guard rule:
 *
 * - the Pulumi access token lives in a Kubernetes Secret (from secret stack config) and Stacks reference
 *   it with envRefs {type: Secret}; cloud credentials come from a Pulumi ESC environment;
 * - each Stack runs as its own service account, bound to system:auth-delegator (PKO v2 needs it) and to a
 *   namespaced role with only what its program manages; no cluster-admin;
 * - dev tracks main with destroyOnFinalize; prod deploys a pinned 40-hex commit with refresh;
 * - Argo CD applies Secrets and RBAC in sync wave 1 and the Stacks in wave 2; the production Application
 *   does not prune automatically.
 *
 * `pko-guard gate . --stack <stack>` passes (advisory only: a static token; OIDC would remove it).
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";

const config = new pulumi.Config();
const token = config.requireSecret("pulumiAccessToken");
const namespace = "pulumi";
const wave = (n: number) => ({ "argocd.argoproj.io/sync-wave": String(n) });

const environments = {
    dev: { branch: "main", destroyOnFinalize: true },
    prod: { commit: config.get("prodCommit") ?? "2b0889718d3e63feeb6079ccd5e4488d8601e353", refresh: true },
} as const;

for (const [env, source] of Object.entries(environments)) {
    const name = `webapp-${env}`;
    const tokenSecret = new k8s.core.v1.Secret(`${name}-token`, {
        metadata: { name: `${name}-token`, namespace, annotations: wave(1) },
        stringData: { accessToken: token },
    });
    const account = new k8s.core.v1.ServiceAccount(name, { metadata: { name, namespace, annotations: wave(1) } });
    new k8s.rbac.v1.ClusterRoleBinding(`${name}-auth-delegator`, {
        metadata: { name: `${namespace}:${name}:auth-delegator`, annotations: wave(1) },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
        subjects: [{ kind: "ServiceAccount", name, namespace }],
    });
    const appNamespace = `webapp-${env}`;
    const role = new k8s.rbac.v1.Role(`${name}-deployer`, {
        metadata: { name: `${name}-deployer`, namespace: appNamespace, annotations: wave(1) },
        rules: [{ apiGroups: ["", "apps"], resources: ["configmaps", "services", "deployments"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] }],
    });
    new k8s.rbac.v1.RoleBinding(`${name}-deployer`, {
        metadata: { name: `${name}-deployer`, namespace: appNamespace, annotations: wave(1) },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace }],
    });
    new k8s.apiextensions.CustomResource(name, {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace, annotations: { ...wave(2), "link.argocd.argoproj.io/external-link": `https://app.pulumi.com/acme/webapp/${env}` } },
        spec: {
            serviceAccountName: name,
            stack: `acme/webapp/${env}`,
            projectRepo: "https://github.com/acme/pulumi-webapp.git",
            ...source,
            environment: ["aws-credentials"],
            envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: tokenSecret.metadata.name, key: "accessToken" } } },
        },
    });
    new k8s.apiextensions.CustomResource(`${name}-application`, {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name, namespace: "argocd", finalizers: ["resources-finalizer.argocd.argoproj.io/background"] },
        spec: {
            project: "default",
            source: { repoURL: "https://github.com/acme/webapp-manifests.git", targetRevision: "main", path: `manifests/${env}` },
            destination: { server: "https://kubernetes.default.svc", namespace },
            syncPolicy: { automated: { prune: env !== "prod", selfHeal: true } },
        },
    });
}
