/**
 * The HTTPS servers of `pko-guard webhook`: the review server and, when asked for, a health server (probes and
 * metrics) on a port of its own. Certificate, key and client CA are polled (inotify misses a mounted Secret's
 * symlink swap) and checked before use; a bad write keeps the last good set, so the door never answers nobody
 * while ready. With `--client-ca` the review server refuses unsigned callers in the TLS handshake; kubelet's
 * probes present no certificate, hence the separate health server. Time limits: limits.ts.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as https from "https";
import * as tls from "tls";
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

/** The secure-context options read from the files, and when what they hold stops being valid. */
export interface TlsMaterial {
    options: https.ServerOptions;
    /** When the serving certificate expires. */
    certNotAfter: Date;
    /** When the last certificate of the client CA file expires (undefined without a client CA). */
    caNotAfter?: Date;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * The certificates of a CA file (PEM), each parsed; throws when the file holds none, or a block that is not one.
 * OpenSSL skips what it cannot parse in a CA list, so an empty or garbage file would load as a CA that signs
 * nobody: every caller, the API server included, refused in the handshake.
 */
function caCertificates(pem: Buffer): crypto.X509Certificate[] {
    const text = pem.toString("latin1");
    const blocks = text.match(PEM_CERTIFICATE) ?? [];
    if (blocks.length === 0) throw new Error("it holds no PEM certificate");
    if ((text.match(/-----BEGIN /g) ?? []).length !== blocks.length)
        throw new Error("it holds a PEM block that is not a certificate");
    return blocks.map((b, i) => {
        try {
            return new crypto.X509Certificate(b);
        } catch (e) {
            throw new Error(`its certificate ${i + 1} cannot be parsed: ${firstLine(e)}`);
        }
    });
}

/**
 * What the files hold, checked: the certificate and key make a pair (OpenSSL loads them together), the
 * certificate parses, and the client CA, when read, holds certificates only. Throws BadInputError naming what
 * could not be read or used.
 */
export function tlsMaterial(f: TlsFiles, withClientCa: boolean): TlsMaterial {
    let pair: { cert: Buffer; key: Buffer };
    try {
        pair = { cert: fs.readFileSync(f.cert), key: fs.readFileSync(f.key) };
    } catch (e) {
        throw new BadInputError(`cannot read the TLS certificate or key: ${firstLine(e)}`);
    }
    let certNotAfter: Date;
    try {
        tls.createSecureContext(pair);
        certNotAfter = new Date(new crypto.X509Certificate(pair.cert).validTo);
    } catch (e) {
        throw new BadInputError(`cannot use the TLS certificate and key: ${firstLine(e)}`);
    }
    const options: https.ServerOptions = { minVersion: "TLSv1.2", cert: pair.cert, key: pair.key };
    if (!withClientCa || !f.clientCa) return { options, certNotAfter };
    let ca: Buffer;
    try {
        ca = fs.readFileSync(f.clientCa);
    } catch (e) {
        throw new BadInputError(`cannot read the client CA: ${firstLine(e)}`);
    }
    let certs: crypto.X509Certificate[];
    try {
        certs = caCertificates(ca);
    } catch (e) {
        throw new BadInputError(`cannot use the client CA: ${firstLine(e)}`);
    }
    const caNotAfter = new Date(Math.max(...certs.map((c) => new Date(c.validTo).getTime())));
    return { options: { minVersion: "TLSv1.2", cert: pair.cert, key: pair.key, ca }, certNotAfter, caNotAfter };
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
    /** Why the servers, as loaded now, can answer nobody (an expired certificate or CA); empty when they can. */
    problems(now?: Date): string[];
    /** Stops polling the files. */
    unwatch(): void;
}

/** Why TLS material in use can answer nobody at `now`: an expired serving certificate or client CA. */
export function tlsProblems(m: Pick<TlsMaterial, "certNotAfter" | "caNotAfter">, now = new Date()): string[] {
    const out: string[] = [];
    if (m.certNotAfter.getTime() <= now.getTime())
        out.push(`the serving certificate expired at ${m.certNotAfter.toISOString()}`);
    if (m.caNotAfter && m.caNotAfter.getTime() <= now.getTime())
        out.push(`every certificate of the client CA expired (the last at ${m.caNotAfter.toISOString()})`);
    return out;
}

/** The servers (not listening yet); `healthPort` asks for a health server. */
export function tlsServers(f: TlsFiles, limits: ServeLimits, health: boolean, log: Log): TlsServers {
    const clientAuth = f.clientCa !== undefined;
    let loaded = tlsMaterial(f, true);
    const review = https.createServer(
        Object.assign({}, loaded.options, serverLimits(limits), {
            requestCert: clientAuth,
            rejectUnauthorized: clientAuth,
        }),
    );
    review.timeout = limits.idleTimeoutMs;
    const probes = health
        ? https.createServer(Object.assign({}, tlsMaterial(f, false).options, serverLimits(limits)))
        : undefined;
    if (probes) probes.timeout = limits.idleTimeoutMs;
    // A handshake refused (no certificate, or one the CA did not sign): logged, the connection closed by Node.
    review.on("tlsClientError", (e) =>
        log("warn", "tls.client_refused", { error: escapeText(firstLine(e)).slice(0, 200) }),
    );
    const reload = () => {
        // Both read and checked before either is used: a bad file keeps the last good set on both servers.
        let next: TlsMaterial;
        let health: TlsMaterial | undefined;
        try {
            next = tlsMaterial(f, true);
            health = probes ? tlsMaterial(f, false) : undefined;
        } catch (e) {
            log("error", "tls.reload_failed", { error: escapeText(firstLine(e)), kept: "the last good certificate" });
            return;
        }
        review.setSecureContext(next.options);
        if (probes && health) probes.setSecureContext(health.options);
        loaded = next;
        log("info", "tls.reloaded", { cert: escapeText(f.cert), notAfter: next.certNotAfter.toISOString() });
    };
    const files = [f.cert, f.key, ...(f.clientCa ? [f.clientCa] : [])];
    for (const file of files) fs.watchFile(file, { interval: f.pollMs ?? 2000 }, reload);
    return {
        review,
        health: probes,
        problems: (now) => tlsProblems(loaded, now),
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
