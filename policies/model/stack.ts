/**
 * The normalized view of a Pulumi Kubernetes Operator `Stack` custom resource (pulumi.com/v1 and
 * v1alpha1), as the PKO v2 CRD defines it. `stackView()` accepts anything the analyzer can hand a
 * policy and either returns a view or `undefined` when the resource is not a PKO Stack.
 *
 * Every field is read defensively: absent or mistyped fields are `undefined`, values unknown during
 * preview are `UNKNOWN`. Nothing here throws.
 */
import { Obj, Plain, UNKNOWN, Unknown, bool, entries, get, isObject, list, num, plain, str } from "./values";

export const STACK_TYPES = ["kubernetes:pulumi.com/v1:Stack", "kubernetes:pulumi.com/v1alpha1:Stack"] as const;

/** What the analyzer gives a policy about one resource (a subset of ResourceValidationArgs). */
export interface ResourceLike {
    type: string;
    name: string;
    urn?: string;
    props: unknown;
}

/** The kinds of `ResourceRef` PKO supports, plus what we see when the value is not one of them. */
export type RefKind = "Secret" | "Literal" | "Env" | "FS" | "unknown" | "malformed";

/** A credential-bearing or credential-capable reference in a Stack, located by its field path. */
export interface Ref {
    /** Path of the field in the Stack manifest, e.g. `spec.envRefs.PULUMI_ACCESS_TOKEN`. */
    field: string;
    kind: RefKind;
    /** For Secret refs: whether the secret's name and key are present (or unknown). */
    complete: boolean;
    /** Raw value of a Literal ref; never to be printed. */
    literal?: string | Unknown;
}

export interface StackView {
    /** The Pulumi resource name (the one reports use). */
    resourceName: string;
    urn?: string;
    type: string;
    apiVersion: string;
    /** metadata.name of the Kubernetes object. */
    name: string | Unknown | undefined;
    /** metadata.namespace, `undefined` when not set (the provider's default namespace applies). */
    namespace: string | Unknown | undefined;
    labels: Record<string, string | Unknown | undefined> | Unknown;
    annotations: Record<string, string | Unknown | undefined> | Unknown;
    /** The whole spec as plain data (UNKNOWN when the spec itself is unknown). */
    spec: Plain;
    /** spec.stack: the fully qualified Pulumi stack (org/project/stack). */
    stack: string | Unknown | undefined;
    projectRepo: string | Unknown | undefined;
    repoDir: string | Unknown | undefined;
    commit: string | Unknown | undefined;
    branch: string | Unknown | undefined;
    backend: string | Unknown | undefined;
    fluxSource: Plain;
    programRef: Plain;
    destroyOnFinalize: boolean | Unknown | undefined;
    refresh: boolean | Unknown | undefined;
    preview: boolean | Unknown | undefined;
    resyncFrequencySeconds: number | Unknown | undefined;
    serviceAccountName: string | Unknown | undefined;
    workspaceTemplate: Plain;
    environment: Plain;
}

function isStackType(type: string, props: Plain): boolean {
    if ((STACK_TYPES as readonly string[]).includes(type)) {
        return true;
    }
    // A typed wrapper may register under another token; fall back to the object's own GVK.
    if (typeof type === "string" && type.startsWith("kubernetes:")) {
        const apiVersion = get(props, "apiVersion");
        const kind = get(props, "kind");
        return (
            kind === "Stack" && (apiVersion === "pulumi.com/v1" || apiVersion === "pulumi.com/v1alpha1")
        );
    }
    return false;
}

function stringMap(v: Plain): Record<string, string | Unknown | undefined> | Unknown {
    if (v === UNKNOWN) {
        return UNKNOWN;
    }
    const out: Record<string, string | Unknown | undefined> = {};
    for (const [k, val] of entries(v)) {
        out[k] = str(val);
    }
    return out;
}

/** Returns the normalized Stack view of a resource, or undefined when it is not a PKO Stack. */
export function stackView(resource: ResourceLike): StackView | undefined {
    try {
        const type = resource?.type;
        // Only PKO Stack tokens, or Kubernetes tokens that could be a typed wrapper of one (their own
        // GVK decides), are read at all: every other resource is rejected without touching its inputs.
        if (typeof type !== "string" || !type.startsWith("kubernetes:") || (!type.includes("pulumi.com") && !type.endsWith(":Stack"))) {
            return undefined;
        }
        return buildView(resource, plain(resource.props));
    } catch {
        return undefined;
    }
}

function buildView(resource: ResourceLike, props: Plain): StackView | undefined {
    try {
        if (!isStackType(String(resource?.type ?? ""), props)) {
            return undefined;
        }
        const spec = get(props, "spec");
        const s = (...path: string[]) => get(spec, ...path);
        const typeVersion = /pulumi\.com\/(v1alpha1|v1):/.exec(String(resource.type));
        return {
            resourceName: String(resource.name ?? ""),
            urn: typeof resource.urn === "string" ? resource.urn : undefined,
            type: String(resource.type),
            apiVersion: typeVersion ? `pulumi.com/${typeVersion[1]}` : String(str(get(props, "apiVersion")) ?? ""),
            name: str(get(props, "metadata", "name")),
            namespace: str(get(props, "metadata", "namespace")),
            labels: stringMap(get(props, "metadata", "labels")),
            annotations: stringMap(get(props, "metadata", "annotations")),
            spec,
            stack: str(s("stack")),
            projectRepo: str(s("projectRepo")),
            repoDir: str(s("repoDir")),
            commit: str(s("commit")),
            branch: str(s("branch")),
            backend: str(s("backend")),
            fluxSource: s("fluxSource"),
            programRef: s("programRef"),
            destroyOnFinalize: bool(s("destroyOnFinalize")),
            refresh: bool(s("refresh")),
            preview: bool(s("preview")),
            resyncFrequencySeconds: num(s("resyncFrequencySeconds")),
            serviceAccountName: str(s("serviceAccountName")),
            workspaceTemplate: s("workspaceTemplate"),
            environment: s("environment"),
        };
    } catch {
        return undefined;
    }
}

/** Reads a PKO `ResourceRef` ({type, secret|literal|env|filesystem}) found at `field`. */
export function resourceRef(field: string, v: Plain): Ref {
    if (v === UNKNOWN) {
        return { field, kind: "unknown", complete: false };
    }
    if (!isObject(v)) {
        return { field, kind: "malformed", complete: false };
    }
    const type = get(v, "type");
    if (type === UNKNOWN) {
        return { field, kind: "unknown", complete: false };
    }
    switch (type) {
        case "Secret": {
            const name = get(v, "secret", "name");
            const key = get(v, "secret", "key");
            const present = (x: Plain) => x === UNKNOWN || (typeof x === "string" && x.length > 0);
            return { field, kind: "Secret", complete: present(name) && present(key) };
        }
        case "Literal":
            return { field, kind: "Literal", complete: true, literal: str(get(v, "literal", "value")) };
        case "Env":
            return { field, kind: "Env", complete: true };
        case "FS":
            return { field, kind: "FS", complete: true };
        default:
            return { field, kind: "malformed", complete: false };
    }
}

/** The workspace template's pod spec (`spec.workspaceTemplate.spec.podTemplate.spec`). */
export function workspacePodSpec(view: StackView): Plain {
    return get(view.workspaceTemplate, "spec", "podTemplate", "spec");
}

/** Every container of the workspace pod (init containers included), with its field path. */
export function workspaceContainers(view: StackView): { field: string; container: Obj }[] {
    const out: { field: string; container: Obj }[] = [];
    const pod = workspacePodSpec(view);
    for (const kind of ["containers", "initContainers"]) {
        list(get(pod, kind)).forEach((c, i) => {
            if (isObject(c)) {
                out.push({
                    field: `spec.workspaceTemplate.spec.podTemplate.spec.${kind}[${i}]`,
                    container: c,
                });
            }
        });
    }
    return out;
}

/**
 * The service account the Stack's workspace runs as: the workspace template's
 * `spec.serviceAccountName` wins over `spec.serviceAccountName`; `default` when neither is set.
 */
export function effectiveServiceAccount(view: StackView): { name: string | Unknown; source: string } {
    const ws = get(view.workspaceTemplate, "spec", "serviceAccountName");
    if (ws === UNKNOWN || view.workspaceTemplate === UNKNOWN || get(view.workspaceTemplate, "spec") === UNKNOWN) {
        return { name: UNKNOWN, source: "spec.workspaceTemplate.spec.serviceAccountName" };
    }
    if (typeof ws === "string" && ws.length > 0) {
        return { name: ws, source: "spec.workspaceTemplate.spec.serviceAccountName" };
    }
    if (view.serviceAccountName === UNKNOWN || view.spec === UNKNOWN) {
        return { name: UNKNOWN, source: "spec.serviceAccountName" };
    }
    if (typeof view.serviceAccountName === "string" && view.serviceAccountName.length > 0) {
        return { name: view.serviceAccountName, source: "spec.serviceAccountName" };
    }
    return { name: "default", source: "the implicit default service account" };
}

/** Human label of a Stack for messages: the resource name and, when known, its stack. */
export function describeStack(view: StackView): string {
    const target = typeof view.stack === "string" ? ` (stack ${JSON.stringify(view.stack.slice(0, 120))})` : "";
    return `Stack ${JSON.stringify(view.resourceName)}${target}`;
}
