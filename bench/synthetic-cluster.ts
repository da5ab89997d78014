/**
 * The admission bench's cluster (bench/admission-load.ts): synthetic objects of teams (Stacks, their accounts,
 * Secrets, roles and bindings), put in a seeded cache or created on an API server, and AdmissionReviews of them.
 */
import * as k8s from "@kubernetes/client-node";
import { ClusterCache } from "../cluster/cache";
import { KObject, WATCHED_KINDS } from "../cluster/kinds";
import { objectClient } from "../cluster/client";

/** A cluster of `n` objects: per namespace 2 Stacks, their account, a Secret, a Role and RoleBinding; a ClusterRoleBinding per 10. */
export function syntheticCluster(n: number): KObject[] {
    const out: KObject[] = [];
    for (let i = 0; out.length < n; i++) {
        const ns = `team-${i}`;
        const sa = `deployer`;
        out.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: ns } });
        out.push({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "pulumi-api-secret", namespace: ns },
            type: "Opaque",
            data: { accessToken: "" },
        });
        out.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: "deployer", namespace: ns },
            rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "create", "update"] }],
        });
        out.push({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "deployer", namespace: ns },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "deployer" },
            subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
        });
        for (const env of ["dev", "staging"]) out.push(stackObject(ns, `app-${env}`, sa, env));
        if (i % 10 === 0) {
            out.push({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRoleBinding",
                metadata: { name: `${ns}:auth-delegator` },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
                subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
            });
        }
    }
    return out.slice(0, n);
}

function stackObject(ns: string, name: string, sa: string, env: string): KObject {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: ns },
        spec: {
            serviceAccountName: sa,
            stack: `org/${ns}/${env}`,
            projectRepo: "https://github.com/org/app.git",
            branch: "main",
            envRefs: {
                PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "pulumi-api-secret", key: "accessToken" } },
            },
        },
    };
}

function offlineKubeConfig(): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
        clusters: [{ name: "none", server: "https://127.0.0.1:1" }],
        users: [{ name: "u" }],
        contexts: [{ name: "c", cluster: "none", user: "u" }],
        currentContext: "c",
    });
    return kc;
}

export function seededCache(objects: KObject[]): ClusterCache {
    const c = new ClusterCache(offlineKubeConfig());
    for (const k of WATCHED_KINDS)
        c.seed(
            k.kind,
            objects.filter((o) => o.kind === k.kind),
        );
    return c;
}

/** Creates the namespaces of `objects` and then the objects, `parallel` requests at a time. */
export async function populate(kc: k8s.KubeConfig, objects: KObject[], parallel = 16): Promise<void> {
    const { api, close } = objectClient(kc, parallel);
    const namespaces = [
        ...new Set(
            objects
                .map((o) => (o.metadata ?? {}).namespace)
                .filter((n): n is string => typeof n === "string" && n !== ""),
        ),
    ];
    const createAll = async (items: KObject[]) => {
        let next = 0;
        const one = async (): Promise<void> => {
            while (next < items.length) {
                const o = items[next++];
                await api.create(o as k8s.KubernetesObject);
            }
        };
        await Promise.all(Array.from({ length: parallel }, one));
    };
    try {
        await createAll(namespaces.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })));
        await createAll(objects);
    } finally {
        close();
    }
}

/** AdmissionReviews updating existing Stacks of 200 namespaces (half of them production-shaped, so denied). */
export function reviewBodies(cluster: KObject[]): string[] {
    const stacks = cluster.filter((o) => o.kind === "Stack").slice(0, 400);
    return stacks.map((s, i) => {
        const object =
            i % 2 === 0
                ? s
                : {
                      ...s,
                      spec: {
                          ...(s.spec as object),
                          stack: `org/${(s.metadata as { namespace: string }).namespace}/production`,
                      },
                  };
        return JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            request: {
                uid: `u${i}`,
                kind: { group: "pulumi.com", version: "v1", kind: "Stack" },
                operation: "UPDATE",
                namespace: (s.metadata as { namespace: string }).namespace,
                name: (s.metadata as { name: string }).name,
                object,
                oldObject: s,
            },
        });
    });
}
