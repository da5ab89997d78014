/**
 * What a resource's properties become on the analyzer's wire: the engine sends them as a
 * `google.protobuf.Struct`, and the policy SDK reads them back with `Struct.toJavaScript()`. That round trip sorts
 * each object's keys (code-unit order), drops a `__proto__` key, and throws "Unexpected struct type." on anything
 * that is not JSON; done here in one pass because building a message per value was most of `check`'s time.
 * test/unit/evaluation/struct.spec.ts holds it to google-protobuf's results, key order and errors.
 */

/**
 * The key that marks a special value on the wire (an asset, an archive, a secret: `@pulumi/pulumi`'s
 * `rpc.specialSigKey`), which the SDK's deserializer turns into an object of its own.
 */
export const SPECIAL_SIG_KEY = "4dabf18193072939515e22adb298388d";

/** Whether the copy being made holds a key SPECIAL_SIG_KEY somewhere (set by copyObject). */
let sawSigKey = false;

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

/**
 * Sorts keys in code-unit order, as the default sort does: a mapping's few keys, mostly in order already, by
 * insertion in place (the default sort allocates a work copy of every array it sorts), many keys by the default sort.
 */
function sortKeys(keys: string[]): void {
    if (keys.length > 32) {
        for (let i = 1; i < keys.length; i++) {
            if (keys[i - 1] > keys[i]) {
                keys.sort();
                return;
            }
        }
        return;
    }
    for (let i = 1; i < keys.length; i++) {
        const k = keys[i];
        let j = i - 1;
        if (keys[j] <= k) continue;
        while (j >= 0 && keys[j] > k) {
            keys[j + 1] = keys[j];
            j--;
        }
        keys[j + 1] = k;
    }
}

function copyObject(o: Record<string, unknown>): Record<string, unknown> {
    // Every enumerable key, inherited ones included, as the Struct's `for ... in` reads them, in code-unit order
    // (the default sort; most manifests' keys are already in order, and then nothing is sorted); a `__proto__`
    // key's value is converted (it can throw) and then lost, as in the Struct's map. Values are converted in
    // that order: what throws is always the same error, whichever value it is.
    const keys: string[] = [];
    for (const k in o) keys.push(k);
    sortKeys(keys);
    const out: Record<string, unknown> = {};
    for (const k of keys) {
        if (k === SPECIAL_SIG_KEY) sawSigKey = true;
        const v = copy(o[k]);
        if (k !== "__proto__") out[k] = v;
    }
    return out;
}

/** `Struct.fromJavaScript(props).toJavaScript()`, as google-protobuf gives it. */
export function structRoundTrip(props: Record<string, unknown>): Record<string, unknown> {
    return wireCopy(props).wire;
}

/**
 * The round trip's result, and whether the SDK's deserializer could read it as anything but the same plain data:
 * only an object with a truthy SPECIAL_SIG_KEY changes in it (its own key, or one every object inherits). When
 * `special` is false the deserializer would return an equal copy (same values, same key order), so the caller may
 * use `wire` itself, which nothing else holds.
 */
export function wireCopy(props: Record<string, unknown>): { wire: Record<string, unknown>; special: boolean } {
    sawSigKey = false;
    const wire = copyObject(props);
    const special = sawSigKey || Boolean((Object.prototype as Record<string, unknown>)[SPECIAL_SIG_KEY]);
    sawSigKey = false;
    return { wire, special };
}
