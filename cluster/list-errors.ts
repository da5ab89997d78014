/**
 * What the cache reads from a failed list or watch: a one-line text for its log, and whether the answer says the
 * kind is not served (its CRD is not installed) or the list's continue token expired (410).
 */

/** An error as one line of at most 300 characters, for the cache's log. */
export function errorText(e: unknown): string {
    const m = e instanceof Error ? e.message : String(e);
    return m.split("\n")[0].slice(0, 300);
}

/** A 410 answer to a list: its continue token expired (a watch's 410 is handled where the watch ends). */
export function isExpired(e: unknown): boolean {
    return (e as { code?: number }).code === 410;
}

/** A list that failed because the API group or kind is not served (its CRD is not installed). */
export function isAbsent(e: unknown): boolean {
    const code = (e as { code?: number; statusCode?: number }).code ?? (e as { statusCode?: number }).statusCode;
    return code === 404 || /Unrecognized API version and kind|404|not found/i.test(errorText(e));
}
