/**
 * What counts as a credential: environment variable names, config keys and literal values that look
 * like secrets. Used by the credentials rule; kept apart so that it can be unit-tested and tuned.
 */
import { compilePattern } from "./production";

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
const CREDENTIAL_NAME = /(^|_)TOKEN$|(^|_)SECRET|(^|_)PASSWORD$|(^|_)PASSWD$|(^|_)KEY$|PASSPHRASE|(^|_)CREDENTIALS?($|_)|(^|_)API_?KEY($|_)|PRIVATE_?KEY/;

/** Config keys that hold secrets (the part after `project:` is what is checked). */
const SECRET_CONFIG_KEY = /(password|passwd|passphrase|secret|token|api[-_]?key|private[-_]?key|credential|access[-_]?key)/i;

/** Literal values that are credentials whatever the field is called. */
const CREDENTIAL_VALUES: RegExp[] = [
    /\bpul-[0-9a-f]{40}\b/, // Pulumi access token
    /\b(AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key id
    /\bgh[pousr]_[A-Za-z0-9]{30,}\b/, // GitHub tokens
    /\bgithub_pat_[A-Za-z0-9_]{30,}\b/,
    /\bglpat-[A-Za-z0-9_-]{20,}\b/, // GitLab
    /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/, // Slack
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

export function isCredentialName(name: string, extraPatterns: string[] = []): boolean {
    const upper = name.toUpperCase().replace(/[-.]/g, "_");
    if (KNOWN_CREDENTIAL_NAMES.has(upper) || CREDENTIAL_NAME.test(upper)) {
        return true;
    }
    return extraPatterns.some((p) => compilePattern(`^(?:${p})$`)?.test(name) === true);
}

export function isSecretConfigKey(key: string): boolean {
    const bare = key.includes(":") ? key.slice(key.lastIndexOf(":") + 1) : key;
    return SECRET_CONFIG_KEY.test(bare);
}

export function looksLikeCredential(value: unknown): boolean {
    return typeof value === "string" && CREDENTIAL_VALUES.some((re) => re.test(value));
}

/** True when a URL carries a password or a token in its user-info part (`https://user:pass@host`). */
export function urlHasEmbeddedCredentials(url: string): boolean {
    const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*)@/i.exec(url.trim());
    if (!m) {
        return false;
    }
    const userinfo = m[1];
    return userinfo.includes(":") || looksLikeCredential(userinfo) || userinfo.length >= 20;
}
