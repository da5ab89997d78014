import * as k8s from "@pulumi/kubernetes";
// A Stack with a mandatory violation is registered, then the program fails: the run is an error, not a result.
new k8s.apiextensions.CustomResource("half-done", {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "half-done", namespace: "pulumi" },
    spec: {
        stack: "acme/app/dev",
        projectRepo: "https://github.com/acme/app",
        branch: "main",
        envRefs: { PULUMI_ACCESS_TOKEN: { type: "Literal", literal: { value: "not-a-real-token" } } },
    },
});
throw new Error("boom after registering a Stack");
