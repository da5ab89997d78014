/**
 * Judging one object the cluster is about to store, with the cluster's state: the decision `pko-guard
 * webhook` returns. The object is judged with the live objects that can change its verdict (relatedObjects),
 * twice: with the cluster as it is and with the object applied, so a cross-object finding that appears only
 * once it is applied is the object's. The cluster as it was is judged without the object, not with its old
 * version, so an UPDATE of a violating object is denied unless it removes the violation or is metadata-only
 * (change.ts). The decision fails closed until the cache has synced, and whenever an object that could change
 * it cannot be read. Semantics per operation: docs/cluster.md.
 */
import { policies } from "../policies/index";
import { EvalResource, EvalRow, evaluatePack } from "../evaluation/evaluate";
import { judgeRows } from "../evaluation/judge";
import { PackConfig } from "../evaluation/pack-config";
import { Finding } from "../evaluation/rows";
import { ClusterCache } from "./cache";
import { EVERY_NAMESPACE, accountNamespaces } from "./binding-reach";
import { FreshList } from "./shared-reads";
import { ClusterView, FreshView } from "./view";
import { aggregatorNames, selectedRoles } from "./aggregated-roles";
import {
    KObject,
    UnreadableObject,
    clusterResource,
    decodeObject,
    grantsOnlySystemMasters,
    identityOf,
    isWatchedKind,
    unreadableIdentity,
} from "./kinds";
import { record } from "../support/records";
import { escapeText } from "../support/escape";
import { ReviewContext } from "../policies/model/review";
import { DELETION_RULES, judgesDeletion, metadataOnly, requesterOf, reviewContext, stacksNamingSame } from "./change";

export interface Decision {
    allowed: boolean;
    /** The denial message (one line per blocking finding: rule, field, fix). */
    message?: string;
    warnings: string[];
    /** The findings behind the decision (for logs and metrics). */
    findings: Finding[];
    /** Why nothing was judged, when the object is of no kind any rule reads (or a deletion). */
    skipped?: string;
}

export interface AdmissionInput {
    operation: string;
    object?: KObject | null;
    oldObject?: KObject | null;
    /** The AdmissionReview's userInfo (who asks: change.ts `requesterOf`). */
    userInfo?: unknown;
}

export interface JudgeOptions {
    config: PackConfig;
    warnOnly: boolean;
}

const REMEDIATION = new Map(policies.map((p) => [p.name, (p as { remediationSteps?: string }).remediationSteps ?? ""]));

function ns(o: KObject): string {
    const n = (o.metadata ?? {}).namespace;
    return typeof n === "string" ? n : "";
}

/**
 * The namespaces whose Stacks and accounts an object can affect. A binding's are its own (a RoleBinding's)
 * and those whose accounts its subjects can cover (binding-reach.ts): a binding to a group no account is in
 * is not judged with, nor refused for, the Stacks of every namespace.
 */
export function namespacesOf(o: KObject, cache: ClusterView): Set<string> {
    const out = new Set<string>();
    if (ns(o)) out.add(ns(o));
    if (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") {
        for (const n of accountNamespaces(o)) {
            if (n === EVERY_NAMESPACE) for (const s of cache.stackNamespaces()) out.add(s);
            else if (n) out.add(n);
        }
    }
    if (o.kind === "ClusterRole" || o.kind === "Role") {
        // Every binding that names this role, or a ClusterRole it feeds by aggregation, wherever its subjects are.
        const names = new Set([(o.metadata ?? {}).name, ...aggregatorNames(o, cache.aggregatingClusterRoles())]);
        for (const b of [...cache.list("ClusterRoleBinding"), ...cache.list("RoleBinding", ns(o) || undefined)]) {
            const ref = record(b.roleRef);
            if (ref?.kind === o.kind && names.has(ref?.name)) for (const n of namespacesOf(b, cache)) out.add(n);
        }
    }
    if (o.kind === "Application") {
        const dest = record(record(o.spec)?.destination)?.namespace;
        if (typeof dest === "string" && dest) out.add(dest);
    }
    return out;
}

/** The kinds of a namespace judged with an object concerning it (a Workspace's account as a Stack's). */
const NAMESPACE_KINDS = [
    "Stack",
    "Program",
    "Workspace",
    "Update",
    "ServiceAccount",
    "Secret",
    "Role",
    "RoleBinding",
    "Application",
    "GitRepository",
    "OCIRepository",
    "Bucket",
];

/** The live objects related to `o` (see the module comment); `o`'s own live version excluded. */
export function relatedObjects(
    o: KObject,
    cache: ClusterView,
    namespaces: Set<string> = namespacesOf(o, cache),
): KObject[] {
    const picked = new Map<string, KObject>();
    const add = (x: KObject) => picked.set(identityOf(x), x);
    for (const n of namespaces) {
        for (const kind of NAMESPACE_KINDS) for (const x of cache.list(kind, n)) add(x);
        for (const b of cache.bindingsFor(n)) add(b);
    }
    for (const n of namespaces) for (const a of cache.applicationsFor(n)) add(a);
    // The roles the picked bindings (and the object, if a binding) name, and every aggregating ClusterRole
    // with the roles it selects.
    const bindings = [...picked.values(), o].filter((x) => x.kind === "RoleBinding" || x.kind === "ClusterRoleBinding");
    for (const b of bindings) {
        const ref = record(b.roleRef);
        if (typeof ref?.name !== "string") continue;
        const role = ref.kind === "Role" ? cache.get("Role", ns(b), ref.name) : cache.get("ClusterRole", "", ref.name);
        if (role) add(role);
    }
    for (const r of cache.aggregatingClusterRoles()) add(r);
    // An aggregating ClusterRole under review is judged by what its own selectors pick.
    const selected = o.kind === "ClusterRole" && o.aggregationRule ? selectedRoles(cache.list("ClusterRole"), o) : [];
    for (const r of [...cache.aggregatedClusterRoles(), ...selected]) add(r);
    picked.delete(identityOf(o));
    return [...picked.values()].filter((x) => !grantsOnlySystemMasters(x));
}

function key(r: EvalRow): string {
    return `${r.policy}\u0000${r.urn}\u0000${r.message}`;
}

/** Names the field and the fix of a finding, on one line. */
export function describeFinding(f: Finding): string {
    const field = f.field ? ` (field ${f.field})` : "";
    const fix = REMEDIATION.get(f.policy);
    return `${f.policy}: ${f.message}${field}${fix ? ` Fix: ${fix}` : ""}`;
}

/** Whether an admission is judged at all (creates and updates of the kinds rules read; deletions apart). */
function skipReason(input: AdmissionInput): string | undefined {
    if (input.operation === "DELETE") return deletionSkipReason(input);
    const obj = input.object;
    if (input.operation === "CONNECT" || !obj) return "not a create, update or delete";
    if (!isWatchedKind(obj.apiVersion, obj.kind)) return "no rule reads this kind";
    return undefined;
}

/** Whether a DELETE is judged: the deletion of a kind a rule judges on deletion (change.ts `judgesDeletion`). */
function deletionSkipReason(input: AdmissionInput): string | undefined {
    const old = input.oldObject;
    if (!old) return "a deletion sent without the object";
    return judgesDeletion(old) ? undefined : "no rule judges the deletion of this kind";
}

/**
 * The decision with fresh reads of the bindings, roles and Stacks around the object (view.ts); `fresh`
 * lists from the API server. A fresh read that fails denies (unless warn-only), saying the state cannot be told.
 */
export async function judgeAdmissionFresh(
    input: AdmissionInput,
    cache: ClusterCache,
    o: JudgeOptions,
    fresh: FreshList,
    around: ViewAround = {},
): Promise<Decision> {
    const skipped = skipReason(input);
    if (skipped) return { allowed: true, warnings: [], findings: [], skipped };
    // A deletion is judged from the cache: what it reads (the Stacks of the same Pulumi stack) no fresh read holds.
    if (input.operation === "DELETE") return judgeAdmission(input, cache, o);
    const decoded = decodeObject(input.object, kindOf(input.object!));
    if (!decoded.object) return unreadableDecision(decoded.unreadable, o);
    const incoming = decoded.object;
    let view: ClusterView;
    try {
        const base = around.base ?? cache;
        const read = await FreshView.read(base, incoming, namespacesOf(incoming, base), fresh);
        view = around.over ? around.over(read) : read;
    } catch (e) {
        const message = `cluster state cannot be read (${String((e as Error).message)
            .split("\n")[0]
            .slice(0, 200)}); cross-object rules cannot be judged, so the object is refused`;
        return refusal(clusterResource(incoming), CLUSTER_STATE, message, o);
    }
    return judgeAdmission(input, cache, o, view);
}

/**
 * What a review reads besides the cache (cluster/ordered-review.ts): `base` in place of the cache (the objects this
 * replica admitted overlaid, the namespaces judged narrowed), and `over` applied to the view read fresh.
 */
export interface ViewAround {
    base?: ClusterView;
    over?: (fresh: ClusterView) => ClusterView;
}

/** The policy name of a refusal because the cluster state around the object cannot be told. */
const CLUSTER_STATE = "pko-guard-cluster-state";
/** The policy name of a finding on an object pko-guard cannot read (under review, or in audit). */
export const UNREADABLE_OBJECT = "pko-guard-unreadable-object";
/** The names of pko-guard's own refusals (no rule of the pack makes them). */
export const OWN_POLICIES: readonly string[] = [CLUSTER_STATE, UNREADABLE_OBJECT];

/** Findings a denial lists at most (the rest counted), and the characters of each line at most. */
export const DENIAL_LISTED = 10;
export const DENIAL_LINE = 600;

/**
 * The denial message: how many mandatory findings and how many objects they are about, then the first
 * DENIAL_LISTED of them (rule, field, fix), each line clipped to DENIAL_LINE characters, then how many more.
 * A binding that reaches hundreds of Stacks is denied in a few kilobytes; `pko-guard audit` lists everything.
 * Each line is escaped before it is clipped: a value a finding quotes (a map key of the object, say) can
 * neither start a line of its own in what kubectl prints nor carry a terminal escape.
 */
export function denialMessage(subject: string, blocking: Finding[]): string {
    const objects = new Set(blocking.map((f) => f.resource)).size;
    const clip = (line: string) => (line.length <= DENIAL_LINE ? line : `${line.slice(0, DENIAL_LINE - 1)}…`);
    const lines = blocking.slice(0, DENIAL_LISTED).map((f) => clip(`- ${escapeText(describeFinding(f))}`));
    if (blocking.length > DENIAL_LISTED)
        lines.push(`- and ${blocking.length - DENIAL_LISTED} more (pko-guard audit lists every finding)`);
    const about = objects > 1 ? ` about ${objects} objects` : "";
    return `pko-guard denied ${escapeText(subject)}: ${blocking.length} mandatory violation(s)${about}\n${lines.join("\n")}`;
}

function kindOf(obj: KObject): { kind: string; apiVersion: string } {
    return { kind: String(obj.kind), apiVersion: String(obj.apiVersion) };
}

/** A mandatory finding no rule made: the decision fails closed, saying why. */
function stateFinding(me: { name: string; urn: string; type: string }, policy: string, message: string): Finding {
    return {
        policy,
        resource: me.name,
        urn: me.urn,
        type: me.type,
        level: "mandatory",
        status: "blocking",
        message,
    };
}

/** The decision that refuses the object for one fail-closed finding (allowed with a warning when warn-only). */
function refusal(
    me: { name: string; urn: string; type: string },
    policy: string,
    message: string,
    o: JudgeOptions,
): Decision {
    const finding = stateFinding(me, policy, message);
    if (o.warnOnly) return { allowed: true, warnings: [`would deny: ${policy}: ${message}`], findings: [finding] };
    return {
        allowed: false,
        message: `pko-guard denied ${escapeText(me.name)}:\n- ${escapeText(`${policy}: ${message}`)}`,
        warnings: [],
        findings: [finding],
    };
}

/** The decision on an object under review that pko-guard cannot read: refused (fail closed). */
function unreadableDecision(u: UnreadableObject, o: JudgeOptions): Decision {
    const me = clusterResource({
        apiVersion: u.apiVersion,
        kind: u.kind,
        metadata: { namespace: u.namespace, name: u.name },
    });
    return refusal(me, UNREADABLE_OBJECT, `pko-guard cannot judge this object: ${u.reason}, so it is refused`, o);
}

/** Names the first few of `objects` and how many more. */
function someOf(objects: UnreadableObject[]): string {
    const named = objects.slice(0, 3).map((u) => `${unreadableIdentity(u)} (${u.reason})`);
    const more = objects.length > 3 ? ` and ${objects.length - 3} more` : "";
    return `${named.join(", ")}${more}`;
}

/** The decision from `view` (default: the cache alone). */
export function judgeAdmission(
    input: AdmissionInput,
    cache: ClusterCache,
    o: JudgeOptions,
    view: ClusterView = cache,
): Decision {
    const skipped = skipReason(input);
    if (skipped) return { allowed: true, warnings: [], findings: [], skipped };
    if (input.operation === "DELETE") return judgeDeletion(input.oldObject!, input, cache, o, view);
    const decoded = decodeObject(input.object, kindOf(input.object!));
    if (!decoded.object) return unreadableDecision(decoded.unreadable, o);
    const incoming = decoded.object;
    // The earlier version decides what the change is (production is sticky): one that cannot be read refuses.
    const earlier = input.oldObject ? decodeObject(input.oldObject, kindOf(input.oldObject)) : undefined;
    if (earlier && !earlier.object) return unreadableDecision(earlier.unreadable, o);
    const old = earlier?.object;
    if (input.operation === "UPDATE" && old && metadataOnly(input.oldObject!, input.object!))
        return { allowed: true, warnings: [], findings: [], skipped: "a change of nothing a rule reads" };
    const me = clusterResource(incoming);
    const namespaces = namespacesOf(incoming, view);
    const related = relatedObjects(incoming, view, namespaces);
    const review = reviewContext(me, old, stacksNamingSame(incoming, view), requesterOf(input.userInfo));
    // A resource hook's findings depend on its resource, the config and the review alone (evaluation/evaluate.ts
    // Hooks): on a related object they are the same with or without the object under review, so only the object
    // under review runs them; the stack hooks, which can find something new on another object, see everything.
    const after = [
        ...evaluatePack([me], o.config, undefined, "resource", review),
        ...evaluatePack([...related, incoming].map(clusterResource), o.config, undefined, "stack", review),
    ];
    // The cluster without the object needs evaluating only for the rules that found something on another object.
    // Without it, not with its old version: a finding the object takes part in is its own, on an UPDATE too (an
    // update of a Stack whose account is already cluster-admin is denied, not waved through).
    const elsewhere = new Set(after.filter((r) => r.urn !== me.urn).map((r) => r.policy));
    const before =
        elsewhere.size === 0
            ? new Set<string>()
            : new Set(evaluatePack(related.map(clusterResource), o.config, elsewhere, "stack", review).map(key));
    const mine = after.filter((r) => r.urn === me.urn || !before.has(key(r)));
    return decision(me, judgeRows(mine, false), namespaces, cache, o, view);
}

/**
 * The decision on a DELETE of `deleted` (a Stack): the rules that judge a deletion (`about.deletion`), on the
 * object as it is, with the cluster's other Stacks of its Pulumi stack.
 */
function judgeDeletion(
    deleted: KObject,
    input: AdmissionInput,
    cache: ClusterCache,
    o: JudgeOptions,
    view: ClusterView,
): Decision {
    const decoded = decodeObject(deleted, kindOf(deleted));
    if (!decoded.object) return unreadableDecision(decoded.unreadable, o);
    const me = clusterResource(decoded.object);
    const review: ReviewContext = reviewContext(
        me,
        undefined,
        stacksNamingSame(decoded.object, view),
        requesterOf(input.userInfo),
    );
    const rows = evaluatePack([me], o.config, DELETION_RULES, "resource", review).filter((r) =>
        DELETION_RULES.has(r.policy),
    );
    return decision(me, judgeRows(rows, false), namespacesOf(decoded.object, view), cache, o, view, "the deletion of ");
}

/** The decision on `me` from its findings, failing closed on what cannot be read or is not synced yet. */
function decision(
    me: EvalResource,
    findings: Finding[],
    namespaces: Set<string>,
    cache: ClusterCache,
    o: JudgeOptions,
    view: ClusterView,
    what = "",
): Decision {
    const unread = view.unreadableFor(namespaces).filter((u) => unreadableIdentity(u) !== me.name);
    if (unread.length > 0)
        findings.push(
            stateFinding(
                me,
                CLUSTER_STATE,
                `cluster objects that could change this decision cannot be read: ${someOf(unread)}; cross-object rules cannot be judged, so the object is refused until they are fixed or removed`,
            ),
        );
    if (!cache.synced()) {
        const pending = Object.entries(cache.state())
            .filter(([, s]) => s !== "synced" && s !== "absent")
            .map(([k]) => k);
        findings.push(
            stateFinding(
                me,
                CLUSTER_STATE,
                `cluster state is not known yet (not synced: ${pending.join(", ")}); cross-object rules cannot be judged, so the object is refused until the cache has synced`,
            ),
        );
    }
    const blocking = findings.filter((f) => f.status === "blocking");
    const warnings = findings
        .filter((f) => f.status !== "blocking")
        .map((f) =>
            f.status === "waived"
                ? `${f.policy} (waived: ${f.waiver?.reason ?? ""}): ${f.message}`
                : describeFinding(f),
        );
    if (blocking.length === 0) return { allowed: true, warnings, findings };
    if (o.warnOnly)
        return {
            allowed: true,
            warnings: [...blocking.map((f) => `would deny: ${describeFinding(f)}`), ...warnings],
            findings,
        };
    return { allowed: false, message: denialMessage(`${what}${me.name}`, blocking), warnings, findings };
}
