/**
 * SOPS-encrypted Secrets, as the tools that decrypt them at apply time read them (Flux's kustomize-controller
 * with `spec.decryption`, KSOPS and helm-secrets for Argo CD). A committed Secret's value that SOPS encrypted is
 * ciphertext, not a committed credential; one SOPS left in the clear (`encrypted_regex`, `unencrypted_suffix` and
 * the like) is as readable as any other.
 */
import { Plain, get, str } from "./values";

/** SOPS's encrypted-value format (getsops/sops aes cipher): `ENC[AES256_GCM,data:...,iv:...,tag:...,type:...]`. */
const ENCRYPTED_VALUE = /^ENC\[AES256_GCM,data:[A-Za-z0-9+/=]+,iv:[A-Za-z0-9+/=]+,tag:[A-Za-z0-9+/=]+,type:[a-z]+\]$/;

/**
 * What marks a whole SOPS-encrypted file (dotenv, INI, JSON or binary, YAML), as kustomize-controller looks for
 * it in a Secret's `data` value (a file a kustomize secretGenerator read, decrypted before it is applied).
 */
const FILE_MARKERS = ['"mac": "ENC[', "sops_mac=ENC[", "[sops]", "mac: ENC["];

/** A Secret's data value longer than this (base64) is not decoded to look for a marker (a bound on hostile input). */
const MAX_DATA = 8 * 1024 * 1024;

/**
 * Whether the object carries SOPS metadata: a top-level `sops` mapping with a `mac`, which is how
 * kustomize-controller tells an encrypted resource (internal/decryptor `isSOPSEncryptedResource`).
 */
export function sopsMetadata(props: Plain): boolean {
    const mac = str(get(props, "sops", "mac"));
    return typeof mac === "string" && mac !== "";
}

/** Whether one value is a SOPS-encrypted value. */
export function sopsValue(value: Plain): boolean {
    return typeof value === "string" && value.length <= MAX_DATA && ENCRYPTED_VALUE.test(value);
}

/** Whether a Secret's `data` value (base64) holds a whole SOPS-encrypted file. */
export function sopsFileValue(value: Plain): boolean {
    if (typeof value !== "string" || value.length > MAX_DATA) return false;
    const text = Buffer.from(value, "base64").toString("utf8");
    return FILE_MARKERS.some((m) => text.includes(m));
}

/** A `data` value (base64) that decodes to a SOPS-encrypted value (a key a kustomize secretGenerator's `envs` made). */
function sopsValueInData(value: Plain): boolean {
    return (
        typeof value === "string" &&
        value.length <= MAX_DATA &&
        sopsValue(Buffer.from(value, "base64").toString("utf8"))
    );
}

/**
 * Whether a Secret's keys come from a SOPS-encrypted dotenv file read by a kustomize secretGenerator's `envs`:
 * SOPS writes its metadata into such a file as `sops_*` keys, `sops_mac` holding the encrypted MAC, and the
 * generator turns every line into a key (kustomize-controller decrypts the file before it builds).
 */
function dotenvMetadata(props: Plain): boolean {
    return sopsValueInData(get(props, "data", "sops_mac")) || sopsValue(get(props, "stringData", "sops_mac"));
}

/**
 * Whether the value of a Secret's `field` (`data` or `stringData`) at `key` is encrypted, or SOPS's own metadata,
 * as the decrypting tools read it: a SOPS value of a Secret that carries SOPS metadata; a `data` value that is a
 * whole SOPS-encrypted file; or, in a Secret generated from an encrypted dotenv file, a value that decodes to a
 * SOPS value and the `sops_*` metadata keys.
 */
export function encryptedSecretValue(props: Plain, field: string, key: string, value: Plain): boolean {
    if (sopsMetadata(props) && sopsValue(value)) return true;
    if (field !== "data") return dotenvMetadata(props) && (sopsValue(value) || key.startsWith("sops_"));
    if (sopsFileValue(value)) return true;
    return dotenvMetadata(props) && (sopsValueInData(value) || key.startsWith("sops_"));
}
