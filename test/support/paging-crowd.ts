/**
 * The crowd of the paging specs (test/unit/cluster/paging.spec.ts through the fake cluster,
 * test/chaos/cluster/paging.spec.ts on a real API server): more Stacks and Argo CD Applications than two pages
 * of 500 each, and a binding that gives the 501st Stack's account (the second page's first by name) cluster-admin.
 */
import * as assert from "assert";
import { ClusterCache } from "../../cluster/cache";
import { judgeAdmissionFresh } from "../../cluster/admission";
import { KObject, WATCHED_KINDS } from "../../cluster/kinds";
import { PackConfig } from "../../evaluation/pack-config";

export const STACKS = 1234;
export const APPLICATIONS = 777;
/** The 501st Stack by name runs as `webapp`. */
export const TARGET = 500;

export const pad = (i: number) => String(i).padStart(4, "0");

/** How a finding names the 501st Stack. */
export const TARGET_STACK = `Stack/crowd/stack-${pad(TARGET)}`;

export function crowdStack(i: number): KObject {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name: `stack-${pad(i)}`, namespace: "crowd" },
        spec: {
            serviceAccountName: i === TARGET ? "webapp" : `sa-${pad(i)}`,
            stack: `org/app/s${pad(i)}`,
            projectRepo: "https://github.com/org/app.git",
            commit: "0123456789abcdef0123456789abcdef01234567",
        },
    };
}

export function crowdApplication(i: number): KObject {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: `app-${pad(i)}`, namespace: "argocd" },
        spec: {
            project: "default",
            source: { repoURL: "https://github.com/org/deploy.git", path: `apps/${pad(i)}`, targetRevision: "main" },
            destination: { server: "https://kubernetes.default.svc", namespace: `dest-${pad(i)}` },
        },
    };
}

/** Every Stack, then every Application. */
export function crowdObjects(): KObject[] {
    return [
        ...Array.from({ length: STACKS }, (_, i) => crowdStack(i)),
        ...Array.from({ length: APPLICATIONS }, (_, i) => crowdApplication(i)),
    ];
}

export const adminBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "webapp:cluster-admin" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name: "webapp", namespace: "crowd" }],
};

/**
 * A fresh read lists every page: with `cache` seeded empty (synced, holding nothing), admission's fresh reads
 * alone find the 501st Stack and deny the binding.
 */
export async function assertDeniedByFreshRead(cache: ClusterCache, config: PackConfig): Promise<void> {
    for (const k of WATCHED_KINDS) cache.seed(k.kind, []);
    assert.strictEqual((await cache.listFresh("Stack", "crowd")).length, STACKS);
    const d = await judgeAdmissionFresh(
        { operation: "CREATE", object: adminBinding },
        cache,
        { config, warnOnly: false },
        (kind, ns, name) => cache.listFresh(kind, ns, name),
    );
    assert.strictEqual(d.allowed, false, "admitted");
    assert.match(d.message!, new RegExp(TARGET_STACK));
}
