/**
 * What the cluster door knows about a change besides the object it stores (the context of the one rule
 * implementation: policies/model/review.ts), and which changes no rule can judge differently. `metadataOnly`
 * covers what PKO, Argo CD and the garbage collector change to let a deleted object go, so a violating object
 * can still be released; `judgesDeletion` names the kinds whose DELETE a rule judges (`about.deletion`).
 */
import { ARGO_HOOK, HELM_HOOK, HOOK_WEIGHT, SYNC_WAVE } from "../policies/model/sync-waves";
import { SOURCE_PATH } from "../policies/model/origin";
import { WAIVE_ANNOTATION } from "../policies/model/waivers";
import { ReviewContext, Requester, stackMatcher, stacksIndex } from "../policies/model/review";
import { policies } from "../policies/index";
import { EvalResource } from "../evaluation/evaluate";
import { KObject, clusterResource, identityOf } from "./kinds";
import { ClusterView } from "./view";
import { record } from "../support/records";
import { extended } from "../support/shapes";

/** The prefix of an annotation key up to its last `/` (the key itself when it has none). */
function prefixOf(key: string): string {
    const slash = key.lastIndexOf("/");
    return slash < 0 ? key : key.slice(0, slash + 1);
}

/**
 * The annotation prefixes a rule reads (Argo CD's and Helm's hooks and waves, pko-guard's waivers and source
 * paths) or PKO acts on (`pulumi.com/` and `auto.pulumi.com/`: a reconciliation request re-runs the Stack): a
 * change of one is judged like any other.
 */
export const READ_ANNOTATION_PREFIXES: readonly string[] = [
    ...new Set([ARGO_HOOK, SYNC_WAVE, HELM_HOOK, HOOK_WEIGHT, SOURCE_PATH, WAIVE_ANNOTATION].map(prefixOf)),
    "argocd.argoproj.io/",
    "pulumi.com/",
    "auto.pulumi.com/",
];

/** Whether a rule reads (or PKO acts on) an annotation. */
export function readAnnotation(key: string): boolean {
    return READ_ANNOTATION_PREFIXES.some((p) => (p.endsWith("/") ? key.startsWith(p) : key === p));
}

/** Metadata the API server keeps (never a rule's input). */
const SERVER_METADATA = ["managedFields", "resourceVersion", "generation"];
/** Metadata an object being deleted loses as its holders let it go. */
const RELEASING_METADATA = ["finalizers", "ownerReferences"];

/** The object without what no rule reads, as sorted JSON (compared, never shown). */
function judgedPart(o: KObject, deleting: boolean): string {
    const metadata: Record<string, unknown> = { ...(record(o.metadata) ?? {}) };
    for (const k of SERVER_METADATA) delete metadata[k];
    if (deleting) for (const k of RELEASING_METADATA) delete metadata[k];
    // The annotations a rule reads, or none (an empty map and none are one).
    const read = Object.entries(record(metadata.annotations) ?? {}).filter(([k]) => readAnnotation(k));
    if (read.length > 0) metadata.annotations = Object.fromEntries(read);
    else delete metadata.annotations;
    // No rule reads a status (Argo CD writes an Application's through the object itself).
    const { status: _status, ...rest } = o;
    return sorted(extended(rest, { metadata }));
}

function sorted(v: unknown): string {
    return JSON.stringify(v, (_k, x: unknown) => {
        const r = record(x);
        return r
            ? Object.fromEntries(
                  Object.keys(r)
                      .sort()
                      .map((k) => [k, r[k]]),
              )
            : x;
    });
}

/**
 * Whether an UPDATE from `old` to `next` changes only what no rule reads (the module comment). Both objects have
 * been read by decodeObject first (bounded depth).
 */
export function metadataOnly(old: KObject, next: KObject): boolean {
    const deleting = record(next.metadata)?.deletionTimestamp !== undefined;
    return judgedPart(old, deleting) === judgedPart(next, deleting);
}

/** The AdmissionReview's user, as the rules read it (absent: no one may reclassify). */
export function requesterOf(userInfo: unknown): Requester | undefined {
    const u = record(userInfo);
    if (typeof u?.username !== "string") return undefined;
    const groups = Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === "string") : [];
    return { username: u.username, groups };
}

/**
 * The Pulumi stack an object names: a Stack's `spec.stack`, an Update's `spec.stackName` (the stack it deploys or
 * destroys); undefined for anything else.
 */
function stackNamed(o: KObject): string | undefined {
    const spec = record(o.spec);
    const name = o.kind === "Stack" ? spec?.stack : o.kind === "Update" ? spec?.stackName : undefined;
    return typeof name === "string" ? name : undefined;
}

/** The cluster's Stacks (but `o` itself) naming the Pulumi stack `o` (a Stack or an Update) names. */
export function stacksNamingSame(o: KObject, view: ClusterView): KObject[] {
    const name = stackNamed(o);
    if (name === undefined) return [];
    const me = identityOf(o);
    const same = stackMatcher(name);
    return view.list("Stack").filter((s) => {
        const other = record(s.spec)?.stack;
        return typeof other === "string" && same(other) && identityOf(s) !== me;
    });
}

/** The context of a review of `incoming` (its earlier version `old`, if any) for the rules. */
export function reviewContext(
    incoming: EvalResource,
    old: KObject | undefined,
    peers: KObject[],
    requester: Requester | undefined,
): ReviewContext {
    const stacks = peers.map(clusterResource);
    return {
        earlier: new Map(old ? [[incoming.urn, clusterResource(old)]] : []),
        stacksNaming: () => stacks,
        ...(requester ? { requester } : {}),
    };
}

/**
 * The context of a judgement of the whole cluster (`pko-guard audit`): every Stack, looked up by the Pulumi stack
 * it names, so a Stack another production Stack's stack makes production is judged so, as the door judges it.
 */
export function clusterReview(objects: readonly KObject[]): ReviewContext {
    const stacks = objects.flatMap((o) => {
        const stack = o.kind === "Stack" ? record(o.spec)?.stack : undefined;
        return typeof stack === "string" ? [{ resource: clusterResource(o), stack }] : [];
    });
    return { earlier: new Map(), stacksNaming: stacksIndex(stacks) };
}

/** The policies that judge a deletion (their `about.deletion` says why). */
export const DELETION_RULES: ReadonlySet<string> = new Set(
    policies.filter((p) => p.about.deletion !== undefined).map((p) => p.name),
);

/** Whether a rule judges the deletion of an object of this kind (a PKO Stack). */
export function judgesDeletion(o: KObject): boolean {
    return o.kind === "Stack" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("pulumi.com/");
}
