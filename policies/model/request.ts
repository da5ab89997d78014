/**
 * What one analyzer request derives from its resources, shared by the policies of that request.
 *
 * The analyzer hands every policy its own deserialized copy of a request's properties, so without help each
 * of the pack's policies converts the same resource (values.ts `plain`), builds the same Stack view, and for
 * AnalyzeStack joins the same patches and builds the same RBAC model and identities again. The settings
 * policy is called first in every request (policies/index.ts), and opens the request here (`openRequest`,
 * keyed as settings.ts keys requests: the resource's URN, or the program's key); the rule wrappers run each
 * rule inside the request it belongs to (`inRequest`), and the model memoizes what it derives in it
 * (`memoized`). The first policy computes, the others reuse.
 *
 * Only one request is open at a time, and only until the current turn of the event loop ends (the SDK runs
 * a request's synchronous policies in one turn), or until another request opens, or an in-process evaluator
 * ends its evaluation (`endRequests`): nothing survives into another request, preview or configuration.
 * A rule run outside the open request (another key, the settings policy disabled, remediation) memoizes
 * nothing and computes everything itself, as before. Shared results are never mutated (callers copy).
 */

interface Request {
    key: string;
    /** Made on the first memoized result. */
    memo: Map<string, unknown> | undefined;
    /** Which request this is (`ranIn`). */
    id: number;
}

let open: Request | undefined;
let active: Request | undefined;

/** The id of the last request opened. */
let lastId = 0;

/**
 * The policies that ran in a request: the id of the last request each policy ran in (the analyzer calls each
 * policy once per request, so a second call is another request). One entry a policy, for every request, rather
 * than a set for each request.
 */
const ranIn = new Map<string, number>();

/** Whether the end of this turn of the event loop is already set to close the open request. */
let closing = false;

function closeAtEndOfTurn(): void {
    closing = false;
    open = undefined;
}

/** Opens the request the settings policy is called for (forgetting any other). */
export function openRequest(key: string): void {
    open = { key, memo: undefined, id: ++lastId };
    // Ends with this turn of the event loop at the latest (one timer a turn, holding no request); another
    // request may open before.
    if (!closing) {
        closing = true;
        setImmediate(closeAtEndOfTurn).unref();
    }
}

/** Forgets the open request (an in-process evaluation ends; tests). */
export function endRequests(): void {
    open = undefined;
}

/**
 * Runs a policy's rule (once per call of the policy) in the request known by `key`: inside it the model shares
 * what it derives, when that request is open and this policy has not run in it yet. A policy that runs twice
 * under one open key is in a request that the settings policy did not open (it was disabled meanwhile): then
 * the request is closed and nothing is shared. `run` gets `arg` (so that a caller needs no closure per call).
 */
export function inRequest<T, A = undefined>(key: string | undefined, policy: string, run: (arg: A) => T, arg?: A): T {
    const before = active;
    active = undefined;
    if (key !== undefined && open !== undefined && open.key === key) {
        if (ranIn.get(policy) === open.id) open = undefined;
        else {
            ranIn.set(policy, open.id);
            active = open;
        }
    }
    try {
        return run(arg as A);
    } finally {
        active = before;
    }
}

/** What `build` returns, computed once per open request under `name` (each call computes when no request is open). */
export function memoized<T>(name: string, build: () => T): T {
    const request = active;
    if (request === undefined) return build();
    const memo = (request.memo ??= new Map());
    if (memo.has(name)) return memo.get(name) as T;
    const value = build();
    memo.set(name, value);
    return value;
}

/**
 * What `build(arg)` returns for one item of the request (a resource, by its URN), computed once per open request
 * under `name`; `same(earlier, arg)` tells whether an entry built earlier is for this very item. (`arg` is passed
 * along so that callers need no closures per call.)
 */
export function memoizedFor<K, T, A>(name: string, item: K, arg: A, same: (earlier: T, arg: A) => boolean, build: (arg: A) => T): T {
    const request = active;
    if (request === undefined) return build(arg);
    const memo = (request.memo ??= new Map());
    let byItem = memo.get(name) as Map<K, T> | undefined;
    if (byItem === undefined) {
        byItem = new Map();
        memo.set(name, byItem);
    }
    const earlier = byItem.get(item);
    if (earlier !== undefined && same(earlier, arg)) return earlier;
    const value = build(arg);
    byItem.set(item, value);
    return value;
}

/** The part of a memo name that identifies a list of resources of the request (its size and ends, as its key does). */
export function listKey(resources: readonly { urn?: unknown }[]): string {
    return `${resources.length}:${String(resources[0]?.urn)}:${String(resources[resources.length - 1]?.urn)}`;
}
