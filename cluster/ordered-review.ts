/**
 * One review at the door, bounded and ordered: grant scope first (grant-scope.ts), then the review locks
 * (review-locks.ts) and a read overlaid with what this replica admitted (admitted.ts), so of two reviews that
 * together make a violation on one replica the second sees the first. A binding that reaches many namespaces
 * is judged first against a few Stack namespaces (FIRST_PROOF): a mandatory finding there is enough to deny.
 * Across replicas, claims through the API server (claims.ts) order the same keys: a review claims them once it
 * holds the local locks and before it reads the cluster, and keeps them until what it admitted shows in the
 * cache. The enforce loop (enforce.ts) stays the backstop for what outlasts a claim.
 */
import {
    AdmissionInput,
    Decision,
    JudgeOptions,
    ViewAround,
    judgeAdmission,
    judgeAdmissionFresh,
    namespacesOf,
} from "./admission";
import { AdmittedOverlay } from "./admitted";
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { ClusterCache } from "./cache";
import { boundRole, isBinding, mayGrantForbidden } from "./grant-scope";
import { KObject, UnreadableObject, decodeObject, isWatchedKind } from "./kinds";
import { ALL, ReviewLocks } from "./review-locks";
import { Claim, ClaimKeys, Claims } from "./claims";
import { FreshList } from "./shared-reads";
import { ClusterView } from "./view";
import { escapeText } from "../support/escape";
import { record } from "../support/records";

/** How many namespaces holding Stacks a binding reaching every namespace is judged with first. */
export const FIRST_PROOF = 4;

export interface ReviewInput extends AdmissionInput {
    /** A dry run: judged, never recorded as admitted. */
    dryRun?: boolean;
}

export interface ReviewContext {
    cache: ClusterCache;
    judge: JudgeOptions;
    overlay: AdmittedOverlay;
    locks: ReviewLocks;
    /** Fresh reads of the review, all under its deadline; absent when judging from the cache alone. */
    fresh?: () => FreshList;
    /** The review's deadline: waiting for other reviews ends then. */
    deadline?: AbortSignal;
    /** Claims across replicas (claims.ts); absent: ordered within this replica only. */
    claims?: Claims;
}

function nsOf(o: KObject): string {
    const n = (o.metadata ?? {}).namespace;
    return typeof n === "string" ? n : "";
}

/** A view whose namespaces holding Stacks are narrowed to `allowed` (none: an empty set). */
class NarrowedView implements ClusterView {
    constructor(
        private readonly inner: ClusterView,
        private readonly allowed: ReadonlySet<string>,
    ) {}
    stackNamespaces(): string[] {
        return this.inner.stackNamespaces().filter((n) => this.allowed.has(n));
    }
    list(kind: string, ns?: string): KObject[] {
        return this.inner.list(kind, ns);
    }
    get(kind: string, ns: string, name: string): KObject | undefined {
        return this.inner.get(kind, ns, name);
    }
    bindingsFor(ns: string): KObject[] {
        return this.inner.bindingsFor(ns);
    }
    applicationsFor(ns: string): KObject[] {
        return this.inner.applicationsFor(ns);
    }
    aggregatingClusterRoles(): KObject[] {
        return this.inner.aggregatingClusterRoles();
    }
    aggregatedClusterRoles(): KObject[] {
        return this.inner.aggregatedClusterRoles();
    }
    unreadableFor(namespaces: Iterable<string>): UnreadableObject[] {
        return this.inner.unreadableFor(namespaces);
    }
}

/**
 * The keys a review claims across replicas (claims.ts): its review keys, a binding's role shared (a binding reads
 * its role, never changes it, so bindings of one role do not wait for each other); a binding that grants nothing
 * forbidden claims its role alone (with a Stack of its namespace it makes no violation; with a change of its role
 * it may, and a review of that role claims the key exclusively).
 */
export function claimKeys(o: KObject, view: ClusterView, forbidden: boolean): ClaimKeys {
    const keys = reviewKeys(o, view, forbidden);
    if (!isBinding(o)) return { exclusive: keys, shared: [] };
    const role = keys.filter((k) => k.startsWith("role:"));
    return { exclusive: forbidden ? keys.filter((k) => !k.startsWith("role:")) : [], shared: role };
}

function narrowed(inner: ClusterView, allowed: ReadonlySet<string>): ClusterView {
    return new NarrowedView(inner, allowed);
}

/**
 * The keys a review holds (review-locks.ts): the namespaces whose Stacks and accounts it concerns, the role a
 * binding names or a role is, ALL for what reaches every namespace's accounts (a binding to a group of every
 * account that can grant what is forbidden, a ClusterRole, which any binding may name).
 */
export function reviewKeys(o: KObject, view: ClusterView, forbidden: boolean): string[] {
    const keys = new Set<string>();
    const ns = nsOf(o);
    if (ns) keys.add(`ns:${ns}`);
    const reach = (b: KObject) => {
        for (const n of accountNamespaces(b)) keys.add(n === EVERY_NAMESPACE ? ALL : `ns:${n}`);
    };
    if (isBinding(o)) {
        const role = boundRole(o);
        if (role) keys.add(`role:${role.kind}/${role.ns}/${role.name}`);
        if (forbidden) reach(o);
    } else if (o.kind === "Role") {
        keys.add(`role:Role/${ns}/${String((o.metadata ?? {}).name ?? "")}`);
        if (forbidden) for (const b of bindingsNaming(o, view)) reach(b);
    } else if (o.kind === "ClusterRole") keys.add(ALL);
    else if (o.kind === "Application") {
        const dest = record(record(o.spec)?.destination)?.namespace;
        if (typeof dest === "string" && dest) keys.add(`ns:${dest}`);
    }
    return [...keys];
}

/** The role a binding names, as the review reads it: fresh, with this replica's admitted objects over it. */
async function roleOf(b: KObject, base: ClusterView, fresh?: FreshList): Promise<KObject | undefined> {
    const ref = boundRole(b);
    if (!ref) return undefined;
    if (!fresh) return base.get(ref.kind, ref.ns, ref.name);
    const read = await fresh(ref.kind, ref.kind === "Role" ? ref.ns : undefined, ref.name);
    const live = read.find((r) => (r.metadata ?? {}).name === ref.name);
    // What this replica admitted wins over what the API server shows (it may not show it yet).
    return base.get(ref.kind, ref.ns, ref.name) ?? live;
}

/** The RoleBindings of a Role's namespace that name it. */
function bindingsNaming(role: KObject, view: ClusterView): KObject[] {
    const name = (role.metadata ?? {}).name;
    return view
        .list("RoleBinding", nsOf(role))
        .filter((b) => record(b.roleRef)?.kind === "Role" && record(b.roleRef)?.name === name);
}

/**
 * Whether the object can make a binding grant what a rule forbids: a binding, read as roleOf reads its role; a
 * Role, as it would be, through any RoleBinding naming it (a Role nothing binds grants nothing, and a binding
 * of it reviewed later is judged with it). Anything else is judged whole.
 */
async function forbiddenGrant(o: KObject, base: ClusterView, fresh?: FreshList): Promise<boolean> {
    if (isBinding(o)) return mayGrantForbidden(o, await roleOf(o, base, fresh), base);
    if (o.kind === "Role") {
        const bindings = fresh
            ? await fresh("RoleBinding", nsOf(o)).then((l) => admittedOver(l, base, o))
            : bindingsNaming(o, base);
        return bindings.some((b) => mayGrantForbidden(b, o, base));
    }
    return true;
}

/** The RoleBindings naming `role`, read fresh or as this replica sees them (its admitted ones too): either counts. */
function admittedOver(read: KObject[], base: ClusterView, role: KObject): KObject[] {
    const name = (role.metadata ?? {}).name;
    const names = (b: KObject) => record(b.roleRef)?.kind === "Role" && record(b.roleRef)?.name === name;
    const mine = bindingsNaming(role, base);
    const ids = new Set(mine.map((b) => String((b.metadata ?? {}).name)));
    return [...mine, ...read.filter((b) => names(b) && !ids.has(String((b.metadata ?? {}).name)))];
}

function blocks(d: Decision): boolean {
    return d.findings.some((f) => f.status === "blocking");
}

/** A refusal of pko-guard's own (the review could not be judged in time), allowed with a warning when warn-only. */
function busy(o: KObject, why: string, warnOnly: boolean): Decision {
    const line = `pko-guard-cluster-state: ${why}; the object is refused, retry`;
    if (warnOnly) return { allowed: true, warnings: [`would deny: ${line}`], findings: [] };
    const name = `${String(o.kind)} ${nsOf(o) ? `${nsOf(o)}/` : ""}${String((o.metadata ?? {}).name ?? "")}`;
    return {
        allowed: false,
        message: `pko-guard denied ${escapeText(name)}:\n- ${escapeText(line)}`,
        warnings: [],
        findings: [],
    };
}

/** The decision on one review (see the module comment). */
export async function reviewObject(input: ReviewInput, ctx: ReviewContext): Promise<Decision> {
    const judgeWith = async (base: ClusterView, over: (v: ClusterView) => ClusterView, fresh?: FreshList) => {
        if (!fresh) return judgeAdmission(input, ctx.cache, ctx.judge, over(base));
        const around: ViewAround = { base, over };
        return judgeAdmissionFresh(input, ctx.cache, ctx.judge, fresh, around);
    };
    const raw = input.object;
    const judged =
        (input.operation === "CREATE" || input.operation === "UPDATE") &&
        raw &&
        isWatchedKind(raw.apiVersion, raw.kind);
    const incoming = judged
        ? decodeObject(raw, { kind: String(raw.kind), apiVersion: String(raw.apiVersion) }).object
        : undefined;
    // Not judged, or not readable: admission.ts answers (skipped, or refused), nothing to order or record.
    if (!incoming) return judgeWith(ctx.cache, (v) => v, ctx.fresh?.());

    // A read that fails (its deadline, the API server) refuses, as admission.ts refuses when the state cannot be read.
    const unreadable = (e: unknown) =>
        busy(
            incoming,
            `cluster state cannot be read (${String((e as Error)?.message ?? e)
                .split("\n")[0]
                .slice(0, 200)})`,
            ctx.judge.warnOnly,
        );
    let forbidden: boolean;
    try {
        forbidden = await forbiddenGrant(incoming, ctx.overlay.snapshot()(ctx.cache), ctx.fresh?.());
    } catch (e) {
        return unreadable(e);
    }
    for (;;) {
        let release: () => void;
        try {
            release = await ctx.locks.acquire(
                reviewKeys(incoming, ctx.overlay.snapshot()(ctx.cache), forbidden),
                ctx.deadline,
            );
        } catch (e) {
            return busy(incoming, String((e as Error).message), ctx.judge.warnOnly);
        }
        // Claimed across replicas before the cluster is read; a dry run admits nothing, so it claims nothing.
        let claim: Claim | undefined;
        let mine: KObject | undefined;
        if (ctx.claims && !input.dryRun) {
            try {
                const keys = claimKeys(incoming, ctx.overlay.snapshot()(ctx.cache), forbidden);
                const some = keys.exclusive.length + keys.shared.length > 0;
                claim = some ? await ctx.claims.claim(keys, ctx.deadline ?? neverAborts) : undefined;
            } catch (e) {
                release();
                return busy(incoming, String((e as Error).message), ctx.judge.warnOnly);
            }
        }
        try {
            const admitted = ctx.overlay.snapshot();
            const fresh = ctx.fresh?.();
            const base = admitted(ctx.cache);
            // The role may have changed while this review waited (a review of it holds the same key).
            let now: boolean;
            try {
                now = await forbiddenGrant(incoming, base, fresh);
            } catch (e) {
                return unreadable(e);
            }
            if (now && !forbidden) {
                forbidden = true;
                continue; // wider keys needed: released below, taken again
            }
            const d = await decide(incoming, base, admitted, fresh, now, judgeWith);
            if (d.allowed && !d.skipped && !input.dryRun) {
                ctx.overlay.add(incoming, input.oldObject);
                mine = incoming;
            }
            return d;
        } finally {
            release();
            // Kept until what was admitted shows in the cache (stored): the next holder's fresh read then has it.
            const admittedObject = mine;
            claim?.release(admittedObject ? () => !ctx.overlay.keeps(admittedObject) : undefined);
        }
    }
}

const neverAborts = new AbortController().signal;

async function decide(
    incoming: KObject,
    base: ClusterView,
    admitted: (v: ClusterView) => ClusterView,
    fresh: FreshList | undefined,
    forbidden: boolean,
    judgeWith: (base: ClusterView, over: (v: ClusterView) => ClusterView, fresh?: FreshList) => Promise<Decision>,
): Promise<Decision> {
    if (!forbidden) {
        // Nothing it grants is forbidden: judged with its own namespace (and those its ServiceAccount subjects name).
        const none = new Set<string>();
        return judgeWith(narrowed(base, none), (v) => narrowed(admitted(v), none), fresh);
    }
    // Whatever reaches the accounts of every namespace (a binding to a group of them, a role such a binding
    // names) concerns every namespace holding a Stack: a few of them first.
    const namespaces = namespacesOf(incoming, base).size > FIRST_PROOF + 1 ? base.stackNamespaces() : [];
    if (namespaces.length > FIRST_PROOF) {
        const first = new Set(namespaces.slice(0, FIRST_PROOF));
        const d = await judgeWith(narrowed(base, first), (v) => narrowed(admitted(v), first), fresh);
        if (blocks(d)) return d;
    }
    return judgeWith(base, admitted, fresh);
}
