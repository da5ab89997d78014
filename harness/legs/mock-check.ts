/**
 * The Kubernetes provider's Check (pulumi-kubernetes 4.27.0) on wire-form inputs, whose result is what the engine
 * hands to analyzers and what dependent resources read in preview: autonaming, read-only metadata removed, a
 * Secret's `stringData` folded into `data`, the default namespace for namespaced kinds, CRDs remembered.
 */
import * as crypto from "crypto";
import { CrdScopes, isNamespacedKind, rememberCrd } from "./mock-kinds";
import { MockRefusal, Obj, hasUnknown, isObj, isSecret, makeSecret, unwrap } from "./mock-wire";

/** The annotation the provider puts on every object it named. */
export const AUTONAMED_ANNOTATION = "pulumi.com/autonamed";

export interface CheckContext {
    crds: CrdScopes;
    /** The provider's default namespace ("" when it has none: then nothing is defaulted). */
    defaultNamespace: string;
    /** Random bytes for autonaming; injectable for tests. */
    random?: () => string;
}

const READ_ONLY_METADATA = [
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "generation",
    "managedFields",
    "resourceVersion",
    "uid",
];

/** `kubernetes:<group>/<version>:<Kind>` → apiVersion and kind; undefined for other types. */
export function kubernetesKind(type: string): { apiVersion: string; kind: string } | undefined {
    const m = /^kubernetes:([^:]+):([^:]+)$/.exec(type);
    if (!m || !m[1].includes("/")) return undefined;
    const [group, version] = m[1].split("/");
    if (group === "yaml" || group === "helm.sh" || group === "kustomize") return undefined;
    return { apiVersion: group === "core" ? version : `${group}/${version}`, kind: m[2] };
}

/**
 * The provider's Check of a Kubernetes object registered as `name` (the URN's name), on wire-form inputs.
 * Returns the checked inputs; may throw MockRefusal where the real preview fails.
 */
export function checkKubernetesInputs(name: string, type: string, inputs: Obj, ctx: CheckContext): Obj {
    const out = JSON.parse(JSON.stringify(inputs)) as Obj;
    const ident = kubernetesKind(type);
    const apiVersion = typeof out.apiVersion === "string" ? out.apiVersion : (ident?.apiVersion ?? "");
    const kind = typeof out.kind === "string" ? out.kind : (ident?.kind ?? "");
    if (out.metadata === undefined || out.metadata === null) out.metadata = {};
    const meta = out.metadata;
    if (!isObj(meta) || isSecret(meta)) {
        // An unknown or secret metadata: the provider cannot look inside either; nothing to add.
        return out;
    }
    // Read-only fields are dropped.
    for (const f of READ_ONLY_METADATA) delete meta[f];
    // Autonaming: no name (known or unknown) and no generateName.
    const named = meta.name !== undefined && meta.name !== null && meta.name !== "";
    const generate = meta.generateName !== undefined && meta.generateName !== null && meta.generateName !== "";
    if (!named && generate) {
        throw new MockRefusal(
            "the `.metadata.generateName` field is not supported in YAML rendering mode (the real leg's provider mode)",
        );
    }
    if (!named) {
        const suffix = (ctx.random ?? (() => crypto.randomBytes(4).toString("hex")))();
        meta.name = `${name}-${suffix}`;
        const annotations = isObj(meta.annotations) && !isSecret(meta.annotations) ? meta.annotations : {};
        annotations[AUTONAMED_ANNOTATION] = "true";
        meta.annotations = annotations;
    }
    // Built-in kinds go through the typed API structs and back, which drops empty `omitempty` fields; the
    // one such field programs commonly set is an RBAC subject's `apiGroup: ""` (a ServiceAccount's).
    if (apiVersion.startsWith("rbac.authorization.k8s.io/") && !hasUnknown(out) && Array.isArray(out.subjects)) {
        for (const subject of out.subjects) if (isObj(subject) && subject.apiGroup === "") delete subject.apiGroup;
    }
    // Secret: stringData is folded into base64 data when the object holds no unknown value.
    if (apiVersion === "v1" && kind === "Secret" && !hasUnknown(out)) {
        foldStringData(out);
    }
    // The default namespace for namespaced kinds without one.
    if (ctx.defaultNamespace && (meta.namespace === undefined || meta.namespace === null || meta.namespace === "")) {
        let namespaced = true; // the provider assumes namespaced when it cannot tell
        try {
            namespaced = isNamespacedKind(apiVersion, kind, ctx.crds);
        } catch (e) {
            if (!(e instanceof MockRefusal)) throw e;
        }
        if (namespaced) meta.namespace = ctx.defaultNamespace;
    }
    if (kind === "CustomResourceDefinition") rememberCrd(ctx.crds, out);
    return out;
}

function foldStringData(secret: Obj): void {
    const sd = secret.stringData;
    const plainSd = sd === undefined ? undefined : unwrap(sd);
    if (
        !isObj(plainSd) ||
        Object.keys(plainSd).length === 0 ||
        Object.values(plainSd).some((v) => typeof v !== "string")
    ) {
        return;
    }
    const data: Obj = isObj(secret.data) && !isSecret(secret.data) ? secret.data : {};
    const sdIsSecret = isSecret(sd);
    const sdObj = (sdIsSecret ? (sd as Obj).value : sd) as Obj;
    for (const [k, v] of Object.entries(sdObj)) {
        const encoded = Buffer.from(String(unwrap(v)), "utf8").toString("base64");
        data[k] = isSecret(v) ? makeSecret(encoded) : encoded;
    }
    secret.data = sdIsSecret ? makeSecret(data) : data;
    delete secret.stringData;
}
