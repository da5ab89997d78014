/**
 * The one table of Kubernetes kinds whose objects have no namespace (cluster-scoped), by kind name.
 * A kind not listed is taken as namespaced, as custom resources are (cert-manager's ClusterIssuer is the listed
 * exception). `provider` marks kinds in the Pulumi Kubernetes provider's static table; for any other kind the provider,
 * and the mock leg (harness/legs/mock-kinds.ts), ask the CRDs.
 */
const CLUSTER_SCOPED: readonly { kind: string; provider: boolean }[] = [
    { kind: "Namespace", provider: true },
    { kind: "Node", provider: true },
    { kind: "PersistentVolume", provider: true },
    { kind: "ClusterRole", provider: true },
    { kind: "ClusterRoleBinding", provider: true },
    { kind: "CustomResourceDefinition", provider: true },
    { kind: "StorageClass", provider: true },
    { kind: "PriorityClass", provider: true },
    { kind: "RuntimeClass", provider: true },
    { kind: "IngressClass", provider: true },
    { kind: "CSIDriver", provider: true },
    { kind: "CSINode", provider: true },
    { kind: "VolumeAttachment", provider: true },
    { kind: "APIService", provider: true },
    { kind: "MutatingWebhookConfiguration", provider: true },
    { kind: "ValidatingWebhookConfiguration", provider: true },
    { kind: "ValidatingAdmissionPolicy", provider: false },
    { kind: "ValidatingAdmissionPolicyBinding", provider: false },
    { kind: "MutatingAdmissionPolicy", provider: false },
    { kind: "MutatingAdmissionPolicyBinding", provider: false },
    { kind: "PodSecurityPolicy", provider: true },
    { kind: "FlowSchema", provider: true },
    { kind: "PriorityLevelConfiguration", provider: true },
    { kind: "CertificateSigningRequest", provider: true },
    { kind: "ComponentStatus", provider: false },
    { kind: "ClusterIssuer", provider: false },
];

/** Every cluster-scoped kind of the table: no destination namespace applies to its objects. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(CLUSTER_SCOPED.map((k) => k.kind));

/** The cluster-scoped kinds the Pulumi Kubernetes provider's static table holds. */
export const PROVIDER_CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(
    CLUSTER_SCOPED.filter((k) => k.provider).map((k) => k.kind),
);
