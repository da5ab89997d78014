/**
 * The normalized view of a Pulumi Kubernetes Operator `Stack` custom resource (pulumi.com/v1 and
 * v1alpha1), as the PKO v2 CRD defines it. Whether a resource is a Stack is decided on its type token and
 * GVK, never on an error; patches are joined to their Stack (`stackPatches()`). Unknown values are `UNKNOWN`;
 * nothing here catches, so an input that throws reaches the rule wrappers (policy.ts), which fail closed.
 */
import { Obj, Plain, UNKNOWN, Unknown, bool, entries, get, isObject, list, num, plain, str } from "./values";

export const STACK_TYPES = ["kubernetes:pulumi.com/v1:Stack", "kubernetes:pulumi.com/v1alpha1:Stack"] as const;
export const STACK_PATCH_TYPES = [
    "kubernetes:pulumi.com/v1:StackPatch",
    "kubernetes:pulumi.com/v1alpha1:StackPatch",
] as const;

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
    /** How messages name it; set for the merged views of patches (see `stackPatches`). */
    label?: string;
    /**
     * Set when the view is a patch of a Stack the program does not declare: the fields the patch does
     * not set are not known, so whether the Stack is production is unknown (this says why).
     */
    undeclaredTarget?: string;
    urn?: string;
    type: string;
    apiVersion: string;
    /** metadata.name of the Kubernetes object. */
    name: string | Unknown | undefined;
    /** metadata.namespace, `undefined` when not set (the provider's default namespace applies). */
    namespace: string | Unknown | undefined;
    labels: Record<string, string | Unknown | undefined> | Unknown;
    annotations: Record<string, string | Unknown | undefined> | Unknown;
    /** The whole object as plain data (apiVersion, kind, metadata, spec). */
    object: Plain;
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

/** Whether a type token and GVK are a PKO Stack, a patch of one, or neither. */
function stackKind(type: string, props: Plain): "Stack" | "StackPatch" | undefined {
    if ((STACK_TYPES as readonly string[]).includes(type)) return "Stack";
    if ((STACK_PATCH_TYPES as readonly string[]).includes(type)) return "StackPatch";
    // A typed wrapper may register under another token; fall back to the object's own GVK.
    if (type.startsWith("kubernetes:")) {
        const apiVersion = get(props, "apiVersion");
        const kind = get(props, "kind");
        if (kind === "Stack" && (apiVersion === "pulumi.com/v1" || apiVersion === "pulumi.com/v1alpha1")) {
            return type.endsWith("Patch") ? "StackPatch" : "Stack";
        }
    }
    return undefined;
}

/** Only PKO tokens, or Kubernetes tokens that could be a typed wrapper of one, are read at all. */
function mayBeStack(type: unknown): type is string {
    return (
        typeof type === "string" &&
        type.startsWith("kubernetes:") &&
        (type.includes("pulumi.com") || type.endsWith(":Stack") || type.endsWith(":StackPatch"))
    );
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
    return kindedView(resource, "Stack");
}

/** The view of a patch of a Stack (its own fields only), or undefined when it is not one. */
export function stackPatchView(resource: ResourceLike): StackView | undefined {
    return kindedView(resource, "StackPatch");
}

/** A resource's properties as plain data (values.ts `plain`). */
export function resourceProps(resource: ResourceLike): Plain {
    return plain(resource.props);
}

/** What a resource is to the functions below: a Stack, a patch of one, or neither (the kind asked for or undefined). */
export type ViewOf = (resource: ResourceLike, wanted: "Stack" | "StackPatch") => StackView | undefined;

/**
 * The view of a resource of the `wanted` kind, or undefined. Its properties (read through `propsOf`) are read only
 * when its type token says it may be a Stack.
 */
export function kindedView(
    resource: ResourceLike,
    wanted: "Stack" | "StackPatch",
    propsOf: (resource: ResourceLike) => Plain = resourceProps,
): StackView | undefined {
    const type = resource.type;
    if (!mayBeStack(type)) return undefined;
    const props = propsOf(resource);
    return stackKind(type, props) === wanted ? buildView(resource, props) : undefined;
}

function buildView(resource: { type: string; name: string; urn?: string }, props: Plain): StackView {
    const spec = get(props, "spec");
    const s = (...path: string[]) => get(spec, ...path);
    const typeVersion = /pulumi\.com\/(v1alpha1|v1):/.exec(resource.type);
    return {
        resourceName: String(resource.name ?? ""),
        urn: typeof resource.urn === "string" ? resource.urn : undefined,
        type: resource.type,
        apiVersion: typeVersion ? `pulumi.com/${typeVersion[1]}` : String(str(get(props, "apiVersion")) ?? ""),
        name: str(get(props, "metadata", "name")),
        namespace: str(get(props, "metadata", "namespace")),
        labels: stringMap(get(props, "metadata", "labels")),
        annotations: stringMap(get(props, "metadata", "annotations")),
        object: props,
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
}

/**
 * Applies a patch to an object the way server-side apply merges a patch into a custom resource:
 * fields the patch sets override, maps and nested objects merge field by field, a list of named
 * objects (containers, env, volumes) merges by `name`, any other list is replaced whole, and `null`
 * removes a field. A value unknown during preview on either side makes the result unknown.
 */
export function mergePatch(base: Plain, patch: Plain): Plain {
    if (patch === undefined) return base;
    if (patch === UNKNOWN) return UNKNOWN;
    if (isObject(patch)) {
        if (base === UNKNOWN) return UNKNOWN;
        const out: Obj = isObject(base) ? { ...base } : {};
        for (const [k, v] of Object.entries(patch)) {
            if (v === null) delete out[k];
            else if (v !== undefined) out[k] = mergePatch(out[k], v);
        }
        return out;
    }
    if (Array.isArray(patch) && Array.isArray(base) && isNamedList(patch) && isNamedList(base)) {
        const out = [...base];
        for (const item of patch) {
            const at = out.findIndex((b) => get(b, "name") === get(item, "name"));
            if (at >= 0) out[at] = mergePatch(out[at], item);
            else out.push(item);
        }
        return out;
    }
    return patch;
}

function isNamedList(items: Plain[]): boolean {
    return items.length > 0 && items.every((e) => isObject(e) && typeof e.name === "string");
}

/** A patch of a Stack joined to the Stack it patches, with the Stack before and after the patch. */
export interface JoinedPatch {
    patch: StackView;
    /** The program's Stack it patches; undefined when the program does not declare it (or cannot say). */
    target?: StackView;
    /** The Stack as earlier patches left it (the declared Stack, or only the patch's identity). */
    before: StackView;
    /** The Stack with this patch applied. */
    after: StackView;
}

/** The namespace a Stack or patch without metadata.namespace lands in. */
const DEFAULT_NS = "default";

function key(view: StackView): string | undefined {
    if (typeof view.name !== "string" || view.namespace === UNKNOWN) return undefined;
    return `${view.namespace ?? DEFAULT_NS}/${view.name}`;
}

/**
 * Every patch of a Stack in the program, in program order, joined to the program's Stack of the same
 * name and namespace (several patches of one Stack apply in order). A patch whose target is not
 * declared, or whose name or namespace is unknown, is judged on its own fields with production
 * unknown. `viewOf` gives each resource's view (views.ts).
 */
export function stackPatches(resources: ResourceLike[], viewOf: ViewOf = kindedView): JoinedPatch[] {
    // Most programs patch no Stack: then no view is needed (a patch's type token says it may be one).
    if (!resources.some((r) => mayBePatch(r.type))) return [];
    const stacks = new Map<string, StackView>();
    const patches: StackView[] = [];
    for (const r of resources) {
        const stack = viewOf(r, "Stack");
        if (stack) {
            const k = key(stack);
            if (k !== undefined && !stacks.has(k)) stacks.set(k, stack);
            continue;
        }
        const patch = viewOf(r, "StackPatch");
        if (patch) patches.push(patch);
    }
    return joinPatches(stacks, patches);
}

/** Whether a resource's type token allows it to be a Stack patch (stackKind's rule, before reading any property). */
function mayBePatch(type: unknown): boolean {
    return mayBeStack(type) && ((STACK_PATCH_TYPES as readonly string[]).includes(type) || type.endsWith("Patch"));
}

/** Each patch joined to the Stack of its name and namespace (`stacks`: the first Stack of each). */
function joinPatches(stacks: Map<string, StackView>, patches: StackView[]): JoinedPatch[] {
    const current = new Map<string, Obj>();
    const out: JoinedPatch[] = [];
    for (const patch of patches) {
        const k = key(patch);
        const target = k === undefined ? undefined : stacks.get(k);
        const patchProps = patch.object;
        const undeclared = target
            ? undefined
            : k === undefined
              ? "the name or namespace of the Stack it patches is unknown during preview, so whether that Stack is production is unknown"
              : `the Stack it patches (${k}) is not declared in this program, so whether it is production is unknown`;
        const beforeProps: Obj =
            (k !== undefined ? current.get(k) : undefined) ??
            (target && isObject(target.object)
                ? target.object
                : {
                      apiVersion: patch.apiVersion,
                      kind: "Stack",
                      metadata: { name: patch.name ?? null, namespace: patch.namespace ?? null },
                  });
        const merged = mergePatch(beforeProps, patchProps);
        // A patch whose whole object is unknown leaves nothing known but the identity it was joined on.
        const afterProps: Obj = isObject(merged) ? merged : { ...beforeProps, spec: UNKNOWN };
        if (k !== undefined) current.set(k, afterProps);
        const shape = {
            type: target?.type ?? patch.type.replace(/Patch$/, ""),
            name: patch.resourceName,
            urn: patch.urn,
        };
        const after = buildView(shape, afterProps);
        const label = `StackPatch ${JSON.stringify(patch.resourceName)} of ${target ? `Stack ${JSON.stringify(target.resourceName)}` : `Stack ${typeof patch.name === "string" ? JSON.stringify(patch.name) : "<unknown>"}`}${typeof after.stack === "string" ? ` (stack ${JSON.stringify(after.stack.slice(0, 120))})` : ""}`;
        after.label = label;
        after.undeclaredTarget = undeclared;
        const before = buildView(shape, beforeProps);
        before.label = label;
        before.undeclaredTarget = undeclared;
        out.push({ patch, target, before, after });
    }
    return out;
}

/** A Stack of the program as its patches leave it (`patchedStacks`). */
export interface PatchedStack {
    /** The Stack after its patches (the declared Stack's own view when nothing patches it). */
    view: StackView;
    /** The declared Stack; undefined for a patched Stack the program does not declare. */
    stack?: StackView;
    /** The patches of it, in program order. */
    patchedBy: StackView[];
}

/**
 * The program's Stacks as they will be after every patch: each declared Stack merged with its patches
 * (in program order; `patchedBy` lists them), then a view per patched Stack the program does not declare
 * (its `undeclaredTarget` says why production is unknown). Rules over the whole program (RBAC, Argo CD)
 * read these instead of the bare Stacks so that a patch cannot change a Stack behind their back. `viewOf` gives
 * each resource's view and `joined` is `stackPatches` of the same resources (views.ts).
 */
export function patchedStacks(
    resources: ResourceLike[],
    viewOf: ViewOf = kindedView,
    joined: JoinedPatch[] = stackPatches(resources, viewOf),
): PatchedStack[] {
    const last = new Map<string, { after: StackView; patches: StackView[]; declared: boolean }>();
    joined.forEach((j, i) => {
        const k = key(j.patch) ?? `#${i}`;
        const prev = last.get(k);
        last.set(k, { after: j.after, patches: [...(prev?.patches ?? []), j.patch], declared: j.target !== undefined });
    });
    const out: PatchedStack[] = [];
    const used = new Set<string>();
    for (const r of resources) {
        const stack = viewOf(r, "Stack");
        if (!stack) continue;
        const k = key(stack);
        // Patches join the first Stack of a name and namespace (as stackPatches does).
        const p = k !== undefined && !used.has(k) ? last.get(k) : undefined;
        if (k !== undefined) used.add(k);
        out.push(p ? { view: p.after, stack, patchedBy: p.patches } : { view: stack, stack, patchedBy: [] });
    }
    for (const p of last.values()) if (!p.declared) out.push({ view: p.after, patchedBy: p.patches });
    return out;
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

/** Human label of a Stack for messages: the resource name and, when known, its stack. */
export function describeStack(view: StackView): string {
    if (view.label !== undefined) return view.label;
    const target = typeof view.stack === "string" ? ` (stack ${JSON.stringify(view.stack.slice(0, 120))})` : "";
    return `Stack ${JSON.stringify(view.resourceName)}${target}`;
}

/** Names of the Secrets a Stack reads (envRefs, secretsRef, gitAuth refs, legacy fields), each once. */
export function secretsRead(view: StackView): string[] {
    const names = new Set<string>();
    const add = (v: Plain) => {
        if (typeof v === "string" && v.length > 0) names.add(v);
    };
    const addRef = (ref: Plain) => {
        if (get(ref, "type") === "Secret") add(get(ref, "secret", "name"));
    };
    for (const [, ref] of entries(get(view.spec, "envRefs"))) addRef(ref);
    for (const [, ref] of entries(get(view.spec, "secretsRef"))) addRef(ref);
    const gitAuth = get(view.spec, "gitAuth");
    for (const path of [
        ["accessToken"],
        ["sshAuth", "sshPrivateKey"],
        ["sshAuth", "password"],
        ["basicAuth", "userName"],
        ["basicAuth", "password"],
        ["githubApp", "appID"],
        ["githubApp", "installationID"],
        ["githubApp", "privateKey"],
    ]) {
        addRef(get(gitAuth, ...path));
    }
    add(get(view.spec, "accessTokenSecret"));
    add(get(view.spec, "gitAuthSecret"));
    for (const s of list(get(view.spec, "envSecrets"))) add(s);
    return [...names];
}
