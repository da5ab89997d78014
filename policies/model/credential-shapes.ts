/**
 * Credentials recognised by the shape of a value, whatever the field holding it is called. Each shape is
 * one a credential has and ordinary configuration does not (a bare login name in a URL is not one; an AWS
 * key id is, since it is only ever used with its secret). Only the shape's name is ever reported, never the
 * value or any part of it.
 */

/** Values longer than this are scanned only in their first part (a bound on hostile input). */
const MAX_SCAN = 1 << 20;
/** At most this many URLs or tokens of one value are looked at. */
const MAX_PARTS = 256;

interface Shape {
    what: string;
    test: (v: string) => boolean;
}

// Every pattern is linear on hostile input: fixed prefixes with bounded runs, or applied to disjoint tokens.
const re = (what: string, pattern: RegExp): Shape => ({ what, test: (v) => pattern.test(v) });

const QUERY_CREDENTIAL =
    /^(access_token|id_token|refresh_token|token|auth|auth_token|api_key|apikey|api-key|password|passwd|pwd|secret|client_secret|sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)$/i;

/** The URLs in a text: each `scheme://...` up to whitespace or a quote, its scheme at most 32 characters. */
function urls(v: string): URL[] {
    const out: URL[] = [];
    let from = 0;
    while (out.length < MAX_PARTS) {
        const at = v.indexOf("://", from);
        if (at < 0) break;
        from = at + 3;
        let start = at;
        while (start > 0 && at - start < 32 && /[A-Za-z0-9+.-]/.test(v[start - 1])) start--;
        if (start === at || !/[A-Za-z]/.test(v[start])) continue;
        let end = from;
        while (end < v.length && end - from < 8192 && !/[\s"'<>`]/.test(v[end])) end++;
        try {
            out.push(new URL(v.slice(start, end)));
        } catch {
            // not a URL
        }
    }
    return out;
}

// A URL has a password only after an `@`, and a query only after a `?` (WHATWG URL parsing): a text without
// them is not parsed at all (most values a rule scans are plain names and URLs without either).
function userInfoPassword(v: string): boolean {
    return v.includes("@") && urls(v).some((u) => u.password.length > 0);
}

function queryCredential(v: string): boolean {
    return (
        v.includes("?") &&
        urls(v).some((u) =>
            [...u.searchParams].some(([name, value]) => value.length > 0 && QUERY_CREDENTIAL.test(name)),
        )
    );
}

/** JWTs: tokens of base64url characters and dots, `eyJ<header>.eyJ<payload>.<signature>`. */
function jwt(v: string): boolean {
    // A JWT is a token of at least 40 characters that starts with `eyJ`: a text without both has none, and is
    // not split into tokens (most values a rule scans are short names and URLs).
    if (v.length < 40 || !v.includes("eyJ")) return false;
    let n = 0;
    for (const m of v.matchAll(/[A-Za-z0-9_.-]{40,}/g)) {
        if (/^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/.test(m[0])) return true;
        if (++n >= MAX_PARTS * 16) break;
    }
    return false;
}

const GCP_TYPE = /"type"\s*:\s*"service_account"/;
const GCP_KEY = /"private_key"\s*:\s*"/;

export const SHAPES: readonly Shape[] = [
    re("a PEM private key", /-----BEGIN [A-Z0-9 ]{0,64}PRIVATE KEY( BLOCK)?-----/),
    { what: "a URL with a password in its user-info", test: userInfoPassword },
    { what: "a URL with a credential in its query", test: queryCredential },
    { what: "a GCP service-account key", test: (v) => GCP_TYPE.test(v) && GCP_KEY.test(v) },
    re("an AWS access key id", /\b(AKIA|ASIA)[0-9A-Z]{16}\b/),
    { what: "a JWT", test: jwt },
    re("a Pulumi access token", /\bpul-[0-9a-f]{40}\b/),
    re("a GitHub token", /\bgh[pousr]_[A-Za-z0-9]{30,255}\b|\bgithub_pat_[A-Za-z0-9_]{30,255}/),
    re("a GitLab token", /\bglpat-[A-Za-z0-9_-]{20,255}/),
    re("a Slack token", /\bxox[abprs]-[A-Za-z0-9-]{10,255}/),
    re("an Azure storage account key", /AccountKey=[A-Za-z0-9+/]{40,255}/),
];

/** The name of the credential shape a string has, or undefined. Never returns any part of the value. */
export function credentialShape(value: unknown): string | undefined {
    if (typeof value !== "string" || value.length < 8) return undefined;
    const v = value.length > MAX_SCAN ? value.slice(0, MAX_SCAN) : value;
    for (const s of SHAPES) if (s.test(v)) return s.what;
    return undefined;
}

/** A GCP service-account key given as an object (a JSON config value) rather than as text. */
function objectShape(v: Record<string, unknown>): string | undefined {
    if (v.type === "service_account" && typeof v.private_key === "string") return "a GCP service-account key";
    return undefined;
}

export interface FoundShape {
    /** Path below the value's field: "" for the value itself, else `.a.b[0]`. */
    at: string;
    what: string;
}

/**
 * Every credential shape in a value and, for objects and lists (JSON config values, Program
 * expressions), in everything nested in it, up to `limit` findings. Walks at most `maxNodes` nodes and
 * `maxDepth` levels; `truncated` says the walk stopped early (callers fail closed on it).
 */
export function findCredentialShapes(
    value: unknown,
    opts: { limit?: number; maxNodes?: number; maxDepth?: number } = {},
): { found: FoundShape[]; truncated: boolean } {
    const limit = opts.limit ?? 5;
    const maxNodes = opts.maxNodes ?? 20000;
    const maxDepth = opts.maxDepth ?? 64;
    const found: FoundShape[] = [];
    let nodes = 0;
    let truncated = false;
    const seen = new Set<object>();
    const walk = (v: unknown, at: string, depth: number): void => {
        if (found.length >= limit || truncated) return;
        if (++nodes > maxNodes || depth > maxDepth) {
            truncated = true;
            return;
        }
        if (typeof v === "string") {
            const what = credentialShape(v);
            if (what) found.push({ at, what });
            return;
        }
        if (v === null || typeof v !== "object" || seen.has(v)) return;
        seen.add(v);
        if (Array.isArray(v)) {
            v.forEach((x, i) => walk(x, `${at}[${i}]`, depth + 1));
            return;
        }
        const obj = v as Record<string, unknown>;
        const what = objectShape(obj);
        if (what) {
            found.push({ at, what });
            return;
        }
        for (const [k, x] of Object.entries(obj))
            walk(
                x,
                /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k.slice(0, 64))}]`,
                depth + 1,
            );
    };
    walk(value, "", 0);
    return { found, truncated };
}
