/**
 * The HTTPS servers of `pko-guard webhook`: the review server and, when asked for, a health server (probes and
 * metrics) on a port of its own.
 *
 * - The certificate and key are read from files and read again when either changes (cert-manager and kubelet
 *   secret-volume updates swap them in place; both files are polled, inotify misses the symlink swap of a mounted
 *   Secret); a pair that does not load is logged and the old one kept.
 * - With a client CA (`--client-ca`), the review server asks every caller for a certificate and refuses, in the
 *   TLS handshake, one the CA did not sign: the API server presents one through the kubeconfig its
 *   AdmissionConfiguration names (`kubeConfigFile`), nobody else can. The CA file is reloaded with the pair.
 *   kubelet's probes present none, so they go to the health server, which asks for none.
 * - Time limits are Node's own (limits.ts): `handshakeTimeout` (as long as `headersTimeout`), `headersTimeout`,
 *   `requestTimeout` (enforced every `connectionsCheckingInterval`), `keepAliveTimeout`, and the socket
 *   inactivity `timeout` that also closes a connection that never sends a request; `maxHeaderSize` bounds the
 *   headers.
 */
import * as fs from "fs";
import * as https from "https";
import type { AddressInfo } from "net";
import { BadInputError } from "../support/errors";
import { escapeText } from "../support/escape";
import { ServeLimits } from "./limits";

export interface TlsFiles {
    cert: string;
    key: string;
    /** The CA that signs the callers' client certificates (the review server then requires one). */
    clientCa?: string;
    /** Poll interval for changes (ms). */
    pollMs?: number;
}

type Log = (level: string, event: string, fields?: Record<string, unknown>) => void;

function firstLine(e: unknown): string {
    return String((e as Error).message ?? e).split("\n")[0];
}

/** The secure-context options from the files (throws BadInputError naming what could not be read). */
function readTls(f: TlsFiles, withClientCa: boolean): https.ServerOptions {
    let pair: { cert: Buffer; key: Buffer };
    try {
        pair = { cert: fs.readFileSync(f.cert), key: fs.readFileSync(f.key) };
    } catch (e) {
        throw new BadInputError(`cannot read the TLS certificate or key: ${firstLine(e)}`);
    }
    if (!withClientCa || !f.clientCa) return { minVersion: "TLSv1.2", cert: pair.cert, key: pair.key };
    try {
        return { minVersion: "TLSv1.2", cert: pair.cert, key: pair.key, ca: fs.readFileSync(f.clientCa) };
    } catch (e) {
        throw new BadInputError(`cannot read the client CA: ${firstLine(e)}`);
    }
}

/** Node's server limits from ours. */
function serverLimits(l: ServeLimits): https.ServerOptions {
    return {
        headersTimeout: l.headersTimeoutMs,
        requestTimeout: l.requestTimeoutMs,
        keepAliveTimeout: l.keepAliveTimeoutMs,
        maxHeaderSize: l.maxHeaderSize,
        // How often the headers and request timeouts are checked (default 30 s, longer than the limits).
        connectionsCheckingInterval: Math.min(1000, l.headersTimeoutMs),
        // A TLS handshake gets no longer than headers do (Node's default is 120 s, before any limit above
        // applies): a caller that connects and never finishes it holds nothing for long.
        handshakeTimeout: l.headersTimeoutMs,
    };
}

export interface TlsServers {
    review: https.Server;
    /** The health server, when asked for; else the review server serves probes too. */
    health?: https.Server;
    /** Stops polling the files. */
    unwatch(): void;
}

/** The servers (not listening yet); `healthPort` asks for a health server. */
export function tlsServers(f: TlsFiles, limits: ServeLimits, health: boolean, log: Log): TlsServers {
    const clientAuth = f.clientCa !== undefined;
    const review = https.createServer(
        Object.assign(readTls(f, true), serverLimits(limits), {
            requestCert: clientAuth,
            rejectUnauthorized: clientAuth,
        }),
    );
    review.timeout = limits.idleTimeoutMs;
    const probes = health ? https.createServer(Object.assign(readTls(f, false), serverLimits(limits))) : undefined;
    if (probes) probes.timeout = limits.idleTimeoutMs;
    // A handshake refused (no certificate, or one the CA did not sign): logged, the connection closed by Node.
    review.on("tlsClientError", (e) =>
        log("warn", "tls.client_refused", { error: escapeText(firstLine(e)).slice(0, 200) }),
    );
    const reload = () => {
        try {
            review.setSecureContext(readTls(f, true));
            probes?.setSecureContext(readTls(f, false));
            log("info", "tls.reloaded", { cert: f.cert });
        } catch (e) {
            log("error", "tls.reload_failed", { error: escapeText(firstLine(e)) });
        }
    };
    const files = [f.cert, f.key, ...(f.clientCa ? [f.clientCa] : [])];
    for (const file of files) fs.watchFile(file, { interval: f.pollMs ?? 2000 }, reload);
    return {
        review,
        health: probes,
        unwatch: () => {
            for (const file of files) fs.unwatchFile(file, reload);
        },
    };
}

/** Listens on host:port; resolves with the port bound (BadInputError when it cannot). */
export function listen(server: https.Server, port: number, host: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
        server.once("error", (e) =>
            reject(new BadInputError(`cannot listen on ${host} port ${port}: ${firstLine(e)}`)),
        );
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
    });
}

/** Closes a server and every connection it holds. */
export function closeServer(server: https.Server): Promise<void> {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
}
