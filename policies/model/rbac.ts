/**
 * Kubernetes RBAC as declared in a Pulumi program: roles, bindings, their subjects, and whether a
 * binding grants cluster-admin (or a wildcard-equivalent role) to a given service account.
 * Three-valued where preview leaves values unknown: "yes", "no", "maybe".
 */
import { ResourceLike, StackView, effectiveServiceAccount, stackView } from "./stack";
import { Plain, UNKNOWN, Unknown, get, list, plain, str } from "./values";

export type Tri = "yes" | "no" | "maybe";

const RBAC_TYPE = /^kubernetes:rbac\.authorization\.k8s\.io\/(v1|v1beta1|v1alpha1):(ClusterRoleBinding|RoleBinding|ClusterRole|Role)$/;

/** The namespace a namespaced object lands in when metadata.namespace is not set. */
export const DEFAULT_NAMESPACE = "default";

export interface Role {
    kind: "ClusterRole" | "Role";
    name: string | Unknown | undefined;
    namespace: string | Unknown | undefined;
    /** Whether its rules grant `*` verbs on `*` resources. */
    wildcard: Tri;
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
}

export interface ServiceAccountRef {
    name: string | Unknown;
    namespace: string | Unknown;
}

export interface RbacModel {
    roles: Role[];
    bindings: Binding[];
    /** Roles by `${kind}/${name}`, and those whose name is unknown (they may be any role). */
    rolesByName: Map<string, Role[]>;
    rolesWithUnknownName: Role[];
}

function includesOrUnknown(v: Plain, wanted: string): Tri {
    if (v === UNKNOWN) return "maybe";
    const items = list(v);
    if (items.includes(wanted)) return "yes";
    return items.includes(UNKNOWN) ? "maybe" : "no";
}

function and(a: Tri, b: Tri): Tri {
    if (a === "no" || b === "no") return "no";
    return a === "yes" && b === "yes" ? "yes" : "maybe";
}

function or(values: Tri[]): Tri {
    if (values.includes("yes")) return "yes";
    return values.includes("maybe") ? "maybe" : "no";
}

function ruleIsWildcard(rule: Plain): Tri {
    if (rule === UNKNOWN) return "maybe";
    return and(includesOrUnknown(get(rule, "verbs"), "*"), includesOrUnknown(get(rule, "resources"), "*"));
}

function roleWildcard(props: Plain): Tri {
    const rules = get(props, "rules");
    if (rules === UNKNOWN) return "maybe";
    return or(list(rules).map(ruleIsWildcard));
}

/** Builds the RBAC view of a program's resources (built per call: the analyzer hands every policy its own list). */
export function rbacModel(resources: ResourceLike[]): RbacModel {
    return buildRbacModel(resources);
}

function buildRbacModel(resources: ResourceLike[]): RbacModel {
    const roles: Role[] = [];
    const bindings: Binding[] = [];
    for (const r of resources) {
        const m = RBAC_TYPE.exec(String(r?.type ?? ""));
        if (!m) continue;
        const props = plain(r.props);
        const kind = m[2];
        const name = str(get(props, "metadata", "name"));
        const namespace = str(get(props, "metadata", "namespace"));
        if (kind === "ClusterRole" || kind === "Role") {
            roles.push({ kind, name, namespace, wildcard: roleWildcard(props) });
            continue;
        }
        const subjectsRaw = get(props, "subjects");
        const subjects: Subject[] | Unknown =
            subjectsRaw === UNKNOWN
                ? UNKNOWN
                : list(subjectsRaw).map((s) =>
                      s === UNKNOWN
                          ? { kind: UNKNOWN, name: UNKNOWN, namespace: UNKNOWN }
                          : { kind: str(get(s, "kind")), name: str(get(s, "name")), namespace: str(get(s, "namespace")) },
                  );
        bindings.push({
            kind: kind as Binding["kind"],
            resourceName: String(r.name ?? ""),
            urn: typeof r.urn === "string" ? r.urn : undefined,
            namespace,
            roleKind: str(get(props, "roleRef", "kind")),
            roleName: str(get(props, "roleRef", "name")),
            subjects,
        });
    }
    const rolesByName = new Map<string, Role[]>();
    const rolesWithUnknownName: Role[] = [];
    for (const role of roles) {
        if (typeof role.name === "string") {
            const key = `${role.kind}/${role.name}`;
            rolesByName.set(key, [...(rolesByName.get(key) ?? []), role]);
        } else if (role.name === UNKNOWN) {
            rolesWithUnknownName.push(role);
        }
    }
    return { roles, bindings, rolesByName, rolesWithUnknownName };
}

function eq(a: string | Unknown | undefined, b: string | Unknown | undefined): Tri {
    if (a === UNKNOWN || b === UNKNOWN) return "maybe";
    return a === b ? "yes" : "no";
}

/** Whether the binding's role is cluster-admin or a wildcard-equivalent role of the program. */
export function grantsAdmin(binding: Binding, model: RbacModel): Tri {
    if (binding.roleName === UNKNOWN || binding.roleKind === UNKNOWN) return "maybe";
    if (binding.roleKind === "ClusterRole" && binding.roleName === "cluster-admin") return "yes";
    const bindingNs = binding.namespace ?? DEFAULT_NAMESPACE;
    const candidates = [...(model.rolesByName.get(`${binding.roleKind}/${binding.roleName}`) ?? []), ...model.rolesWithUnknownName];
    return or(
        candidates
            .filter((role) => role.kind === binding.roleKind)
            .map((role) => {
                const sameName = eq(role.name, binding.roleName);
                const sameNamespace = role.kind === "Role" ? eq(role.namespace ?? DEFAULT_NAMESPACE, bindingNs) : "yes";
                return and(and(sameName, sameNamespace), role.wildcard);
            }),
    );
}

/**
 * Groups that cover every service account: all service accounts, all authenticated identities (every
 * service account token authenticates as a member), and `system:masters` (which the threat model
 * counts as a grant to anyone who can join it).
 */
export const GROUPS_COVERING_ALL_ACCOUNTS: ReadonlySet<string> = new Set(["system:serviceaccounts", "system:authenticated", "system:masters"]);

/** Whether one subject of a binding covers a service account. */
export function subjectCovers(subject: Subject, binding: Binding, sa: ServiceAccountRef): Tri {
    const { kind, name } = subject;
    if (kind === UNKNOWN || name === UNKNOWN) return "maybe";
    if (kind === "ServiceAccount") {
        // A RoleBinding's ServiceAccount subject defaults to the binding's namespace.
        const ns = subject.namespace ?? (binding.kind === "RoleBinding" ? binding.namespace ?? DEFAULT_NAMESPACE : undefined);
        if (ns === undefined) return "no";
        return and(eq(name, sa.name), eq(ns, sa.namespace));
    }
    if (kind === "Group") {
        if (typeof name === "string" && GROUPS_COVERING_ALL_ACCOUNTS.has(name)) return "yes";
        if (typeof name === "string" && name.startsWith("system:serviceaccounts:")) {
            return eq(name.slice("system:serviceaccounts:".length), sa.namespace);
        }
        return "no";
    }
    if (kind === "User" && typeof name === "string" && name.startsWith("system:serviceaccount:")) {
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
        if (kind === UNKNOWN || name === UNKNOWN || typeof name !== "string") return this.stacks;
        let found: StackIdentity[] = [];
        if (kind === "ServiceAccount") {
            const ns = subject.namespace ?? (binding.kind === "RoleBinding" ? binding.namespace ?? DEFAULT_NAMESPACE : undefined);
            if (ns === UNKNOWN) return this.stacks;
            if (typeof ns === "string") found = this.byAccount.get(`${ns}/${name}`) ?? [];
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

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
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
    for (const r of resources) {
        const view = stackView(r);
        if (!view) continue;
        const sa = effectiveServiceAccount(view);
        const namespace = view.namespace === UNKNOWN ? UNKNOWN : view.namespace ?? DEFAULT_NAMESPACE;
        out.push({ order: out.length, view, serviceAccount: { name: sa.name, namespace }, source: sa.source });
    }
    return out;
}

/** A readable name of a subject for messages. */
export function describeSubject(s: Subject): string {
    const part = (v: string | Unknown | undefined) => (v === UNKNOWN ? "<unknown>" : v ?? "");
    return s.kind === "ServiceAccount"
        ? `ServiceAccount ${part(s.namespace) ? part(s.namespace) + "/" : ""}${part(s.name)}`
        : `${part(s.kind)} ${part(s.name)}`;
}

