/**
 * What counts as a credential: environment variable names, config keys and literal values that look
 * like secrets. Used by the credentials rule; kept apart so that it can be unit-tested and tuned.
 */
import { credentialShape } from "./credential-shapes";
import { compilePattern, patternProblem } from "./production";

/** Cloud and tool credentials whose names do not follow the generic patterns. */
const KNOWN_CREDENTIAL_NAMES = new Set([
    "PULUMI_ACCESS_TOKEN",
    "PULUMI_CONFIG_PASSPHRASE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "ARM_CLIENT_SECRET",
    "ARM_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_CREDENTIALS",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "DIGITALOCEAN_TOKEN",
    "CLOUDFLARE_API_TOKEN",
    "GITHUB_TOKEN",
    "KUBECONFIG_DATA",
]);

/** Generic name shapes: `*_TOKEN`, `*_SECRET*`, `*_PASSWORD`, `*_KEY`, passphrases, credentials. */
const CREDENTIAL_NAME =
    /(^|_)TOKEN$|(^|_)SECRET|(^|_)PASSWORD$|(^|_)PASSWD$|(^|_)KEY$|PASSPHRASE|(^|_)CREDENTIALS?($|_)|(^|_)API_?KEY($|_)|PRIVATE_?KEY/;

/** Config keys that hold secrets (the part after `project:` is what is checked). */
const SECRET_CONFIG_KEY =
    /(password|passwd|passphrase|secret|token|api[-_]?key|private[-_]?key|credential|access[-_]?key)/i;

/**
 * Variables whose value names a file holding a credential (the documented way to point a tool at a
 * Secret mounted as a file): the variable's value is a path, not a credential.
 */
const FILE_POINTER_NAMES = new Set([
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AZURE_FEDERATED_TOKEN_FILE",
    "KUBECONFIG",
]);

function canonical(name: string): string {
    return name.toUpperCase().replace(/[-.]/g, "_");
}

/** Whether a variable names a file that holds a credential: the known ones and every `*_FILE` / `*_PATH`. */
export function isFilePointerName(name: string): boolean {
    const upper = canonical(name);
    return FILE_POINTER_NAMES.has(upper) || /_(FILE|PATH)$/.test(upper);
}

/**
 * Whether a value is a file path and nothing else: an absolute path, or one starting with `./`, `../`
 * or `~/` (KUBECONFIG: a colon-separated list of such paths), on one line, without quotes, braces or
 * whitespace, and not itself credential-looking. Inline content (a JSON key, a PEM block, a token) is not.
 */
export function isPathValue(value: string): boolean {
    if (value.length === 0 || value.length > 4096 || looksLikeCredential(value)) return false;
    return value.split(":").every((part) => /^(\/|\.\.?\/|~\/)[^\s"'{}<>|\\]*$/.test(part));
}

/** The first extraCredentialNames entry that is not valid RE2 syntax, as a message part; undefined when all are. */
export function extraNamesProblem(extraPatterns: string[]): string | undefined {
    return patternProblem("extraCredentialNames", extraPatterns);
}

/**
 * Whether a variable name holds a credential: the known names, the generic shapes, and
 * `extraPatterns` (whole-name RE2 matches; invalid ones are reported by `extraNamesProblem`). A
 * file-pointer variable (`isFilePointerName`) is not, unless `extraPatterns` names it.
 */
export function isCredentialName(name: string, extraPatterns: string[] = []): boolean {
    if (
        extraPatterns.some((p) => compilePattern(p) !== undefined && compilePattern(`^(?:${p})$`)?.test(name) === true)
    ) {
        return true;
    }
    if (isFilePointerName(name)) return false;
    const upper = canonical(name);
    return KNOWN_CREDENTIAL_NAMES.has(upper) || CREDENTIAL_NAME.test(upper);
}

export function isSecretConfigKey(key: string): boolean {
    const bare = key.includes(":") ? key.slice(key.lastIndexOf(":") + 1) : key;
    return SECRET_CONFIG_KEY.test(bare);
}

/** Whether a value is a credential by its shape (credential-shapes.ts): names aside, what it holds. */
export function looksLikeCredential(value: unknown): boolean {
    return credentialShape(value) !== undefined;
}

/**
 * Where a URL carries a credential, or undefined: its user-info part (`https://user:pass@host`) or a
 * query parameter named like one (`?access_token=...`, `?sig=...`), or a credential-looking value anywhere.
 */
export function urlCredentialPart(
    url: string,
): "the user-info part" | "a query parameter" | "a credential-looking value" | undefined {
    const t = url.trim();
    // User-info needs an `@`, a query a `?`: most URLs have neither, and only their value is looked at.
    const m = t.includes("@") ? /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*)@/i.exec(t) : null;
    if (m && (m[1].includes(":") || looksLikeCredential(m[1]) || m[1].length >= 20)) return "the user-info part";
    const query = t.includes("?") ? (/\?([^#]*)/.exec(t)?.[1] ?? "") : "";
    for (const pair of query === "" ? [] : query.split(/[&;]/)) {
        const name = pair.split("=")[0];
        if (name && (SECRET_CONFIG_KEY.test(name) || /^(sig|signature)$/i.test(name))) return "a query parameter";
    }
    return looksLikeCredential(t) ? "a credential-looking value" : undefined;
}

/**
 * A repository or backend URL as a message may show it: scheme, host and path only, never user-info,
 * query or fragment. An scp-like git address (`git@host:org/repo`) keeps host and path.
 */
export function displayUrl(url: string): string {
    const t = url.trim();
    const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^/?#]*@)?([^/?#]*)([^?#]*)/i.exec(t);
    const shown = m ? m[1] + m[2] + m[3] : /^(?:[^@\s/]+@)?([^:\s/@]+):([^?#\s]*)$/.exec(t)?.slice(1).join(":");
    if (shown === undefined || looksLikeCredential(shown)) return "(URL not shown)";
    return shown.length > 160 ? `${shown.slice(0, 157)}...` : shown;
}
