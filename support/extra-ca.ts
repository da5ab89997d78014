/**
 * The user's extra CA certificates (NODE_EXTRA_CA_CERTS) read when a run first needs them, not at start. Node reads
 * that file whole at every start, before any of our code: with a system bundle that is most of a small `check`'s
 * time. So the launcher (bin/cli/pko-guard.sh) hands it to `check` as PKO_GUARD_EXTRA_CA_CERTS instead;
 * `restoreExtraCaCerts` puts it back for the processes the run starts (they trust it as before), and
 * `extraCaOptions` gives this process's own TLS connections the same trust: Node's roots and the file's.
 */
import * as fs from "fs";

/** What Node reads of the file, at most (a CA bundle is a few hundred KiB). */
const MAX_BYTES = 16 * 1024 * 1024;

const HANDED = "PKO_GUARD_EXTRA_CA_CERTS";

/** The file this process started without (undefined: Node read it itself, or there is none). */
let deferred: string | undefined;
let loaded: string[] | undefined;

/** Puts NODE_EXTRA_CA_CERTS back for child processes when the launcher deferred it; idempotent. */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
    const file = env[HANDED];
    if (file === undefined) return;
    delete env[HANDED];
    if (file === "" || env.NODE_EXTRA_CA_CERTS !== undefined) return;
    env.NODE_EXTRA_CA_CERTS = file;
    deferred = file;
}

/**
 * TLS options for a connection of this process: when its start deferred the extra certificates, Node's roots
 * and theirs; else nothing (Node's store already holds them). A file that cannot be read adds nothing, as Node
 * ignores it at start.
 */
export function extraCaOptions(): { ca?: string[] } {
    if (deferred === undefined) return {};
    if (loaded === undefined) {
        let pem = "";
        try {
            if (fs.statSync(deferred).size <= MAX_BYTES) pem = fs.readFileSync(deferred, "utf8");
        } catch {
            pem = "";
        }
        // tls is loaded here, on a run's first TLS connection (a run that fetches nothing does not load it).
        const roots = (require("tls") as typeof import("tls")).rootCertificates;
        loaded = pem.includes("-----BEGIN CERTIFICATE-----") ? [...roots, pem] : [];
    }
    return loaded.length > 0 ? { ca: loaded } : {};
}
