/**
 * The cluster objects pko-guard's rules read, and how a live object becomes a resource for the in-process
 * evaluator. A Secret keeps only its key names (values and last-applied-configuration dropped) and
 * `managedFields` are dropped everywhere. Each object is decoded alone (decodeObject), so one that cannot be
 * judged becomes an UnreadableObject rather than an exception that stops the others.
 */
import { CLUSTER_URN_PREFIX } from "../policies/model/origin";
import { EvalResource } from "../evaluation/evaluate";
import { extended } from "../support/shapes";
import { record, str } from "../support/records";

export interface WatchedKind {
    apiVersion: string;
    kind: string;
    /** The list/watch path across all namespaces. */
    path: string;
    /** True for kinds a CRD may not define yet (absent means: no such object can exist). */
    optional?: boolean;
}

/**
 * Every kind a rule reads: the webhook's cache and `audit` list and watch these, the shipped
 * ValidatingWebhookConfiguration sends their creates and updates (deploy/webhook/; a unit spec holds the
 * three to the same list), and the webhook's ClusterRole lists and watches them.
 */
export const WATCHED_KINDS: WatchedKind[] = [
    { apiVersion: "v1", kind: "ServiceAccount", path: "/api/v1/serviceaccounts" },
    { apiVersion: "v1", kind: "Secret", path: "/api/v1/secrets" },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", path: "/apis/rbac.authorization.k8s.io/v1/roles" },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        path: "/apis/rbac.authorization.k8s.io/v1/rolebindings",
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    },
    { apiVersion: "pulumi.com/v1", kind: "Stack", path: "/apis/pulumi.com/v1/stacks", optional: true },
    // PKO's other objects (schemas/pko/): a Workspace created directly runs a program as its own account, a
    // Program holds Pulumi YAML, and an Update runs an operation (a destroy, say) on a stack of a Workspace.
    { apiVersion: "pulumi.com/v1", kind: "Program", path: "/apis/pulumi.com/v1/programs", optional: true },
    {
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Workspace",
        path: "/apis/auto.pulumi.com/v1alpha1/workspaces",
        optional: true,
    },
    {
        apiVersion: "auto.pulumi.com/v1alpha1",
        kind: "Update",
        path: "/apis/auto.pulumi.com/v1alpha1/updates",
        optional: true,
    },
    {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        path: "/apis/argoproj.io/v1alpha1/applications",
        optional: true,
    },
    // The Flux sources a Stack's fluxSource can name (pko-stack-prod-pinned-commit judges whether it is pinned):
    // a change that unpins one is judged with the production Stacks of its namespace.
    {
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "GitRepository",
        path: "/apis/source.toolkit.fluxcd.io/v1/gitrepositories",
        optional: true,
    },
    {
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "OCIRepository",
        path: "/apis/source.toolkit.fluxcd.io/v1/ocirepositories",
        optional: true,
    },
    {
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "Bucket",
        path: "/apis/source.toolkit.fluxcd.io/v1/buckets",
        optional: true,
    },
];

const KIND_NAMES = new Set(WATCHED_KINDS.map((k) => `${groupOf(k.apiVersion)}/${k.kind}`));

export function groupOf(apiVersion: string): string {
    const slash = apiVersion.lastIndexOf("/");
    return slash < 0 ? "core" : apiVersion.slice(0, slash);
}

/** Whether some rule reads objects of this apiVersion and kind (any version of the group). */
export function isWatchedKind(apiVersion: unknown, kind: unknown): boolean {
    return (
        typeof apiVersion === "string" && typeof kind === "string" && KIND_NAMES.has(`${groupOf(apiVersion)}/${kind}`)
    );
}

export type KObject = Record<string, unknown> & { metadata?: Record<string, unknown> };

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The part of a live object the rules read, as a plain JSON copy: no managedFields, and for Secrets no values
 * (see the module comment).
 */
export function keepReadable(obj: KObject): KObject {
    const plainObj = JSON.parse(JSON.stringify(obj)) as KObject;
    const metadata = record(plainObj.metadata) ?? {};
    delete metadata.managedFields;
    if (plainObj.kind === "Secret") {
        const annotations = record(metadata.annotations);
        if (annotations) delete annotations[LAST_APPLIED];
        const out: KObject = { apiVersion: plainObj.apiVersion, kind: "Secret", metadata };
        if (typeof plainObj.type === "string") out.type = plainObj.type;
        for (const field of ["data", "stringData"]) {
            const values = record(plainObj[field]);
            if (values) out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, ""]));
        }
        return out;
    }
    plainObj.metadata = metadata;
    return plainObj;
}

/**
 * How deeply a live object may nest (objects and arrays within one another, the object itself being level 1)
 * and still be judged. Judging copies and walks an object recursively (the analyzer's Struct round trip, the
 * policy SDK's deserialization, the rules' walks), and V8's stack runs out a few thousand levels down; the
 * objects Kubernetes and its operators define nest a few dozen levels. An object deeper than this is
 * skipped, whatever holds it (a CRD that preserves unknown fields lets any depth be stored).
 */
export const MAX_DEPTH = 512;

/** A live object pko-guard could not read, named without its content. */
export interface UnreadableObject {
    kind: string;
    apiVersion: string;
    /** "" when cluster-scoped (or when the object names none). */
    namespace: string;
    name: string;
    /** Why, in a few words (never the object's content). */
    reason: string;
    /**
     * The namespaces whose decisions it could change had it been read: its own, and an Application's
     * destination. `everywhere` for kinds whose reach is in what could not be read (a binding's subjects, a
     * role's bindings) and for an Application whose destination cannot be told.
     */
    namespaces: string[];
    everywhere: boolean;
}

/** A live object as kept (`object`), or why it cannot be (`unreadable`). */
export type Decoded =
    { object: KObject; unreadable?: undefined } | { object?: undefined; unreadable: UnreadableObject };

/**
 * Whether the object or array `v` nests deeper than `max` levels (`v` itself being level 1). The walk recurses
 * at most `max` calls deep and stops there, so any depth is safe to ask about.
 */
export function nestsDeeperThan(v: object, max: number): boolean {
    if (max < 1) return true;
    if (Array.isArray(v)) {
        for (const c of v as unknown[])
            if (c !== null && typeof c === "object" && nestsDeeperThan(c, max - 1)) return true;
        return false;
    }
    for (const k of Object.keys(v)) {
        const c = (v as Record<string, unknown>)[k];
        if (c !== null && typeof c === "object" && nestsDeeperThan(c, max - 1)) return true;
    }
    return false;
}

/** The kinds whose reach is their own namespace (and an Application's destination). */
const OWN_REACH = new Set([
    "Stack",
    "Program",
    "Workspace",
    "Update",
    "ServiceAccount",
    "Secret",
    "Application",
    "GitRepository",
    "OCIRepository",
    "Bucket",
]);

/**
 * A live object of `kind` (its apiVersion and kind filled in when it lacks them, as items of a built-in
 * kind's list do) as keepReadable keeps it, or, when pko-guard cannot judge it, why: not a JSON object,
 * nested deeper than MAX_DEPTH, or a copy that fails. Never throws.
 */
export function decodeObject(raw: unknown, kind: { kind: string; apiVersion: string }): Decoded {
    const o = record(raw);
    const metadata = record(o?.metadata);
    const apiVersion = typeof o?.apiVersion === "string" ? o.apiVersion : kind.apiVersion;
    const unreadable = (reason: string): Decoded => {
        const namespace = str(metadata?.namespace) ?? "";
        const namespaces = namespace ? [namespace] : [];
        let everywhere = !namespace || !OWN_REACH.has(kind.kind);
        if (kind.kind === "Application") {
            const destination = str(record(record(record(o?.spec)?.destination))?.namespace) ?? "";
            if (destination) namespaces.push(destination);
            else everywhere = true;
        }
        const name = str(metadata?.name) ?? "";
        return { unreadable: { kind: kind.kind, apiVersion, namespace, name, reason, namespaces, everywhere } };
    };
    if (!o) return unreadable("it is not a JSON object");
    if (nestsDeeperThan(o, MAX_DEPTH)) return unreadable(`it nests deeper than ${MAX_DEPTH} levels`);
    try {
        return { object: keepReadable(extended(o, { kind: kind.kind, apiVersion })) };
    } catch (e) {
        return unreadable(
            `it cannot be copied (${String((e as Error).message)
                .split("\n")[0]
                .slice(0, 120)})`,
        );
    }
}

/** The identity of an object pko-guard could not read, as identityOf names a read one. */
export function unreadableIdentity(u: UnreadableObject): string {
    return u.namespace
        ? `${String(u.kind)}/${String(u.namespace)}/${String(u.name)}`
        : `${String(u.kind)}/${String(u.name)}`;
}

/** Identity of a live object: `Kind/namespace/name`, or `Kind/name` when cluster-scoped (as `check` names objects). */
export function identityOf(obj: KObject): string {
    const m = record(obj.metadata) ?? {};
    const ns = typeof m.namespace === "string" && m.namespace ? m.namespace : undefined;
    return ns ? `${String(obj.kind)}/${ns}/${String(m.name)}` : `${String(obj.kind)}/${String(m.name)}`;
}

/**
 * The URN prefix of objects read from a live cluster. Not `check`'s manifest prefix: a live object is not
 * known to come from files in Git, so the rules about what must never be committed do not judge it.
 */
export { CLUSTER_URN_PREFIX };

/** The resource the evaluator judges for a live object (type `kubernetes:<group>/<version>:<Kind>`). */
export function clusterResource(obj: KObject): EvalResource {
    const apiVersion = String(obj.apiVersion);
    const slash = apiVersion.lastIndexOf("/");
    const group = slash < 0 ? "core" : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const type = `kubernetes:${group}/${version}:${String(obj.kind)}`;
    const identity = identityOf(obj);
    // Live objects are never changed once read (the cache replaces an object on update): immutable.
    return { type, name: identity, urn: `${CLUSTER_URN_PREFIX}${type}::${identity}`, props: obj, immutable: true };
}

/**
 * True for a binding whose only subjects are the group `system:masters`. Every cluster holds one (the
 * bootstrap `cluster-admin` ClusterRoleBinding); the authorizer grants that group everything whatever the
 * bindings say, and no service account token can join it. The rules count `system:masters` as covering
 * every account (a program that binds a role to it is judged so), which in a live cluster would make the
 * bootstrap binding a finding against every Stack: judged live, such a binding grants nothing, so live
 * state leaves it out. The object under admission is always judged as it is.
 */
export function grantsOnlySystemMasters(o: KObject): boolean {
    if (o.kind !== "ClusterRoleBinding" && o.kind !== "RoleBinding") return false;
    const subjects = o.subjects;
    return (
        Array.isArray(subjects) &&
        subjects.length > 0 &&
        subjects.every((s) => record(s)?.kind === "Group" && record(s)?.name === "system:masters")
    );
}
