/**
 * Value helpers shared by every policy. The analyzer's unknown-checking proxy throws `UnknownValueError` on
 * a value unknown during preview, which the engine turns into a skipped advisory diagnostic (a mandatory gate
 * would silently pass), so policies read only `plain()` data, where unknowns are `UNKNOWN`. Secrets arrive
 * unwrapped as plaintext: no helper here ever puts a value into a message.
 */

/** The marker that stands for a value unknown during preview. */
export const UNKNOWN: unique symbol = Symbol.for("pko-guard.unknown");
export type Unknown = typeof UNKNOWN;

/** Sentinels the engine and SDKs use on the wire for values unknown during preview. */
const UNKNOWN_SENTINELS = new Set<string>([
    "04da6b54-80e4-46f7-96ec-b56ff0331ba9", // string (the engine sends this one for every type)
    "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7", // boolean
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421", // number
    "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2", // array
    "030794c1-ac77-496b-92df-f27374a8bd58", // asset
    "e48ece36-62e2-4504-bad9-02848725956a", // archive
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff", // object
]);

/** Signature key and value of a secret as serialized on the wire (in case a caller hands one over). */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** Key the policy SDK's proxy answers with its raw target. */
const PROXY_TARGET = "__getSpecialProxyTarget";

export type Plain = null | boolean | number | string | Unknown | Plain[] | { [key: string]: Plain } | undefined;

/**
 * Returns the raw object behind the policy SDK's unknown-checking proxy, without triggering it. An
 * object that throws when read is not caught here: the error reaches the rule wrappers, which report
 * the resource fail-closed (policy.ts), the one place where an unreadable input is handled.
 */
function unproxy(v: unknown): unknown {
    if (v !== null && typeof v === "object") {
        const target = (v as Record<string, unknown>)[PROXY_TARGET];
        if (target !== undefined && target !== null && typeof target === "object") {
            return target;
        }
    }
    return v;
}

/**
 * Converts any value (proxied, secret-wrapped, cyclic, exotic) into plain data with unknowns replaced
 * by `UNKNOWN`. A value that cannot be represented as data (nested deeper than 64 levels, a cycle, a
 * function, a non-finite number) becomes `UNKNOWN` too, never "absent": the rules then fail closed on it.
 * An input that throws when read propagates to the rule wrappers (policy.ts), which report it.
 */
export function plain(input: unknown): Plain {
    const raw = unproxy(input);
    if (raw === null || typeof raw !== "object") {
        return convert(raw, 0, new Set());
    }
    // Deserialized analyzer inputs are already plain JSON; most contain nothing to convert, and are then
    // used as they are (a scan allocates nothing; a copy is made only when something must change).
    return isAlreadyPlain(raw, 0, new Set()) ? (raw as Plain) : convert(raw, 0, new Set());
}

/** True when a value needs no conversion: JSON data without unknown sentinels or secret wrappers. */
function isAlreadyPlain(v: unknown, depth: number, seen: Set<unknown>): boolean {
    if (v === null) return true;
    switch (typeof v) {
        case "string":
            return !UNKNOWN_SENTINELS.has(v);
        case "boolean":
            return true;
        case "number":
            return Number.isFinite(v);
        case "object":
            break;
        default:
            return false;
    }
    if (depth > 64 || seen.has(v)) return false;
    const proto: unknown = Object.getPrototypeOf(v);
    if (Array.isArray(v)) {
        if (proto !== Array.prototype) return false;
        seen.add(v);
        for (const e of v) if (!isAlreadyPlain(e, depth + 1, seen)) return false;
        return true;
    }
    if (proto !== Object.prototype && proto !== null) return false;
    const o = v as Record<string, unknown>;
    if (o[SIG_KEY] !== undefined || o.__pulumiUnknown !== undefined || o[PROXY_TARGET] !== undefined) return false;
    seen.add(v);
    for (const key in o) {
        if (!Object.prototype.hasOwnProperty.call(o, key)) continue;
        const e = o[key];
        if (e === undefined) continue;
        if (!isAlreadyPlain(e, depth + 1, seen)) return false;
    }
    return true;
}

function convert(input: unknown, depth: number, seen: Set<unknown>): Plain {
    const v = unproxy(input);
    if (v === null || v === undefined) {
        return v;
    }
    switch (typeof v) {
        case "string":
            return UNKNOWN_SENTINELS.has(v) ? UNKNOWN : v;
        case "boolean":
            return v;
        case "number":
            return Number.isFinite(v) ? v : UNKNOWN;
        case "object":
            break;
        default:
            // Symbols (our own marker included), functions, bigints: nothing a rule can read.
            return UNKNOWN;
    }
    if (depth > 64 || seen.has(v)) {
        return UNKNOWN;
    }
    seen.add(v);
    try {
        // The Node SDK's own unknown marker and secret wrappers.
        const o = v as Record<string, unknown>;
        if ((o as { __pulumiUnknown?: unknown }).__pulumiUnknown === true) {
            return UNKNOWN;
        }
        if (o[SIG_KEY] === SECRET_SIG) {
            return convert(o.value, depth + 1, seen);
        }
        if (Array.isArray(v)) {
            return v.map((e) => convert(e, depth + 1, seen));
        }
        const out: { [key: string]: Plain } = {};
        for (const key of Object.keys(o)) {
            out[key] = convert(o[key], depth + 1, seen);
        }
        return out;
    } finally {
        seen.delete(v);
    }
}

export type Obj = { [key: string]: Plain };

export function isObject(v: Plain): v is Obj {
    return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Reads a nested field; returns UNKNOWN as soon as an unknown is crossed, undefined when absent or mistyped. */
export function get(v: Plain, ...path: (string | number)[]): Plain {
    let cur: Plain = v;
    for (const key of path) {
        if (cur === UNKNOWN) {
            return UNKNOWN;
        }
        if (typeof key === "number") {
            if (!Array.isArray(cur)) {
                return undefined;
            }
            cur = cur[key];
        } else {
            if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, key)) {
                return undefined;
            }
            cur = cur[key];
        }
    }
    return cur;
}

/** A string field: the string, UNKNOWN, or undefined (absent or not a string). */
export function str(v: Plain): string | Unknown | undefined {
    return typeof v === "string" || v === UNKNOWN ? v : undefined;
}

/** A boolean field; the strings "true"/"false" count, as Kubernetes YAML often carries them. */
export function bool(v: Plain): boolean | Unknown | undefined {
    if (typeof v === "boolean" || v === UNKNOWN) {
        return v;
    }
    if (v === "true" || v === "false") {
        return v === "true";
    }
    return undefined;
}

export function num(v: Plain): number | Unknown | undefined {
    if (typeof v === "number" || v === UNKNOWN) {
        return v;
    }
    if (typeof v === "string" && /^-?\d+$/.test(v.trim())) {
        return Number(v.trim());
    }
    return undefined;
}

/** The entries of a map field; [] when absent or not an object. */
export function entries(v: Plain): [string, Plain][] {
    return isObject(v) ? Object.entries(v) : [];
}

/** The elements of a list field; [] when absent or not a list. */
export function list(v: Plain): Plain[] {
    return Array.isArray(v) ? v : [];
}

/** Quotes a field name or other non-secret identifier for a message, bounded in length. */
/** A configuration property that lists strings: its strings (others left out), or `fallback` when it is not a list. */
export function configStrings(v: unknown, fallback: string[] = []): string[] {
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === "string") : fallback;
}

export function quote(s: string): string {
    const clean = s.replace(/[\u0000-\u001f\u007f]/g, "?");
    return JSON.stringify(clean.length > 120 ? clean.slice(0, 117) + "..." : clean);
}

/** Adds a value to the list under a key of a map of lists. */
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
}
