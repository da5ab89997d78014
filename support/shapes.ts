/**
 * Objects made on the hot paths (one or more for every resource, row and finding) without spread literals that add
 * keys.
 * In Node 20's V8, `{ ...from, key }` with a key `from` lacks gives each object a hidden class of its own: at 10k
 * objects, megamorphic reads and memory kept for the run. Built key by key, they share one. Measured in
 * test/integration/support/hidden-classes.spec.ts.
 */

/**
 * `{ ...from, ...extra }`: the same own enumerable string keys in the same order with the same values (a key of
 * `extra` that `from` has keeps its place and takes `extra`'s value; a `__proto__` key is an own property, as a
 * spread makes it, never the prototype), as an object whose hidden class objects made alike share.
 */
export function extended<T extends object, U extends object>(from: T, extra: U): Omit<T, keyof U> & U {
    const out: Record<string, unknown> = {};
    copyInto(out, from as Record<string, unknown>);
    copyInto(out, extra as Record<string, unknown>);
    return out as Omit<T, keyof U> & U;
}

function copyInto(out: Record<string, unknown>, from: Record<string, unknown>): void {
    for (const k of Object.keys(from)) {
        if (k === "__proto__")
            Object.defineProperty(out, k, { value: from[k], enumerable: true, writable: true, configurable: true });
        else out[k] = from[k];
    }
}
