/**
 * Reading decoded JSON or YAML (manifests, live objects, tool output) without trusting its shape: each helper
 * answers undefined, or an empty list, for a value of another type. The rules read their inputs with their own
 * helpers (policies/model/values.ts), which also carry the preview's unknown values.
 */

/** A map: an object that is neither null nor an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
    return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The value when it is a map (isRecord), else undefined. */
export function record(v: unknown): Record<string, unknown> | undefined {
    return isRecord(v) ? v : undefined;
}

/** The value when it is a string, else undefined. */
export function str(v: unknown): string | undefined {
    return typeof v === "string" ? v : undefined;
}

/** The value when it is a list, else an empty list. */
export function list(v: unknown): unknown[] {
    return Array.isArray(v) ? v : [];
}
