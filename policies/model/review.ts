/**
 * What a judgement knows besides the resources it judges: the context the evaluation seam hands the rules when it
 * has one (evaluation/evaluate.ts). A preview has none; the cluster door supplies an object's earlier version,
 * the other Stacks of the same Pulumi stack and the requester. Rules never read it directly: production.ts
 * `classifyInContext` turns it into the one classification they read.
 */
import { ResourceLike } from "./stack";

/** Who asks for a change under review. */
export interface Requester {
    username: string;
    groups: readonly string[];
}

export interface ReviewContext {
    /** Earlier versions of objects under review, by their URN in the evaluation. */
    earlier: ReadonlyMap<string, ResourceLike>;
    /**
     * Stack objects judged with the ones under review that may name the Pulumi stack `stack` (at least every one
     * that does, by `sameStack`; the caller checks).
     */
    stacksNaming(stack: string): readonly ResourceLike[];
    requester?: Requester;
}

/**
 * Where a program-level judgement stands when the evaluation judges several scopes, each as its own program
 * (`check`: the clusters objects land in): this scope's name as messages say it (`in cluster "..."`, quoted and
 * escaped by whoever names it), and the other scopes with their resources, so that a message can say what is
 * true elsewhere (a Stack in another cluster) without judging it here. Absent with one scope (a preview).
 */
export interface ScopeContext {
    name: string;
    others: readonly { name: string; resources: readonly ResourceLike[] }[];
}

/** No context: a preview, `check`. */
export const NO_REVIEW: ReviewContext = { earlier: new Map(), stacksNaming: () => [] };

/** The last segment of a stack's key: every name `sameStack` matches with it ends with the same. */
function lastSegment(stack: string): string | undefined {
    const key = stackKey(stack);
    return key === undefined ? undefined : key.slice(key.lastIndexOf("/") + 1);
}

/**
 * `stacksNaming` over `stacks` (each with the `spec.stack` it names), indexed by the last segment of their names:
 * a cluster's thousands of Stacks are looked up, never walked, for each Stack judged.
 */
export function stacksIndex(
    stacks: readonly { resource: ResourceLike; stack: string }[],
): ReviewContext["stacksNaming"] {
    const index = new Map<string, ResourceLike[]>();
    for (const { resource, stack } of stacks) {
        const last = lastSegment(stack);
        if (last === undefined) continue;
        const list = index.get(last);
        if (list) list.push(resource);
        else index.set(last, [resource]);
    }
    return (stack) => {
        const last = lastSegment(stack);
        return last === undefined ? [] : (index.get(last) ?? []);
    };
}

/**
 * A Pulumi stack's name as the door compares it: `spec.stack` trimmed, without empty segments, in lower case (a
 * backend's organization and project names are not told apart by case here; treating two spellings as one stack
 * can only make more Stacks production, never fewer). Undefined for an empty name.
 */
export function stackKey(stack: string): string | undefined {
    const parts = stack
        .trim()
        .toLowerCase()
        .split("/")
        .filter((p) => p !== "");
    return parts.length > 0 ? parts.join("/") : undefined;
}

/**
 * Whether two `spec.stack` values can name one Pulumi stack: equal keys, or the shorter one's segments are the
 * longer one's last (`prod`, `app/prod` and `acme/app/prod` can all be one stack: PKO completes a short name with
 * the token's default organization and the program's project, which the door cannot see).
 */
export function sameStack(a: string, b: string): boolean {
    return stackMatcher(a)(b);
}

/**
 * `sameStack` with one side fixed, its key computed once: the cluster door compares one Stack's name with every
 * Stack of the cluster. A name whose last segment differs is told apart without being split.
 */
export function stackMatcher(a: string): (b: string) => boolean {
    const x = stackKey(a);
    if (x === undefined) return () => false;
    const xs = x.split("/");
    const last = xs[xs.length - 1];
    return (b: string) => {
        if (!b.toLowerCase().includes(last)) return false;
        const y = stackKey(b);
        if (y === undefined) return false;
        if (x === y) return true;
        const ys = y.split("/");
        const [s, l] = xs.length < ys.length ? [xs, ys] : [ys, xs];
        return s.length < l.length && l.length <= 3 && s.every((part, i) => part === l[l.length - s.length + i]);
    };
}
