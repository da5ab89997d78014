/**
 * RBAC objects as declared in a Pulumi program (what is resolved: see ./grants.ts): roles, bindings and
 * their subjects, the built-in roles, server-side-apply patches joined to the objects they patch, and the
 * shapes of grants. Three-valued where preview leaves values unknown: "yes", "no", "maybe".
 */
import { ResourceLike, resourceProps } from "../stack";
import { Plain, UNKNOWN, Unknown, entries, get, isObject, list, push, str } from "../values";
import { rulesPowers } from "../permissions";

export type Tri = "yes" | "no" | "maybe";

export const RBAC_TYPE =
    /^kubernetes:rbac\.authorization\.k8s\.io\/(v1|v1beta1|v1alpha1):(ClusterRoleBinding|RoleBinding|ClusterRole|Role)(Patch)?$/;

/** The namespace a namespaced object lands in when metadata.namespace is not set. */
export const DEFAULT_NAMESPACE = "default";

export type Labels = Record<string, string | Unknown | undefined> | Unknown;

export interface Role {
    kind: "ClusterRole" | "Role";
    name: string | Unknown | undefined;
    namespace: string | Unknown | undefined;
    /** Whether its own rules grant every verb on every resource (`*` on `*`, however spelled; see permissions.ts). */
    wildcard: Tri;
    /** Whether its own rules hold a privilege-escalation path (permissions.ts), and which. */
    escalation: Tri;
    escalationWhat?: string;
    labels: Labels;
    /** True when the object may carry labels besides `labels` (a patch of a role the program does not declare). */
    labelsOpen: boolean;
    /** `aggregationRule.clusterRoleSelectors`: undefined when the role does not aggregate. */
    selectors?: Plain[] | Unknown;
    /** The Pulumi resource it comes from (for a patched role: the patch). */
    resourceName: string;
    /** Set on the merged view of a role and its patches: the patches' resource names. */
    patches?: string[];
    /** One of the cluster's bootstrap roles, not declared by the program. */
    builtIn?: boolean;
}

export interface Subject {
    kind: string | Unknown | undefined;
    name: string | Unknown | undefined;
    namespace: string | Unknown | undefined;
}

export interface Binding {
    kind: "ClusterRoleBinding" | "RoleBinding";
    resourceName: string;
    urn?: string;
    namespace: string | Unknown | undefined;
    roleKind: string | Unknown | undefined;
    roleName: string | Unknown | undefined;
    /** UNKNOWN when the whole subject list is unknown. */
    subjects: Subject[] | Unknown;
    /** For a patch (merged with its target): the target's Kubernetes name and the program's binding it patches, if any. */
    patch?: { target: string | Unknown | undefined; base?: Binding; roleOutsideProgram?: boolean };
}

export interface ServiceAccountRef {
    name: string | Unknown;
    namespace: string | Unknown;
}

export interface RbacModel {
    roles: Role[];
    bindings: Binding[];
    /** Roles by `${kind}/${name}` (program roles, their patched views and built-ins), and those whose name is unknown. */
    rolesByName: Map<string, Role[]>;
    rolesWithUnknownName: Role[];
    /** Every ClusterRole an aggregation selector may pick (program, patched and built-in ones). */
    clusterRoles: Role[];
    /** Resolved roles and bindings, filled as rules ask (one model per evaluation). */
    grants: Map<Role, RoleGrant>;
    adminGrants: Map<Binding, AdminGrant>;
}

export function and(a: Tri, b: Tri): Tri {
    if (a === "no" || b === "no") return "no";
    return a === "yes" && b === "yes" ? "yes" : "maybe";
}

export function or(values: Tri[]): Tri {
    if (values.includes("yes")) return "yes";
    return values.includes("maybe") ? "maybe" : "no";
}

export const RANK: Record<Tri, number> = { no: 0, maybe: 1, yes: 2 };

/** What a role's rules allow that the rules judge: everything, or escalation (and what). */
export type Powers = Pick<Role, "wildcard" | "escalation" | "escalationWhat">;

export function powersOf(rules: Plain): Powers {
    const p = rulesPowers(rules);
    return {
        wildcard: p.all,
        escalation: p.escalation,
        ...(p.escalationWhat ? { escalationWhat: p.escalationWhat } : {}),
    };
}

/** A name that identifies nothing: absent or empty (Kubernetes rejects both; in preview they stand for a value not yet known). */
export function missing(v: string | Unknown | undefined): v is undefined | "" {
    return v === undefined || v === "";
}

export function labelsOf(v: Plain): Labels {
    if (v === UNKNOWN) return UNKNOWN;
    const out: Record<string, string | Unknown | undefined> = {};
    for (const [k, val] of entries(v)) out[k] = str(val);
    return out;
}

export function selectorsOf(props: Plain): Plain[] | Unknown | undefined {
    const rule = get(props, "aggregationRule");
    if (rule === undefined || rule === null) return undefined;
    const selectors = get(rule, "clusterRoleSelectors");
    if (selectors === UNKNOWN) return UNKNOWN;
    return list(selectors);
}

export const BOOTSTRAP = { "kubernetes.io/bootstrapping": "rbac-defaults" };
export const AGG = "rbac.authorization.k8s.io/aggregate-to-";

/**
 * The cluster's bootstrap ClusterRoles that aggregation can reach or that aggregate themselves, with the
 * labels and selectors Kubernetes gives them (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
 * Their own rules are not wildcard, except cluster-admin's.
 */
export function builtInRoles(): Role[] {
    const role = (name: string, wildcard: Tri, labels: Record<string, string>, selectorLabel?: string): Role => ({
        kind: "ClusterRole",
        name,
        namespace: undefined,
        wildcard,
        // admin and edit can create pods and impersonate service accounts (bootstrappolicy's aggregate-to-edit rules).
        ...(name === "view"
            ? { escalation: "no" }
            : {
                  escalation: "yes",
                  escalationWhat:
                      name === "cluster-admin" ? "do anything" : "create pods and impersonate service accounts",
              }),
        labels: { ...BOOTSTRAP, ...labels },
        labelsOpen: false,
        ...(selectorLabel ? { selectors: [{ matchLabels: { [selectorLabel]: "true" } }] } : {}),
        resourceName: name,
        builtIn: true,
    });
    return [
        role("cluster-admin", "yes", {}),
        role("admin", "no", {}, `${AGG}admin`),
        role("edit", "no", { [`${AGG}admin`]: "true" }, `${AGG}edit`),
        role("view", "no", { [`${AGG}edit`]: "true" }, `${AGG}view`),
    ];
}

export interface RawPatch {
    resource: ResourceLike;
    kind: string;
    props: Plain;
}

export function objectKey(kind: string, name: string, namespace: string | undefined): string {
    return kind === "Role" || kind === "RoleBinding"
        ? `${kind}/${namespace ?? DEFAULT_NAMESPACE}/${name}`
        : `${kind}/${name}`;
}

export function readSubjects(raw: Plain): Subject[] | Unknown {
    if (raw === UNKNOWN) return UNKNOWN;
    return list(raw).map((s) =>
        s === UNKNOWN
            ? { kind: UNKNOWN, name: UNKNOWN, namespace: UNKNOWN }
            : { kind: str(get(s, "kind")), name: str(get(s, "name")), namespace: str(get(s, "namespace")) },
    );
}

export function has(props: Plain, key: string): boolean {
    return props === UNKNOWN || (isObject(props) && props[key] !== undefined);
}

/**
 * The RBAC view of a program's resources (`propsOf` reads a resource's properties as plain data: views.ts). Its
 * grants are resolved as rules ask, and the answers kept in it: every rule that reads one model gets the same.
 */
export function rbacModel(
    resources: ResourceLike[],
    propsOf: (resource: ResourceLike) => Plain = resourceProps,
    powersOfRules: (rules: Plain) => Powers = powersOf,
): RbacModel {
    const roles: Role[] = [];
    const bindings: Binding[] = [];
    const rolePatches: RawPatch[] = [];
    const bindingPatches: RawPatch[] = [];
    const declaredRoles = new Map<string, Role>();
    const declaredBindings = new Map<string, Binding>();
    for (const r of resources) {
        const m = RBAC_TYPE.exec(String(r?.type ?? ""));
        if (!m) continue;
        const props = propsOf(r);
        const kind = m[2];
        if (m[3]) {
            (kind === "ClusterRole" || kind === "Role" ? rolePatches : bindingPatches).push({
                resource: r,
                kind,
                props,
            });
            continue;
        }
        const name = str(get(props, "metadata", "name"));
        const namespace = str(get(props, "metadata", "namespace"));
        if (kind === "ClusterRole" || kind === "Role") {
            const role: Role = {
                kind,
                name,
                namespace,
                ...powersOfRules(get(props, "rules")),
                labels: labelsOf(get(props, "metadata", "labels")),
                labelsOpen: false,
                resourceName: String(r.name ?? ""),
            };
            const selectors = kind === "ClusterRole" ? selectorsOf(props) : undefined;
            if (selectors !== undefined) role.selectors = selectors;
            roles.push(role);
            if (typeof name === "string" && name !== "" && (namespace === undefined || typeof namespace === "string")) {
                declaredRoles.set(objectKey(kind, name, namespace), role);
            }
            continue;
        }
        const binding: Binding = {
            kind: kind as Binding["kind"],
            resourceName: String(r.name ?? ""),
            urn: typeof r.urn === "string" ? r.urn : undefined,
            namespace,
            roleKind: str(get(props, "roleRef", "kind")),
            roleName: str(get(props, "roleRef", "name")),
            subjects: readSubjects(get(props, "subjects")),
        };
        bindings.push(binding);
        if (typeof name === "string" && name !== "" && (namespace === undefined || typeof namespace === "string")) {
            declaredBindings.set(objectKey(kind, name, namespace), binding);
        }
    }
    // The cluster's bootstrap roles the program does not redeclare.
    const builtIns = builtInRoles().filter(
        (b) => !declaredRoles.has(objectKey("ClusterRole", b.name as string, undefined)),
    );
    const builtInByName = new Map(builtIns.map((b) => [b.name as string, b]));
    roles.push(...mergeRolePatches(rolePatches, declaredRoles, builtInByName));
    for (const p of bindingPatches) bindings.push(mergeBindingPatch(p, declaredBindings));
    const all = [...roles, ...builtIns];
    const rolesByName = new Map<string, Role[]>();
    const rolesWithUnknownName: Role[] = [];
    for (const role of all) {
        if (typeof role.name === "string" && role.name !== "") {
            push(rolesByName, `${role.kind}/${role.name}`, role);
        } else {
            // Unknown or missing (an autonamed role under mocks): it may be any role.
            rolesWithUnknownName.push(role);
        }
    }
    return {
        roles,
        bindings,
        rolesByName,
        rolesWithUnknownName,
        clusterRoles: all.filter((r) => r.kind === "ClusterRole"),
        grants: new Map(),
        adminGrants: new Map(),
    };
}

/**
 * The merged view of each patched role: its target (declared, built-in, or nothing the program knows)
 * with every patch of that target applied. Two patches that set the same list are both applied as the
 * union of their lists (either may win); two that set the same label to different values leave it unknown.
 */
export function mergeRolePatches(
    patches: RawPatch[],
    declared: Map<string, Role>,
    builtIns: Map<string, Role>,
): Role[] {
    const groups = new Map<string, RawPatch[]>();
    const unkeyed: RawPatch[] = [];
    for (const p of patches) {
        const name = str(get(p.props, "metadata", "name"));
        const namespace = str(get(p.props, "metadata", "namespace"));
        if (typeof name === "string" && name !== "" && (namespace === undefined || typeof namespace === "string")) {
            push(groups, objectKey(p.kind, name, namespace), p);
        } else {
            unkeyed.push(p);
        }
    }
    const out: Role[] = [];
    for (const [key, group] of groups) {
        const name = str(get(group[0].props, "metadata", "name"));
        const base =
            declared.get(key) ??
            (group[0].kind === "ClusterRole" && typeof name === "string" ? builtIns.get(name) : undefined);
        out.push(mergeRole(group, base));
    }
    for (const p of unkeyed) out.push(mergeRole([p], undefined));
    return out;
}

export function mergeRole(group: RawPatch[], base: Role | undefined): Role {
    const first = group[0];
    const kind = first.kind as Role["kind"];
    let labels: Labels = base ? base.labels : {};
    const setBy = new Map<string, string | Unknown | undefined>();
    let wildcard: Tri = base ? base.wildcard : "no";
    let escalation: Tri = base ? base.escalation : "no";
    let escalationWhat = base?.escalationWhat;
    let rulesSet = false;
    let selectors: Plain[] | Unknown | undefined = base?.selectors;
    let selectorsSet = false;
    for (const p of group) {
        const patchLabels = get(p.props, "metadata", "labels");
        if (patchLabels === UNKNOWN || get(p.props, "metadata") === UNKNOWN || p.props === UNKNOWN) {
            labels = UNKNOWN;
        } else if (labels !== UNKNOWN) {
            const next = { ...labels };
            for (const [k, v] of Object.entries(
                labelsOf(patchLabels) as Record<string, string | Unknown | undefined>,
            )) {
                next[k] = setBy.has(k) && setBy.get(k) !== v ? UNKNOWN : v;
                setBy.set(k, v);
            }
            labels = next;
        }
        if (has(p.props, "rules")) {
            const w = powersOf(get(p.props, "rules"));
            wildcard = rulesSet ? or([wildcard, w.wildcard]) : w.wildcard;
            const e = rulesSet ? or([escalation, w.escalation]) : w.escalation;
            if (e !== escalation || !rulesSet)
                escalationWhat =
                    RANK[w.escalation] >= RANK[escalation] || !rulesSet ? w.escalationWhat : escalationWhat;
            escalation = e;
            rulesSet = true;
        }
        if (kind === "ClusterRole" && has(p.props, "aggregationRule")) {
            const s = p.props === UNKNOWN ? UNKNOWN : selectorsOf(p.props);
            if (s !== undefined) {
                selectors =
                    selectorsSet && selectors !== undefined
                        ? selectors === UNKNOWN || s === UNKNOWN
                            ? UNKNOWN
                            : [...selectors, ...s]
                        : s;
                selectorsSet = true;
            }
        }
    }
    const role: Role = {
        kind,
        name: str(get(first.props, "metadata", "name")),
        namespace: str(get(first.props, "metadata", "namespace")),
        wildcard,
        escalation,
        ...(escalation !== "no" && escalationWhat ? { escalationWhat } : {}),
        labels,
        labelsOpen: base === undefined,
        resourceName: String(group[group.length - 1].resource.name ?? ""),
        patches: group.map((p) => String(p.resource.name ?? "")),
    };
    if (selectors !== undefined) role.selectors = selectors;
    return role;
}

/** A binding patch judged as the merged object: its target's fields, overridden by the fields the patch sets. */
export function mergeBindingPatch(p: RawPatch, declared: Map<string, Binding>): Binding {
    const name = str(get(p.props, "metadata", "name"));
    const namespace = str(get(p.props, "metadata", "namespace"));
    const base =
        typeof name === "string" && name !== "" && (namespace === undefined || typeof namespace === "string")
            ? declared.get(objectKey(p.kind, name, namespace))
            : undefined;
    const setsRoleRef = has(p.props, "roleRef");
    const setsSubjects = has(p.props, "subjects");
    const subjects: Subject[] | Unknown = setsSubjects
        ? readSubjects(get(p.props, "subjects"))
        : base
          ? base.subjects
          : [];
    // roleRef is atomic: the patch's whole, else the target's; a target outside the program has a role we cannot see.
    const roleKind = setsRoleRef ? str(get(p.props, "roleRef", "kind")) : base ? base.roleKind : UNKNOWN;
    const roleName = setsRoleRef ? str(get(p.props, "roleRef", "name")) : base ? base.roleName : UNKNOWN;
    return {
        kind: p.kind as Binding["kind"],
        resourceName: String(p.resource.name ?? ""),
        urn: typeof p.resource.urn === "string" ? p.resource.urn : undefined,
        namespace,
        roleKind,
        roleName,
        subjects,
        patch: { target: name, base, ...(!setsRoleRef && !base ? { roleOutsideProgram: true } : {}) },
    };
}

export interface RoleGrant {
    wildcard: Tri;
    /** The role whose own rules decide it (the role itself, or one it aggregates). */
    source?: Role;
    escalation: Tri;
    escalationSource?: Role;
    /** Program-declared aggregating ClusterRoles reached: their selectors may match roles outside the program. */
    openAggregators: Role[];
}

/** How a binding's role grants admin: the verdict and the role that decides it. */
export interface AdminGrant {
    admin: Tri;
    /** The matching role (for a wildcard verdict). */
    role?: Role;
    grant?: RoleGrant;
    /** Set when the verdict comes from an escalation path (permissions.ts), not from `*` on `*`. */
    escalation?: string;
    /** Why it is "maybe", for messages. */
    unknown?: string;
    /** Program aggregating roles the binding's role reaches (their selectors may match roles outside the program). */
    openAggregators: Role[];
}
