/**
 * What admission reads of the cluster: the cache, or the cache overlaid with fresh reads.
 *
 * An informer cache trails the API server by the time a watch event takes to arrive: a `kubectl apply` of a
 * file that holds a cluster-admin binding and then the Stack it empowers sends the Stack for review before
 * the cache may have seen the binding. So the cross-object rules do not judge from the cache alone: for the
 * object under review, the bindings that can reach its namespaces (every ClusterRoleBinding, and the
 * RoleBindings of those namespaces) and the Stacks of those namespaces are read fresh from the API server
 * (quorum lists, list permission only) and replace what the cache holds of them. A fresh read that fails
 * means the state cannot be told: the decision fails closed.
 */
import { ClusterCache, subjectNamespaces } from "./cache";
import { KObject, identityOf } from "./kinds";

export interface ClusterView {
    list(kind: string, ns?: string): KObject[];
    get(kind: string, ns: string, name: string): KObject | undefined;
    bindingsFor(ns: string): KObject[];
    stackNamespaces(): string[];
}

/** Lists one kind (in one namespace, or all) straight from the API server, as `keepReadable` keeps objects. */
export type FreshList = (kind: string, ns?: string) => Promise<KObject[]>;

function nsOf(o: KObject): string {
    const n = (o.metadata ?? {}).namespace;
    return typeof n === "string" ? n : "";
}

/** The cache overlaid with fresh lists of bindings (all ClusterRoleBindings, RoleBindings of `namespaces`) and Stacks of `namespaces`. */
export class FreshView implements ClusterView {
    private constructor(
        private readonly cache: ClusterCache,
        private readonly namespaces: Set<string>,
        private readonly crbs: KObject[],
        private readonly rbs: Map<string, KObject[]>,
        private readonly stacks: Map<string, KObject[]>,
    ) {}

    static async read(cache: ClusterCache, namespaces: Set<string>, fresh: FreshList): Promise<FreshView> {
        const list = [...namespaces];
        const [crbs, rbs, stacks] = await Promise.all([fresh("ClusterRoleBinding"), Promise.all(list.map((n) => fresh("RoleBinding", n))), Promise.all(list.map((n) => fresh("Stack", n)))]);
        return new FreshView(cache, namespaces, crbs, new Map(list.map((n, i) => [n, rbs[i]])), new Map(list.map((n, i) => [n, stacks[i]])));
    }

    list(kind: string, ns?: string): KObject[] {
        if (kind === "ClusterRoleBinding") return this.crbs;
        const fresh = kind === "RoleBinding" ? this.rbs : kind === "Stack" ? this.stacks : undefined;
        if (fresh && ns !== undefined && fresh.has(ns)) return fresh.get(ns)!;
        if (fresh && ns === undefined) return [...this.cache.list(kind).filter((o) => !fresh.has(nsOf(o))), ...[...fresh.values()].flat()];
        return this.cache.list(kind, ns);
    }

    get(kind: string, ns: string, name: string): KObject | undefined {
        if (kind === "ClusterRoleBinding" || ((kind === "RoleBinding" || kind === "Stack") && this.namespaces.has(ns))) {
            return this.list(kind, ns).find((o) => (o.metadata ?? {}).name === name);
        }
        return this.cache.get(kind, ns, name);
    }

    bindingsFor(ns: string): KObject[] {
        const covers = (b: KObject) => subjectNamespaces(b).some((n) => n === ns || n === "*any*");
        const out = new Map<string, KObject>();
        // RoleBindings of other namespaces come from the cache; those of the fresh namespaces, and every
        // ClusterRoleBinding, from the fresh lists.
        for (const b of this.cache.bindingsFor(ns)) if (b.kind === "RoleBinding" && !this.rbs.has(nsOf(b))) out.set(identityOf(b), b);
        for (const b of [...this.crbs, ...[...this.rbs.values()].flat()]) if (covers(b)) out.set(identityOf(b), b);
        return [...out.values()];
    }

    stackNamespaces(): string[] {
        const out = new Set(this.cache.stackNamespaces().filter((n) => !this.stacks.has(n)));
        for (const [n, list] of this.stacks) if (list.length > 0) out.add(n);
        return [...out];
    }
}
