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
    memo: Map<string, unknown>;
    /** The policies that ran in it: the analyzer calls each policy once per request, so a second call is another request. */
    ran: Set<string>;
}

let open: Request | undefined;
let active: Request | undefined;

/** Whether the end of this turn of the event loop is already set to close the open request. */
let closing = false;

function closeAtEndOfTurn(): void {
    closing = false;
    open = undefined;
}

/** Opens the request the settings policy is called for (forgetting any other). */
export function openRequest(key: string): void {
    open = { key, memo: new Map(), ran: new Set() };
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
 * the request is closed and nothing is shared.
 */
export function inRequest<T>(key: string | undefined, policy: string, run: () => T): T {
    const before = active;
    active = undefined;
    if (key !== undefined && open !== undefined && open.key === key) {
        if (open.ran.has(policy)) open = undefined;
        else {
            open.ran.add(policy);
            active = open;
        }
    }
    try {
        return run();
    } finally {
        active = before;
    }
}

/** What `build` returns, computed once per open request under `name` (each call computes when no request is open). */
export function memoized<T>(name: string, build: () => T): T {
    const request = active;
    if (request === undefined) return build();
    if (request.memo.has(name)) return request.memo.get(name) as T;
    const value = build();
    request.memo.set(name, value);
    return value;
}

/**
 * What `build` returns for one item of the request (a resource, by its URN), computed once per open request
 * under `name`; `same` tells whether an entry built earlier is for this very item.
 */
export function memoizedFor<K, T>(name: string, item: K, same: (earlier: T) => boolean, build: () => T): T {
    const request = active;
    if (request === undefined) return build();
    let byItem = request.memo.get(name) as Map<K, T> | undefined;
    if (byItem === undefined) {
        byItem = new Map();
        request.memo.set(name, byItem);
    }
    const earlier = byItem.get(item);
    if (earlier !== undefined && same(earlier)) return earlier;
    const value = build();
    byItem.set(item, value);
    return value;
}

/** The part of a memo name that identifies a list of resources of the request (its size and ends, as its key does). */
export function listKey(resources: readonly { urn?: unknown }[]): string {
    return `${resources.length}:${String(resources[0]?.urn)}:${String(resources[resources.length - 1]?.urn)}`;
}
