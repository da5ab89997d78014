/**
 * What the cluster cache holds (cache.ts fills it from lists and watches): the objects of each watched kind
 * as `keepReadable` keeps them, the objects pko-guard could not read, and the indexes admission picks related
 * objects by. Bindings are indexed by the namespaces their subjects cover (binding-reach.ts); aggregating
 * ClusterRoles with the roles they select are recomputed when a ClusterRole changes.
 */
import { Decoded, KObject, UnreadableObject, identityOf, unreadableIdentity } from "./kinds";
import { selectedRoles } from "./aggregated-roles";
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { escapeText } from "../support/escape";

export type KindState = "syncing" | "synced" | "absent" | "error";

const CLUSTER = "";

export function meta(o: KObject): Record<string, unknown> {
    return o.metadata ?? {};
}

/** An Application's destination namespace (spec.destination.namespace), when it names one. */
export function destinationOf(o: KObject): string | undefined {
    const spec = o.spec as { destination?: { namespace?: unknown } } | undefined;
    const ns = spec && typeof spec === "object" ? spec.destination?.namespace : undefined;
    return typeof ns === "string" && ns ? ns : undefined;
}

class KindStore {
    /** namespace ("" when cluster-scoped) -> identity -> object */
    readonly byNs = new Map<string, Map<string, KObject>>();
    size = 0;
    set(o: KObject): KObject | undefined {
        const ns = (meta(o).namespace as string) || CLUSTER;
        let m = this.byNs.get(ns);
        if (!m) this.byNs.set(ns, (m = new Map<string, KObject>()));
        const id = identityOf(o);
        const prev = m.get(id);
        if (!prev) this.size++;
        m.set(id, o);
        return prev;
    }
    delete(o: KObject): KObject | undefined {
        const ns = (meta(o).namespace as string) || CLUSTER;
        const m = this.byNs.get(ns);
        const id = identityOf(o);
        const prev = m?.get(id);
        if (prev) {
            m!.delete(id);
            this.size--;
            if (m!.size === 0) this.byNs.delete(ns);
        }
        return prev;
    }
    all(): KObject[] {
        const out: KObject[] = [];
        for (const m of this.byNs.values()) out.push(...m.values());
        return out;
    }
}

/** Adds (or removes) `o` under `key` of a two-level index. */
function indexed(index: Map<string, Map<string, KObject>>, key: string, o: KObject, add: boolean): void {
    let m = index.get(key);
    if (add) {
        if (!m) index.set(key, (m = new Map<string, KObject>()));
        m.set(identityOf(o), o);
    } else if (m) {
        m.delete(identityOf(o));
        if (m.size === 0) index.delete(key);
    }
}

export class ClusterStore {
    private readonly stores = new Map<string, KindStore>();
    /** kind -> identity -> an object of that kind pko-guard could not read (not in `stores`). */
    private readonly unreadables = new Map<string, Map<string, UnreadableObject>>();
    /** subject namespace (or EVERY_NAMESPACE) -> binding identity -> binding */
    private readonly bindingsBySubject = new Map<string, Map<string, KObject>>();
    /** Argo CD Applications by destination namespace, and the aggregating ClusterRoles (identity -> object). */
    private readonly applicationsByDestination = new Map<string, Map<string, KObject>>();
    private readonly aggregating = new Map<string, KObject>();
    /** The ClusterRoles the aggregating ones select; undefined once a ClusterRole changed (recomputed on use). */
    private aggregated?: KObject[];

    constructor(
        kinds: readonly string[],
        private readonly logEvent: (event: string, fields: Record<string, unknown>) => void = () => undefined,
    ) {
        for (const k of kinds) {
            this.stores.set(k, new KindStore());
            this.unreadables.set(k, new Map());
        }
    }

    /** The objects of a kind (or of every kind) that pko-guard could not read, none of them stored. */
    unreadable(kind?: string): UnreadableObject[] {
        if (kind) return [...(this.unreadables.get(kind)?.values() ?? [])];
        return [...this.unreadables.values()].flatMap((m) => [...m.values()]);
    }

    /** The objects pko-guard could not read that could change a decision about these namespaces. */
    unreadableFor(namespaces: Iterable<string>): UnreadableObject[] {
        const wanted = new Set(namespaces);
        return this.unreadable().filter((u) => u.everywhere || u.namespaces.some((n) => wanted.has(n)));
    }

    /** Objects held of a kind (or of every kind); those that could not be read are not held (unreadable()). */
    size(kind?: string): number {
        if (kind) return this.stores.get(kind)?.size ?? 0;
        let n = 0;
        for (const s of this.stores.values()) n += s.size;
        return n;
    }

    /** Objects of a kind in a namespace ("" for cluster-scoped kinds), or in every namespace when ns is undefined. */
    list(kind: string, ns?: string): KObject[] {
        const store = this.stores.get(kind);
        if (!store) return [];
        if (ns === undefined) return store.all();
        return [...(store.byNs.get(ns)?.values() ?? [])];
    }

    get(kind: string, ns: string, name: string): KObject | undefined {
        return this.stores
            .get(kind)
            ?.byNs.get(ns)
            ?.get(ns ? `${kind}/${ns}/${name}` : `${kind}/${name}`);
    }

    /** Bindings (RoleBinding, ClusterRoleBinding) with a ServiceAccount subject in `ns`, or any Group/User subject. */
    bindingsFor(ns: string): KObject[] {
        return [
            ...(this.bindingsBySubject.get(ns)?.values() ?? []),
            ...(this.bindingsBySubject.get(EVERY_NAMESPACE)?.values() ?? []),
        ];
    }

    /** Argo CD Applications whose destination is namespace `ns`. */
    applicationsFor(ns: string): KObject[] {
        return [...(this.applicationsByDestination.get(ns)?.values() ?? [])];
    }

    /** ClusterRoles with an aggregationRule (their rules are those of the ClusterRoles they select). */
    aggregatingClusterRoles(): KObject[] {
        return [...this.aggregating.values()];
    }

    /** The ClusterRoles an aggregating ClusterRole selects, transitively (aggregated-roles.ts selectedRoles). */
    aggregatedClusterRoles(): KObject[] {
        if (this.aggregating.size === 0) return [];
        this.aggregated ??= selectedRoles(this.list("ClusterRole"));
        return this.aggregated;
    }

    /**
     * Namespaces holding at least one Stack or Workspace (one that could not be read included): where a
     * program runs as an account of its namespace.
     */
    stackNamespaces(): string[] {
        const out = new Set<string>();
        for (const kind of ["Stack", "Workspace"]) {
            for (const n of this.stores.get(kind)?.byNs.keys() ?? []) out.add(n);
            for (const u of this.unreadable(kind)) if (u.namespace) out.add(u.namespace);
        }
        return [...out];
    }

    private index(o: KObject, add: boolean): void {
        if (o.kind === "Application") {
            const dest = destinationOf(o);
            if (dest !== undefined) indexed(this.applicationsByDestination, dest, o, add);
            return;
        }
        if (o.kind === "ClusterRole") {
            this.aggregated = undefined;
            if (add && o.aggregationRule) this.aggregating.set(identityOf(o), o);
            else this.aggregating.delete(identityOf(o));
            return;
        }
        if (o.kind !== "RoleBinding" && o.kind !== "ClusterRoleBinding") return;
        for (const ns of accountNamespaces(o)) indexed(this.bindingsBySubject, ns, o, add);
    }

    /** Stores a decoded object (replacing its previous version), or records it as unreadable (dropping that one). */
    protected put(kind: string, d: Decoded): void {
        if (d.unreadable) {
            const u = d.unreadable;
            const prev = this.stores.get(kind)!.delete({ kind, metadata: { namespace: u.namespace, name: u.name } });
            if (prev) this.index(prev, false);
            this.unreadables.get(kind)!.set(unreadableIdentity(u), u);
            this.logEvent("cache.unreadable", {
                kind,
                namespace: escapeText(u.namespace),
                name: escapeText(u.name),
                reason: u.reason,
            });
            return;
        }
        const o = d.object;
        this.unreadables.get(kind)!.delete(identityOf(o));
        const prev = this.stores.get(kind)!.set(o);
        if (prev) this.index(prev, false);
        this.index(o, true);
    }

    protected remove(kind: string, raw: KObject): void {
        const o: KObject = { kind, metadata: raw.metadata };
        const prev = this.stores.get(kind)!.delete(o);
        if (prev) this.index(prev, false);
        this.unreadables.get(kind)!.delete(identityOf(o));
    }

    /** Replaces a kind's objects (and those of it that could not be read) with `items`, as a list does. */
    protected replace(kind: string, items: Decoded[]): void {
        for (const o of this.stores.get(kind)!.all()) this.remove(kind, o);
        this.unreadables.get(kind)!.clear();
        for (const d of items) this.put(kind, d);
    }
}
