/**
 * What a resource's properties become on the analyzer's wire: the engine sends them as a
 * `google.protobuf.Struct`, and the policy SDK reads them back with `Struct.toJavaScript()`. The round trip
 * (google-protobuf's `Struct.fromJavaScript(x).toJavaScript()`) copies plain JSON with three visible effects:
 * each object's keys come back sorted (code-unit order: the Struct's map sorts its keys), a `__proto__` key is
 * dropped (the map stores keys as properties of a plain object), and anything that is not JSON (undefined, a
 * hole, a function, a bigint, a symbol) throws "Unexpected struct type.". Done here in one pass instead of
 * building a message object for every value (most of `check`'s time on large repositories);
 * test/check/struct.spec.ts requires identical results, key order and errors to google-protobuf's on
 * generated values.
 */

function copy(v: unknown): unknown {
    switch (typeof v) {
        case "string":
        case "number":
        case "boolean":
            return v;
        case "object":
            if (v === null) return null;
            if (Array.isArray(v)) {
                const out = new Array<unknown>(v.length);
                for (let i = 0; i < v.length; i++) out[i] = copy(v[i]);
                return out;
            }
            return copyObject(v as Record<string, unknown>);
        default:
            throw new Error("Unexpected struct type.");
    }
}

function copyObject(o: Record<string, unknown>): Record<string, unknown> {
    const keys: string[] = [];
    const values: unknown[] = [];
    // Every enumerable key, inherited ones included, as the Struct's `for ... in` reads them; a `__proto__`
    // key's value is converted (it can throw) and then lost, as in the Struct's map.
    for (const k in o) {
        const v = copy(o[k]);
        if (k === "__proto__") continue;
        keys.push(k);
        values.push(v);
    }
    const order = keys.map((_, i) => i).sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
    const out: Record<string, unknown> = {};
    for (const i of order) out[keys[i]] = values[i];
    return out;
}

/** `Struct.fromJavaScript(props).toJavaScript()`, as google-protobuf gives it. */
export function structRoundTrip(props: Record<string, unknown>): Record<string, unknown> {
    return copyObject(props);
}
