/**
 * Kubernetes RBAC as declared in a Pulumi program: roles, bindings, their subjects, and whether a
 * binding grants cluster-admin (or a wildcard-equivalent role) to a given service account.
 * Three-valued where preview leaves values unknown: "yes", "no", "maybe".
 *
 * Beyond plain roles and bindings the model resolves:
 * - aggregated ClusterRoles (`aggregationRule.clusterRoleSelectors`): a role gets the rules of every
 *   ClusterRole whose labels match one of its selectors, transitively and cycle-safe, as the
 *   Kubernetes aggregation controller does (which skips the aggregating role itself). The built-in
 *   `cluster-admin`, `admin`, `edit` and `view` take part with their bootstrap labels and selectors
 *   unless the program declares a ClusterRole of that name;
 * - server-side-apply patches (`...Patch` types): a patch is joined to the program's object of the same
 *   kind, name and namespace (or to the built-in role of that name) and judged as the merged object.
 *   `subjects`, `rules` and `clusterRoleSelectors` are atomic lists and `roleRef` an atomic struct in
 *   server-side apply (the Kubernetes API types carry no list-type markers, so lists are atomic, and
 *   `RoleRef`/`Subject` are `+structType=atomic`): a patch that sets one replaces it whole. Labels are a
 *   map and merge key by key. A field a patch does not set keeps the object's value; for an object the
 *   program does not declare that value is the cluster's: roles keep no rules the program knows of
 *   (as any role outside the program), their other labels are unknown, and a binding patch that sets
 *   subjects without `roleRef` binds them to a role the program cannot see (unknown).
 * A subject, role reference or role whose name is missing or unknown during preview is never taken for
 * a concrete object: it may be any (fail closed).
 */
import { ResourceLike, StackView, effectiveServiceAccount, patchedStacks, workspaceAccount } from "./stack";
import { Plain, UNKNOWN, Unknown, entries, get, isObject, list, plain, str } from "./values";
import { escalationScope, rulesPowers } from "./permissions";

export type Tri = "yes" | "no" | "maybe";

const RBAC_TYPE = /^kubernetes:rbac\.authorization\.k8s\.io\/(v1|v1beta1|v1alpha1):(ClusterRoleBinding|RoleBinding|ClusterRole|Role)(Patch)?$/;

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

function and(a: Tri, b: Tri): Tri {
    if (a === "no" || b === "no") return "no";
    return a === "yes" && b === "yes" ? "yes" : "maybe";
}

function or(values: Tri[]): Tri {
    if (values.includes("yes")) return "yes";
    return values.includes("maybe") ? "maybe" : "no";
}

const RANK: Record<Tri, number> = { no: 0, maybe: 1, yes: 2 };

function powersOf(rules: Plain): Pick<Role, "wildcard" | "escalation" | "escalationWhat"> {
    const p = rulesPowers(rules);
    return { wildcard: p.all, escalation: p.escalation, ...(p.escalationWhat ? { escalationWhat: p.escalationWhat } : {}) };
}

/** A name that identifies nothing: absent or empty (Kubernetes rejects both; in preview they stand for a value not yet known). */
function missing(v: string | Unknown | undefined): v is undefined | "" {
    return v === undefined || v === "";
}

function labelsOf(v: Plain): Labels {
    if (v === UNKNOWN) return UNKNOWN;
    const out: Record<string, string | Unknown | undefined> = {};
    for (const [k, val] of entries(v)) out[k] = str(val);
    return out;
}

function selectorsOf(props: Plain): Plain[] | Unknown | undefined {
    const rule = get(props, "aggregationRule");
    if (rule === undefined || rule === null) return undefined;
    const selectors = get(rule, "clusterRoleSelectors");
    if (selectors === UNKNOWN) return UNKNOWN;
    return list(selectors);
}

const BOOTSTRAP = { "kubernetes.io/bootstrapping": "rbac-defaults" };
const AGG = "rbac.authorization.k8s.io/aggregate-to-";

/**
 * The cluster's bootstrap ClusterRoles that aggregation can reach or that aggregate themselves, with the
 * labels and selectors Kubernetes gives them (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
 * Their own rules are not wildcard, except cluster-admin's.
 */
function builtInRoles(): Role[] {
    const role = (name: string, wildcard: Tri, labels: Record<string, string>, selectorLabel?: string): Role => ({
        kind: "ClusterRole",
        name,
        namespace: undefined,
        wildcard,
        // admin and edit can create pods and impersonate service accounts (bootstrappolicy's aggregate-to-edit rules).
        ...(name === "view" ? { escalation: "no" as Tri } : { escalation: "yes" as Tri, escalationWhat: name === "cluster-admin" ? "do anything" : "create pods and impersonate service accounts" }),
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

/** Builds the RBAC view of a program's resources (built per call: the analyzer hands every policy its own list). */
export function rbacModel(resources: ResourceLike[]): RbacModel {
    return buildRbacModel(resources);
}

interface RawPatch {
    resource: ResourceLike;
    kind: string;
    props: Plain;
}

function objectKey(kind: string, name: string, namespace: string | undefined): string {
    return kind === "Role" || kind === "RoleBinding" ? `${kind}/${namespace ?? DEFAULT_NAMESPACE}/${name}` : `${kind}/${name}`;
}

function readSubjects(raw: Plain): Subject[] | Unknown {
    if (raw === UNKNOWN) return UNKNOWN;
    return list(raw).map((s) =>
        s === UNKNOWN ? { kind: UNKNOWN, name: UNKNOWN, namespace: UNKNOWN } : { kind: str(get(s, "kind")), name: str(get(s, "name")), namespace: str(get(s, "namespace")) },
    );
}

function has(props: Plain, key: string): boolean {
    return props === UNKNOWN || (isObject(props) && props[key] !== undefined);
}

function buildRbacModel(resources: ResourceLike[]): RbacModel {
    const roles: Role[] = [];
    const bindings: Binding[] = [];
    const rolePatches: RawPatch[] = [];
    const bindingPatches: RawPatch[] = [];
    const declaredRoles = new Map<string, Role>();
    const declaredBindings = new Map<string, Binding>();
    for (const r of resources) {
        const m = RBAC_TYPE.exec(String(r?.type ?? ""));
        if (!m) continue;
        const props = plain(r.props);
        const kind = m[2];
        if (m[3]) {
            (kind === "ClusterRole" || kind === "Role" ? rolePatches : bindingPatches).push({ resource: r, kind, props });
            continue;
        }
        const name = str(get(props, "metadata", "name"));
        const namespace = str(get(props, "metadata", "namespace"));
        if (kind === "ClusterRole" || kind === "Role") {
            const role: Role = {
                kind,
                name,
                namespace,
                ...powersOf(get(props, "rules")),
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
    const builtIns = builtInRoles().filter((b) => !declaredRoles.has(objectKey("ClusterRole", b.name as string, undefined)));
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
    return { roles, bindings, rolesByName, rolesWithUnknownName, clusterRoles: all.filter((r) => r.kind === "ClusterRole"), grants: new Map(), adminGrants: new Map() };
}

/**
 * The merged view of each patched role: its target (declared, built-in, or nothing the program knows)
 * with every patch of that target applied. Two patches that set the same list are both applied as the
 * union of their lists (either may win); two that set the same label to different values leave it unknown.
 */
function mergeRolePatches(patches: RawPatch[], declared: Map<string, Role>, builtIns: Map<string, Role>): Role[] {
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
        const base = declared.get(key) ?? (group[0].kind === "ClusterRole" && typeof name === "string" ? builtIns.get(name) : undefined);
        out.push(mergeRole(group, base));
    }
    for (const p of unkeyed) out.push(mergeRole([p], undefined));
    return out;
}

function mergeRole(group: RawPatch[], base: Role | undefined): Role {
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
            for (const [k, v] of Object.entries(labelsOf(patchLabels) as Record<string, string | Unknown | undefined>)) {
                next[k] = setBy.has(k) && setBy.get(k) !== v ? UNKNOWN : v;
                setBy.set(k, v);
            }
            labels = next;
        }
        if (has(p.props, "rules")) {
            const w = powersOf(get(p.props, "rules"));
            wildcard = rulesSet ? or([wildcard, w.wildcard]) : w.wildcard;
            const e = rulesSet ? or([escalation, w.escalation]) : w.escalation;
            if (e !== escalation || !rulesSet) escalationWhat = RANK[w.escalation] >= RANK[escalation] || !rulesSet ? w.escalationWhat : escalationWhat;
            escalation = e;
            rulesSet = true;
        }
        if (kind === "ClusterRole" && has(p.props, "aggregationRule")) {
            const s = p.props === UNKNOWN ? UNKNOWN : selectorsOf(p.props);
            if (s !== undefined) {
                selectors = selectorsSet && selectors !== undefined ? (selectors === UNKNOWN || s === UNKNOWN ? UNKNOWN : [...selectors, ...s]) : s;
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
function mergeBindingPatch(p: RawPatch, declared: Map<string, Binding>): Binding {
    const name = str(get(p.props, "metadata", "name"));
    const namespace = str(get(p.props, "metadata", "namespace"));
    const base =
        typeof name === "string" && name !== "" && (namespace === undefined || typeof namespace === "string")
            ? declared.get(objectKey(p.kind, name, namespace))
            : undefined;
    const setsRoleRef = has(p.props, "roleRef");
    const setsSubjects = has(p.props, "subjects");
    const subjects: Subject[] | Unknown = setsSubjects ? readSubjects(get(p.props, "subjects")) : base ? base.subjects : [];
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

function eq(a: string | Unknown | undefined, b: string | Unknown | undefined): Tri {
    if (a === UNKNOWN || b === UNKNOWN) return "maybe";
    return a === b ? "yes" : "no";
}

/** Whether a role's labels satisfy one label-selector requirement (`key <op> values`). */
function requirement(role: Role, key: Plain, op: Plain, values: Plain): Tri {
    if (key === UNKNOWN || op === UNKNOWN || role.labels === UNKNOWN) return "maybe";
    if (typeof key !== "string" || typeof op !== "string") return "maybe"; // invalid: the controller cannot use it
    const present = Object.prototype.hasOwnProperty.call(role.labels, key);
    const value = present ? role.labels[key] : undefined;
    if (present && typeof value !== "string") return "maybe";
    const absent: Tri = present ? "no" : role.labelsOpen ? "maybe" : "yes";
    const valueIn = (): Tri => {
        if (absent === "yes") return "no";
        if (absent === "maybe") return "maybe";
        if (values === UNKNOWN) return "maybe";
        const items = list(values);
        if (items.includes(value as string)) return "yes";
        return items.includes(UNKNOWN) ? "maybe" : "no";
    };
    switch (op) {
        case "In":
            return valueIn();
        case "NotIn": {
            const v = valueIn();
            return v === "yes" ? "no" : v === "no" ? "yes" : "maybe";
        }
        case "Exists":
            return absent === "yes" ? "no" : absent === "no" ? "yes" : "maybe";
        case "DoesNotExist":
            return absent;
        default:
            return "maybe";
    }
}

/** Whether a Kubernetes label selector (matchLabels AND matchExpressions) selects the role. An empty selector selects every role. */
export function selectorMatches(selector: Plain, role: Role): Tri {
    if (selector === UNKNOWN) return "maybe";
    if (selector === null || selector === undefined) return "yes";
    if (!isObject(selector)) return "maybe";
    const results: Tri[] = [];
    const matchLabels = get(selector, "matchLabels");
    if (matchLabels === UNKNOWN) results.push("maybe");
    else for (const [k, v] of entries(matchLabels)) results.push(requirement(role, k, "In", [v]));
    const expressions = get(selector, "matchExpressions");
    if (expressions === UNKNOWN) results.push("maybe");
    else {
        for (const e of list(expressions)) {
            results.push(e === UNKNOWN ? "maybe" : requirement(role, get(e, "key"), get(e, "operator"), get(e, "values")));
        }
    }
    return results.reduce<Tri>((acc, t) => and(acc, t), "yes");
}

/** How a role grants (or may grant) `*` on `*`, or an escalation path, with aggregation resolved. */
export interface RoleGrant {
    wildcard: Tri;
    /** The role whose own rules decide it (the role itself, or one it aggregates). */
    source?: Role;
    escalation: Tri;
    escalationSource?: Role;
    /** Program-declared aggregating ClusterRoles reached: their selectors may match roles outside the program. */
    openAggregators: Role[];
}

/**
 * The role's wildcard status with aggregation resolved: the best over every ClusterRole reachable by
 * selectors (each path as certain as its least certain match), its own rules included. Cycle-safe: each
 * role's reach can only improve from "no" to "maybe" to "yes".
 */
export function roleGrant(role: Role, model: RbacModel): RoleGrant {
    const hit = model.grants.get(role);
    if (hit) return hit;
    const reach = new Map<Role, Tri>([[role, "yes"]]);
    const queue: Role[] = [role];
    while (queue.length > 0) {
        const from = queue.shift()!;
        const selectors = from.selectors;
        if (selectors === undefined) continue;
        const here = reach.get(from)!;
        for (const to of model.clusterRoles) {
            if (to === from) continue;
            // The controller skips the aggregating role itself (by name).
            if (typeof to.name === "string" && to.name === from.name) continue;
            const edge = selectors === UNKNOWN ? "maybe" : or(selectors.map((s) => selectorMatches(s, to)));
            const t = and(here, edge);
            if (t === "no" || RANK[t] <= RANK[reach.get(to) ?? "no"]) continue;
            reach.set(to, t);
            queue.push(to);
        }
    }
    let wildcard: Tri = "no";
    let source: Role | undefined;
    let escalation: Tri = "no";
    let escalationSource: Role | undefined;
    const openAggregators: Role[] = [];
    for (const [r, t] of reach) {
        const w = and(t, r.wildcard);
        if (RANK[w] > RANK[wildcard] || (w === wildcard && w !== "no" && r === role)) {
            wildcard = w;
            source = r;
        }
        const e = and(t, r.escalation);
        if (RANK[e] > RANK[escalation] || (e === escalation && e !== "no" && r === role)) {
            escalation = e;
            escalationSource = r;
        }
        if (r.selectors !== undefined && !r.builtIn) openAggregators.push(r);
    }
    const result: RoleGrant = { wildcard, source, escalation, escalationSource, openAggregators };
    model.grants.set(role, result);
    return result;
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

/** Whether the binding's role is cluster-admin or a wildcard-equivalent role, with what decides it. */
export function adminGrant(binding: Binding, model: RbacModel): AdminGrant {
    const hit = model.adminGrants.get(binding);
    if (hit) return hit;
    const result = computeAdminGrant(binding, model);
    model.adminGrants.set(binding, result);
    return result;
}

function computeAdminGrant(binding: Binding, model: RbacModel): AdminGrant {
    const { roleKind, roleName } = binding;
    if (roleName === UNKNOWN || roleKind === UNKNOWN || missing(roleName) || missing(roleKind)) {
        const why = binding.patch?.roleOutsideProgram
                ? "it sets subjects of a binding this program does not declare without its roleRef, so their role is one the program cannot see"
                : "its roleRef is unknown or missing during preview";
        return { admin: "maybe", unknown: why, openAggregators: [] };
    }
    if (roleKind === "ClusterRole" && roleName === "cluster-admin") return { admin: "yes", openAggregators: [] };
    const bindingNs = binding.namespace ?? DEFAULT_NAMESPACE;
    const candidates = [...(model.rolesByName.get(`${roleKind}/${roleName}`) ?? []), ...model.rolesWithUnknownName];
    let best: AdminGrant = { admin: "no", openAggregators: [] };
    const open = new Set<Role>();
    for (const role of candidates) {
        if (role.kind !== roleKind) continue;
        const sameName = typeof role.name === "string" && role.name !== "" ? eq(role.name, roleName) : "maybe";
        const sameNamespace = role.kind === "Role" ? eq(role.namespace ?? DEFAULT_NAMESPACE, bindingNs) : "yes";
        const target = and(sameName, sameNamespace);
        if (target === "no") continue;
        const grant = roleGrant(role, model);
        if (target === "yes") for (const a of grant.openAggregators) open.add(a);
        const admin = and(target, grant.wildcard);
        const scope = escalationScope(binding.kind, binding.namespace);
        const escalates = and(and(target, grant.escalation), scope);
        const via = RANK[escalates] > RANK[admin] ? escalates : admin;
        const byEscalation = RANK[escalates] > RANK[admin];
        // At equal certainty, `*` on `*` is the plainer reason to report than an escalation path.
        if (RANK[via] > RANK[best.admin] || (via !== "no" && via === best.admin && !byEscalation && best.escalation !== undefined)) {
            const what = grant.escalationSource?.escalationWhat ?? "escalate its privileges";
            best = {
                admin: via,
                role,
                grant,
                openAggregators: [],
                ...(byEscalation ? { escalation: `it can ${what}${binding.kind === "ClusterRoleBinding" ? " cluster-wide" : " in a privileged namespace"}` } : {}),
                ...(via === "maybe"
                    ? {
                          unknown:
                              target === "maybe"
                                  ? "a role of this program whose name is unknown during preview may be it"
                                  : byEscalation && scope === "maybe"
                                    ? "the binding's namespace is unknown during preview and its role can escalate privileges in a privileged namespace"
                                    : "its role's rules, labels or aggregation selectors are unknown during preview",
                      }
                    : {}),
            };
        }
    }
    return { ...best, openAggregators: [...open] };
}

/** Whether the binding's role is cluster-admin or a wildcard-equivalent role of the program. */
export function grantsAdmin(binding: Binding, model: RbacModel): Tri {
    return adminGrant(binding, model).admin;
}

const quoteName = (v: string | Unknown | undefined) => (v === UNKNOWN ? "<unknown during preview>" : v === undefined || v === "" ? "<missing>" : JSON.stringify(v));

/** A readable description of a role for messages, e.g. `ClusterRole "x" (aggregates ClusterRole "y": * verbs on * resources)`. */
export function describeRole(name: string, kind: string | Unknown | undefined, g?: RoleGrant): string {
    const k = typeof kind === "string" && kind !== "" ? kind : "role";
    if (k === "ClusterRole" && name === "cluster-admin") return "cluster-admin";
    const source = g?.source;
    let how = "";
    if (source && g?.wildcard === "yes") {
        const patched = source.patches ? ` as patched by ${source.patches.map((p) => JSON.stringify(p)).join(", ")}` : "";
        how =
            source.name === name && source.kind === k && !source.builtIn
                ? ` (wildcard: * verbs on * resources${patched})`
                : ` (wildcard by aggregation: it aggregates ${source.kind} ${quoteName(source.name)}${patched}, which has * verbs on * resources)`;
    }
    return `${k} ${JSON.stringify(name)}${how}`;
}

/** A readable name of the binding's role. */
export function describeBindingRole(binding: Binding, g: AdminGrant): string {
    if (binding.patch?.roleOutsideProgram) return "the role it binds in the cluster (not in this program)";
    if (typeof binding.roleName !== "string" || binding.roleName === "") return `${typeof binding.roleKind === "string" && binding.roleKind ? binding.roleKind : "role"} ${quoteName(binding.roleName)}`;
    if (g.escalation && g.admin === "yes") {
        const src = g.grant?.escalationSource;
        const through = src && !(src.name === binding.roleName && src.kind === binding.roleKind) ? ` through ${src.kind} ${quoteName(src.name)}, which it aggregates` : "";
        const kind = typeof binding.roleKind === "string" && binding.roleKind ? binding.roleKind : "role";
        return `${kind} ${JSON.stringify(binding.roleName)} (equivalent to cluster-admin: ${g.escalation}${through})`;
    }
    return describeRole(binding.roleName, binding.roleKind, g.grant);
}

/** A binding's kind and resource name for messages; a patch names what it patches. */
export function describeBinding(binding: Binding): string {
    if (!binding.patch) return `${binding.kind} ${JSON.stringify(binding.resourceName)}`;
    const target = binding.patch.base
        ? `${binding.kind} ${JSON.stringify(binding.patch.base.resourceName)} of this program`
        : `${binding.kind} ${quoteName(binding.patch.target)}, which this program does not declare`;
    return `${binding.kind}Patch ${JSON.stringify(binding.resourceName)} (patching ${target})`;
}

/**
 * Groups that cover every service account: all service accounts and all authenticated identities (every
 * service account token authenticates as a member of both). `system:masters` is not one: the API server
 * never puts a service account in it (its groups are `system:serviceaccounts`, `system:serviceaccounts:<ns>`
 * and `system:authenticated`), so binding a role to it grants a Stack's account nothing (and the group
 * already bypasses authorization).
 */
export const GROUPS_COVERING_ALL_ACCOUNTS: ReadonlySet<string> = new Set(["system:serviceaccounts", "system:authenticated"]);

/**
 * The namespace a ServiceAccount subject names: its own, else (in a RoleBinding) the binding's; UNKNOWN
 * when unknown, and undefined when it is missing where it decides (a ClusterRoleBinding's subject).
 */
function subjectNamespace(subject: Subject, binding: Binding): string | Unknown | undefined {
    if (subject.namespace === UNKNOWN) return UNKNOWN;
    if (!missing(subject.namespace)) return subject.namespace;
    return binding.kind === "RoleBinding" ? binding.namespace ?? DEFAULT_NAMESPACE : undefined;
}

/**
 * Whether a subject's identity could not be resolved during preview: its kind or name is unknown or
 * missing, or (for a ServiceAccount of a ClusterRoleBinding) its namespace is. Such a subject is never
 * taken for a concrete account: it may be any.
 */
export function subjectUnresolved(subject: Subject, binding: Binding): boolean {
    const { kind, name } = subject;
    if (kind === UNKNOWN || name === UNKNOWN || missing(kind) || missing(name)) return true;
    if (kind !== "ServiceAccount") return false;
    const ns = subjectNamespace(subject, binding);
    return ns === UNKNOWN || missing(ns);
}

/** Whether one subject of a binding covers a service account. */
export function subjectCovers(subject: Subject, binding: Binding, sa: ServiceAccountRef): Tri {
    const { kind, name } = subject;
    if (kind === UNKNOWN || missing(kind)) return "maybe";
    if (kind === "ServiceAccount") {
        // A RoleBinding's ServiceAccount subject defaults to the binding's namespace; a missing name or
        // (where it decides) namespace is not resolved yet, so it may be any.
        const ns = subjectNamespace(subject, binding);
        const sameName = missing(name) ? "maybe" : eq(name, sa.name);
        const sameNs = missing(ns) ? "maybe" : eq(ns, sa.namespace);
        return and(sameName, sameNs);
    }
    if (name === UNKNOWN || missing(name)) {
        // A group or user whose name is not known may be one that covers every account.
        return kind === "Group" || kind === "User" ? "maybe" : "no";
    }
    if (kind === "Group") {
        if (GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return "yes";
        if (name.startsWith("system:serviceaccounts:")) {
            return eq(name.slice("system:serviceaccounts:".length), sa.namespace);
        }
        return "no";
    }
    if (kind === "User" && name.startsWith("system:serviceaccount:")) {
        const [ns, ...rest] = name.slice("system:serviceaccount:".length).split(":");
        return and(eq(ns, sa.namespace), eq(rest.join(":"), sa.name));
    }
    return "no";
}

/** Whether any subject of the binding covers the service account. */
export function bindingCovers(binding: Binding, sa: ServiceAccountRef): Tri {
    if (binding.subjects === UNKNOWN) return "maybe";
    return or(binding.subjects.map((s) => subjectCovers(s, binding, sa)));
}

/** A PKO Stack together with the service account its workspace runs as. */
export interface StackIdentity {
    /** Position among the program's Stacks (keeps findings in program order). */
    order: number;
    view: StackView;
    serviceAccount: ServiceAccountRef;
    source: string;
}

/**
 * Stacks indexed by the service account they run as, so that finding the Stacks a subject may cover
 * is a lookup, not a scan (programs with thousands of Stacks and bindings stay linear). Stacks whose
 * account or namespace is unknown are candidates for every subject.
 */
export class StackIndex {
    private readonly byAccount = new Map<string, StackIdentity[]>();
    private readonly byNamespace = new Map<string, StackIdentity[]>();
    private readonly uncertain: StackIdentity[] = [];

    constructor(public readonly stacks: StackIdentity[]) {
        for (const st of stacks) {
            const { name, namespace } = st.serviceAccount;
            if (typeof namespace !== "string") {
                this.uncertain.push(st);
                continue;
            }
            push(this.byNamespace, namespace, st);
            if (typeof name === "string") push(this.byAccount, `${namespace}/${name}`, st);
            else this.uncertain.push(st);
        }
    }

    /** A superset of the Stacks the subject may cover (subjectCovers decides exactly). */
    candidates(subject: Subject, binding: Binding): StackIdentity[] {
        const { kind, name } = subject;
        if (subjectUnresolved(subject, binding) || typeof kind !== "string" || typeof name !== "string") return this.stacks;
        let found: StackIdentity[] = [];
        if (kind === "ServiceAccount") {
            const ns = subjectNamespace(subject, binding);
            if (typeof ns !== "string") return this.stacks;
            found = this.byAccount.get(`${ns}/${name}`) ?? [];
        } else if (kind === "Group") {
            if (GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return this.stacks;
            if (name.startsWith("system:serviceaccounts:")) found = this.byNamespace.get(name.slice("system:serviceaccounts:".length)) ?? [];
        } else if (kind === "User" && name.startsWith("system:serviceaccount:")) {
            const [ns, ...rest] = name.slice("system:serviceaccount:".length).split(":");
            found = this.byAccount.get(`${ns}/${rest.join(":")}`) ?? [];
        }
        return this.uncertain.length === 0 ? found : [...found, ...this.uncertain];
    }

    /** The Stacks a binding may cover, each once, in program order. */
    coveredBy(binding: Binding): StackIdentity[] {
        if (binding.subjects === UNKNOWN) return this.stacks;
        const seen = new Set<StackIdentity>();
        for (const s of binding.subjects) for (const st of this.candidates(s, binding)) seen.add(st);
        return seen.size === this.stacks.length ? this.stacks : [...seen].sort((a, b) => a.order - b.order);
    }
}

/** Adds a value to the list under a key of a map of lists. */
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
}

/** The program's Stacks and the accounts they run as (built per call: the analyzer hands every policy its own list). */
export function stackIdentities(resources: ResourceLike[]): StackIdentity[] {
    return buildStackIdentities(resources);
}

function buildStackIdentities(resources: ResourceLike[]): StackIdentity[] {
    const out: StackIdentity[] = [];
    // Each declared Stack as it will be after its patches (a patch that switches a Stack's service account
    // is judged with the account it switches to), under the Stack's own identity. A patch of a Stack the
    // program does not declare says nothing reliable about the account it runs as, so it is not a Stack here.
    for (const { view: patched, stack } of patchedStacks(resources)) {
        if (!stack) continue;
        const view: StackView = { ...patched, resourceName: stack.resourceName, urn: stack.urn, type: stack.type, label: stack.label };
        const sa = effectiveServiceAccount(view);
        const namespace = view.namespace === UNKNOWN ? UNKNOWN : view.namespace ?? DEFAULT_NAMESPACE;
        out.push({ order: out.length, view, serviceAccount: { name: sa.name, namespace }, source: sa.source });
    }
    return out;
}

const WORKSPACE_TYPE = "kubernetes:auto.pulumi.com/v1alpha1:Workspace";

/**
 * The program's PKO `Workspace` objects (auto.pulumi.com/v1alpha1, declared directly) and the accounts
 * their pods run as, as identities like a Stack's (the rules that judge what a Stack's account is granted
 * judge a Workspace's the same way). The account follows the workspace controller: the pod template's
 * `serviceAccountName` wins over `spec.serviceAccountName`, which the CRD defaults to `default`.
 */
export function workspaceIdentities(resources: ResourceLike[], firstOrder = 0): StackIdentity[] {
    const out: StackIdentity[] = [];
    for (const r of resources) {
        const type = String(r?.type ?? "");
        if (!type.startsWith("kubernetes:") || type.endsWith("Patch")) continue;
        const props = plain(r.props);
        const isWorkspace = type === WORKSPACE_TYPE || (get(props, "apiVersion") === "auto.pulumi.com/v1alpha1" && get(props, "kind") === "Workspace");
        if (!isWorkspace) continue;
        const name = String(r.name ?? "");
        const namespaceRaw = str(get(props, "metadata", "namespace"));
        const view: StackView = {
            resourceName: name,
            label: `Workspace ${JSON.stringify(name)}`,
            urn: typeof r.urn === "string" ? r.urn : undefined,
            type,
            apiVersion: "auto.pulumi.com/v1alpha1",
            name: str(get(props, "metadata", "name")),
            namespace: namespaceRaw,
            labels: {},
            annotations: {},
            object: props,
            spec: get(props, "spec"),
            stack: undefined,
            projectRepo: undefined,
            repoDir: undefined,
            commit: undefined,
            branch: undefined,
            backend: undefined,
            fluxSource: undefined,
            programRef: undefined,
            destroyOnFinalize: undefined,
            refresh: undefined,
            preview: undefined,
            resyncFrequencySeconds: undefined,
            serviceAccountName: undefined,
            workspaceTemplate: undefined,
            environment: undefined,
        };
        const spec = get(props, "spec");
        const sa = props === UNKNOWN ? { name: UNKNOWN as Unknown, source: "spec" } : (workspaceAccount(spec, "spec") ?? { name: "default", source: "the Workspace's default service account" });
        const namespace = namespaceRaw === UNKNOWN || props === UNKNOWN ? UNKNOWN : namespaceRaw ?? DEFAULT_NAMESPACE;
        out.push({ order: firstOrder + out.length, view, serviceAccount: { name: sa.name, namespace }, source: sa.source });
    }
    return out;
}

/** A readable name of a subject for messages. */
export function describeSubject(s: Subject): string {
    const part = (v: string | Unknown | undefined) => (v === UNKNOWN ? "<unknown>" : v ?? "");
    const name = s.name === UNKNOWN ? "<unknown>" : missing(s.name) ? "<missing name>" : s.name;
    return s.kind === "ServiceAccount"
        ? `ServiceAccount ${part(s.namespace) ? part(s.namespace) + "/" : ""}${name}`
        : `${missing(s.kind) ? "<missing kind>" : part(s.kind)} ${name}`;
}
