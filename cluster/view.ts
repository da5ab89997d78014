/**
 * What admission reads of the cluster: the cache, or the cache overlaid with fresh reads. The cache trails
 * the API server by a watch event (`kubectl apply` of a binding then its Stack can review the Stack first), so
 * what can change a verdict is read fresh (quorum lists, or at a revision read after the review arrived) and
 * shared by concurrent reviews. A failed fresh read fails the decision closed.
 */
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { KObject, UnreadableObject, identityOf } from "./kinds";
import { FreshList } from "./shared-reads";

export interface ClusterView {
    list(kind: string, ns?: string): KObject[];
    get(kind: string, ns: string, name: string): KObject | undefined;
    bindingsFor(ns: string): KObject[];
    stackNamespaces(): string[];
    applicationsFor(ns: string): KObject[];
    aggregatingClusterRoles(): KObject[];
    /** The ClusterRoles the aggregating ones select (store.ts aggregatedClusterRoles). */
    aggregatedClusterRoles(): KObject[];
    /** The objects pko-guard could not read that could change a decision about these namespaces. */
    unreadableFor(namespaces: Iterable<string>): UnreadableObject[];
}

function nsOf(o: KObject): string {
    const n = (o.metadata ?? {}).namespace;
    return typeof n === "string" ? n : "";
}

/**
 * Above this many namespaces (a binding to a group reaches every namespace holding a Stack), a fresh read
 * lists RoleBindings and Stacks across all namespaces once instead of once per namespace.
 */
export const PER_NAMESPACE_READS = 8;

/** What a fresh read holds of one namespaced kind: some namespaces' objects, or every namespace's. */
class FreshKind {
    constructor(
        private readonly byNs: Map<string, KObject[]>,
        private readonly everywhere: boolean,
    ) {}

    /** Nothing read fresh: every namespace from the cache. */
    static none(): FreshKind {
        return new FreshKind(new Map(), false);
    }

    static async read(kind: string, namespaces: string[], fresh: FreshList): Promise<FreshKind> {
        if (namespaces.length <= PER_NAMESPACE_READS) {
            const lists = await Promise.all(namespaces.map((n) => fresh(kind, n)));
            return new FreshKind(new Map(namespaces.map((n, i) => [n, lists[i]])), false);
        }
        const byNs = new Map<string, KObject[]>();
        for (const o of await fresh(kind)) {
            const n = nsOf(o);
            if (!byNs.has(n)) byNs.set(n, []);
            byNs.get(n)!.push(o);
        }
        return new FreshKind(byNs, true);
    }

    /** Whether the fresh read tells this namespace's objects. */
    covers(ns: string): boolean {
        return this.everywhere || this.byNs.has(ns);
    }
    of(ns: string): KObject[] {
        return this.byNs.get(ns) ?? [];
    }
    all(): KObject[] {
        return [...this.byNs.values()].flat();
    }
    namespaces(): string[] {
        return [...this.byNs.entries()].filter(([, l]) => l.length > 0).map(([n]) => n);
    }
}

function record(v: unknown): Record<string, unknown> | undefined {
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function isBinding(o: KObject): boolean {
    return o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding";
}

interface RoleRef {
    kind: "Role" | "ClusterRole";
    ns: string;
    name: string;
}

/** The role a binding names. */
function roleRefOf(b: KObject): RoleRef | undefined {
    const ref = record(b.roleRef);
    if (typeof ref?.name !== "string" || (ref.kind !== "Role" && ref.kind !== "ClusterRole")) return undefined;
    return { kind: ref.kind, ns: ref.kind === "Role" ? nsOf(b) : "", name: ref.name };
}

function roleKey(kind: string, ns: string, name: string): string {
    return kind === "Role" ? `Role/${ns}/${name}` : `ClusterRole/${name}`;
}

/** `bindings` by the namespaces whose accounts they can cover (binding-reach.ts), in their order. */
function bySubject(bindings: KObject[]): Map<string, KObject[]> {
    const out = new Map<string, KObject[]>();
    for (const b of bindings)
        for (const n of accountNamespaces(b)) {
            if (!out.has(n)) out.set(n, []);
            out.get(n)!.push(b);
        }
    return out;
}

/**
 * A fresh list of every ClusterRoleBinding by subject, once per list: a list kept at a revision answers the
 * reviews of every namespace (shared-reads.ts), each of which would otherwise index all of it again.
 */
const crbIndexes = new WeakMap<KObject[], Map<string, KObject[]>>();

function crbsBySubject(crbs: KObject[]): Map<string, KObject[]> {
    let index = crbIndexes.get(crbs);
    if (!index) crbIndexes.set(crbs, (index = bySubject(crbs)));
    return index;
}

/**
 * The cache overlaid with what can change the verdict on the object under review, read fresh:
 * - for a Stack (or a role, service account, Secret, Application): every ClusterRoleBinding and the
 *   RoleBindings of the namespaces concerned (a binding stored just before, in the same `kubectl apply`);
 * - for anything but a Stack: the Stacks of those namespaces (a Stack stored just before a binding that
 *   would empower it); other Stacks never change a Stack's own findings;
 * - the roles those bindings (and the object, if a binding) name: a role stored just before its binding
 *   would otherwise be missing (and a missing role fails closed) or stale.
 */
export class FreshView implements ClusterView {
    private constructor(
        private readonly cache: ClusterView,
        private readonly crbs: KObject[] | undefined,
        private readonly rbs: FreshKind,
        private readonly stacks: FreshKind,
        private roles = new Map<string, KObject | undefined>(),
    ) {}

    static async read(
        cache: ClusterView,
        incoming: KObject,
        namespaces: Set<string>,
        fresh: FreshList,
    ): Promise<FreshView> {
        const list = [...namespaces];
        const bindings = incoming.kind !== "RoleBinding" && incoming.kind !== "ClusterRoleBinding";
        // The roles the cached bindings name are read alongside the bindings (one round trip, not two);
        // a role only a fresh binding names is read once that binding is known.
        const guessed = FreshView.roleRefs(cache, incoming, list);
        const early = FreshView.readRoles(guessed, fresh);
        early.catch(() => undefined); // awaited below; a failure of the bindings' reads may come first
        const [crbs, rbs, stacks] = await Promise.all([
            bindings ? fresh("ClusterRoleBinding") : undefined,
            bindings ? FreshKind.read("RoleBinding", list, fresh) : FreshKind.none(),
            incoming.kind !== "Stack" ? FreshKind.read("Stack", list, fresh) : FreshKind.none(),
        ]);
        const view = new FreshView(cache, crbs, rbs, stacks);
        const late = new Map([...FreshView.roleRefs(view, incoming, list)].filter(([key]) => !guessed.has(key)));
        const [first, second] = await Promise.all([early, FreshView.readRoles(late, fresh)]);
        view.roles = new Map([...first, ...second]);
        return view;
    }

    /** The roles named by the bindings reaching `namespaces` in `view`, and by `incoming` if a binding. */
    private static roleRefs(view: ClusterView, incoming: KObject, namespaces: string[]): Map<string, RoleRef> {
        const refs = new Map<string, RoleRef>();
        const reaching =
            namespaces.length <= PER_NAMESPACE_READS
                ? namespaces.flatMap((n) => view.bindingsFor(n))
                : [...view.list("ClusterRoleBinding"), ...view.list("RoleBinding")];
        for (const b of [...(isBinding(incoming) ? [incoming] : []), ...reaching]) {
            const ref = roleRefOf(b);
            if (ref) refs.set(roleKey(ref.kind, ref.ns, ref.name), ref);
        }
        return refs;
    }

    /** Roles read fresh: each by name, or all Roles and ClusterRoles once when there are many. */
    private static async readRoles(
        refs: Map<string, RoleRef>,
        fresh: FreshList,
    ): Promise<Map<string, KObject | undefined>> {
        const out = new Map<string, KObject | undefined>();
        if (refs.size === 0) return out;
        if (refs.size <= 2 * PER_NAMESPACE_READS) {
            const wanted = [...refs.entries()];
            const found = await Promise.all(
                wanted.map(([, r]) => fresh(r.kind, r.kind === "Role" ? r.ns : undefined, r.name)),
            );
            wanted.forEach(([key, r], i) =>
                out.set(
                    key,
                    found[i].find((o) => (o.metadata ?? {}).name === r.name),
                ),
            );
            return out;
        }
        const [roles, clusterRoles] = await Promise.all([fresh("Role"), fresh("ClusterRole")]);
        for (const key of refs.keys()) out.set(key, undefined);
        for (const o of [...roles, ...clusterRoles]) {
            const key = roleKey(String(o.kind), nsOf(o), String((o.metadata ?? {}).name));
            if (refs.has(key)) out.set(key, o);
        }
        return out;
    }

    private freshKind(kind: string): FreshKind | undefined {
        return kind === "RoleBinding" ? this.rbs : kind === "Stack" ? this.stacks : undefined;
    }

    list(kind: string, ns?: string): KObject[] {
        if (kind === "ClusterRoleBinding") return this.crbs ?? this.cache.list(kind);
        const fresh = this.freshKind(kind);
        if (!fresh) return this.cache.list(kind, ns);
        if (ns !== undefined) return fresh.covers(ns) ? fresh.of(ns) : this.cache.list(kind, ns);
        return [...this.cache.list(kind).filter((o) => !fresh.covers(nsOf(o))), ...fresh.all()];
    }

    get(kind: string, ns: string, name: string): KObject | undefined {
        if (kind === "Role" || kind === "ClusterRole") {
            const key = roleKey(kind, ns, name);
            if (this.roles.has(key)) return this.roles.get(key);
        }
        if ((kind === "ClusterRoleBinding" && this.crbs) || this.freshKind(kind)?.covers(ns))
            return this.list(kind, ns).find((o) => (o.metadata ?? {}).name === name);
        return this.cache.get(kind, ns, name);
    }

    /** The fresh RoleBindings by the namespaces whose accounts they can cover, built on first use. */
    private rbsBySubject?: Map<string, KObject[]>;

    bindingsFor(ns: string): KObject[] {
        const crbs = this.crbs ? crbsBySubject(this.crbs) : undefined;
        this.rbsBySubject ??= bySubject(this.rbs.all());
        const out = new Map<string, KObject>();
        // RoleBindings of namespaces not read fresh come from the cache; those read fresh, and every
        // ClusterRoleBinding, from the fresh lists.
        for (const b of this.cache.bindingsFor(ns))
            if (b.kind === "RoleBinding" ? !this.rbs.covers(nsOf(b)) : !this.crbs) out.set(identityOf(b), b);
        for (const n of [ns, EVERY_NAMESPACE])
            for (const b of [...(crbs?.get(n) ?? []), ...(this.rbsBySubject.get(n) ?? [])]) out.set(identityOf(b), b);
        return [...out.values()];
    }

    applicationsFor(ns: string): KObject[] {
        return this.cache.applicationsFor(ns);
    }

    aggregatingClusterRoles(): KObject[] {
        return this.cache.aggregatingClusterRoles();
    }

    aggregatedClusterRoles(): KObject[] {
        return this.cache.aggregatedClusterRoles();
    }

    unreadableFor(namespaces: Iterable<string>): UnreadableObject[] {
        // A fresh read that met one fails the view (FreshView.read throws), so only the cache's remain.
        return this.cache.unreadableFor(namespaces);
    }

    stackNamespaces(): string[] {
        const out = new Set(this.cache.stackNamespaces().filter((n) => !this.stacks.covers(n)));
        for (const n of this.stacks.namespaces()) out.add(n);
        return [...out];
    }
}
