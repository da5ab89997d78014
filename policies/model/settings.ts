/**
 * How pack-wide settings reach the rules, one request at a time. CrossGuard gives each policy only its own
 * config, so the settings policy (listed first, so the analyzer calls it first in every request) publishes
 * its settings for the request, and the rules of that request read them. The analyzer interleaves
 * concurrent requests, so a request is known by what it is about: a resource's URN, or a program's key.
 *
 * Nothing published under one configuration survives another: publishing with a configuration other than
 * the current one resets everything first (an analyzer reconfigured between fixtures, an in-process
 * evaluation with another pack config). In-process evaluators reset before and after each evaluation.
 */
export class RequestSettings<S> {
    private readonly byRequest = new Map<string, S>();
    private configuration: string | undefined;

    constructor(private readonly max = 200000) {}

    /** Publishes the settings of a request, read from `configuration` (its identity, e.g. the config as JSON). */
    publish(request: string, configuration: string, settings: S): void {
        if (configuration !== this.configuration) this.reset();
        this.configuration = configuration;
        this.byRequest.delete(request);
        if (this.byRequest.size >= this.max) this.byRequest.delete(this.byRequest.keys().next().value as string);
        this.byRequest.set(request, settings);
    }

    /** The settings published for a request; undefined when none were (the settings policy did not run). */
    read(request: string | undefined): S | undefined {
        return request === undefined ? undefined : this.byRequest.get(request);
    }

    /** Forgets one request, or everything (as a fresh analyzer process knows nothing). */
    reset(request?: string): void {
        if (request !== undefined) {
            this.byRequest.delete(request);
            return;
        }
        this.byRequest.clear();
        this.configuration = undefined;
    }
}

/**
 * Whether two configurations are the same JSON data with their keys in the same order, so that `JSON.stringify`
 * writes both alike (a configuration's identity). The analyzer hands a policy a new copy of its config in every
 * request; comparing it with the last one read costs less than writing it out. Only plain JSON data is compared:
 * anything else (undefined, a function, a number JSON cannot write, an object that is not a plain object or array)
 * answers false, and the caller writes it out.
 */
export function sameJsonData(a: unknown, b: unknown): boolean {
    if (a === null || typeof a === "string" || typeof a === "boolean") return a === b;
    if (typeof a === "number") return Number.isFinite(a) && a === b && !Object.is(a, -0) && !Object.is(b, -0);
    if (typeof a !== "object" || b === null || typeof b !== "object") return false;
    if (Array.isArray(a)) {
        if (!Array.isArray(b) || Object.getPrototypeOf(a) !== Array.prototype || Object.getPrototypeOf(b) !== Array.prototype || a.length !== b.length) return false;
        for (let i = 0; i < a.length; i++) if (!sameJsonData(a[i], b[i])) return false;
        return true;
    }
    if (Array.isArray(b) || !plainObject(a) || !plainObject(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) {
        if (ka[i] !== kb[i] || !sameJsonData((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]])) return false;
    }
    return true;
}

function plainObject(o: object): boolean {
    const proto = Object.getPrototypeOf(o);
    return (proto === Object.prototype || proto === null) && typeof (o as { toJSON?: unknown }).toJSON !== "function";
}
