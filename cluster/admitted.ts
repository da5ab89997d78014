/**
 * What this replica admitted that the cluster may not show yet: the API server stores an object only after
 * every webhook has answered, so a review a few milliseconds later would read the cluster without it. Admitted
 * objects are overlaid on later reviews' reads until the cache shows them or `ttlMs` passes: a write refused
 * later is judged as stored for that long (stricter, never looser).
 */
import { performance } from "perf_hooks";
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { KObject, UnreadableObject, identityOf } from "./kinds";
import { ClusterView } from "./view";
import { record } from "../support/records";

/** How long an admitted object is overlaid when the cache does not show it (ms). */
export const ADMITTED_TTL_MS = 30_000;
const MAX_OBJECTS = 10_000;

interface Entry {
    object: KObject;
    /** The resourceVersion the update was made against (undefined for a create). */
    base?: string;
    at: number;
}

function nsOf(o: KObject): string {
    const n = (o.metadata ?? {}).namespace;
    return typeof n === "string" ? n : "";
}

function nameOf(o: KObject): string {
    return String((o.metadata ?? {}).name ?? "");
}

function text(v: unknown): string | undefined {
    return typeof v === "string" && v !== "" ? v : undefined;
}

export class AdmittedOverlay {
    private readonly entries = new Map<string, Entry>();

    constructor(
        /** Where stored objects show up (the cache). */
        private readonly seen: Pick<ClusterView, "get">,
        private readonly ttlMs = ADMITTED_TTL_MS,
        private readonly now: () => number = () => performance.now(),
        private readonly maxObjects = MAX_OBJECTS,
    ) {}

    /** Records an admitted object; `old` is the object it updates, when an update. */
    add(object: KObject, old?: KObject | null): void {
        const id = identityOf(object);
        this.entries.delete(id);
        this.entries.set(id, { object, base: text(old?.metadata?.resourceVersion), at: this.now() });
        while (this.entries.size > this.maxObjects) this.entries.delete(this.entries.keys().next().value!);
    }

    /** Whether `object` is kept now: admitted here, not yet shown by the cache nor expired. */
    keeps(object: KObject): boolean {
        this.prune();
        return this.entries.has(identityOf(object));
    }

    /** Objects kept now (after dropping those the cache shows, or expired). */
    size(): number {
        this.prune();
        return this.entries.size;
    }

    private prune(): void {
        const now = this.now();
        for (const [id, e] of this.entries) {
            if (now - e.at >= this.ttlMs) {
                this.entries.delete(id);
                continue;
            }
            const cached = this.seen.get(String(e.object.kind), nsOf(e.object), nameOf(e.object));
            const uid = text(e.object.metadata?.uid);
            const rv = text(cached?.metadata?.resourceVersion);
            if (cached && uid !== undefined && text(cached.metadata?.uid) === uid && rv !== e.base)
                this.entries.delete(id);
        }
    }

    /**
     * The objects kept now, to overlay on views (`inner` itself when none is kept). Taken once a review holds its
     * keys and before it reads the cluster: an object dropped before then is in the cache, so in every read made
     * after; one dropped later is still in the snapshot.
     */
    snapshot(): (inner: ClusterView) => ClusterView {
        this.prune();
        const objects = [...this.entries.values()].map((e) => e.object);
        return (inner) => (objects.length === 0 ? inner : new OverlaidView(inner, objects));
    }
}

/** A view with some objects replaced or added. */
class OverlaidView implements ClusterView {
    private readonly ids: Set<string>;
    private readonly kinds: Set<string>;

    constructor(
        private readonly inner: ClusterView,
        private readonly objects: KObject[],
    ) {
        this.ids = new Set(objects.map(identityOf));
        this.kinds = new Set(objects.map((o) => String(o.kind)));
    }

    private mine(kind: string, ns?: string): KObject[] {
        return this.objects.filter((o) => o.kind === kind && (ns === undefined || nsOf(o) === ns));
    }

    private merged(inner: KObject[], extra: KObject[]): KObject[] {
        return [...inner.filter((o) => !this.ids.has(identityOf(o))), ...extra];
    }

    list(kind: string, ns?: string): KObject[] {
        // Nothing of this kind overlaid (a list of every Stack, say): the list as it is.
        if (!this.kinds.has(kind)) return this.inner.list(kind, ns);
        return this.merged(this.inner.list(kind, ns), this.mine(kind, ns));
    }

    get(kind: string, ns: string, name: string): KObject | undefined {
        return this.mine(kind, ns).find((o) => nameOf(o) === name) ?? this.inner.get(kind, ns, name);
    }

    bindingsFor(ns: string): KObject[] {
        const extra = this.objects.filter(
            (o) =>
                (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") &&
                accountNamespaces(o).some((n) => n === ns || n === EVERY_NAMESPACE),
        );
        return this.merged(this.inner.bindingsFor(ns), extra);
    }

    stackNamespaces(): string[] {
        const out = new Set(this.inner.stackNamespaces());
        for (const o of this.objects) if (o.kind === "Stack" || o.kind === "Workspace") out.add(nsOf(o));
        return [...out];
    }

    applicationsFor(ns: string): KObject[] {
        const extra = this.objects.filter(
            (o) => o.kind === "Application" && record(record(o.spec)?.destination)?.namespace === ns,
        );
        return this.merged(this.inner.applicationsFor(ns), extra);
    }

    aggregatingClusterRoles(): KObject[] {
        const extra = this.objects.filter((o) => o.kind === "ClusterRole" && o.aggregationRule);
        return this.merged(this.inner.aggregatingClusterRoles(), extra);
    }

    aggregatedClusterRoles(): KObject[] {
        return this.inner.aggregatedClusterRoles();
    }

    unreadableFor(namespaces: Iterable<string>): UnreadableObject[] {
        return this.inner.unreadableFor(namespaces);
    }
}
