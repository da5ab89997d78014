import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
// Registers a resource whose input never resolves, and keeps the event loop alive.
new k8s.core.v1.Namespace("ns", { metadata: { name: pulumi.output(new Promise<string>(() => undefined)) } });
setInterval(() => undefined, 1000);
