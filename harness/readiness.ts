/**
 * Waiting for a process the harness or the bench started to be ready: one bounded HTTP(S) GET, and a poll of a
 * check that fails as soon as a watched process exits or the deadline passes (never a fixed sleep).
 */
import * as https from "https";
import * as http from "http";
import { Spawned } from "../support/process";

/**
 * One GET of `url` (its body's first 64 KiB; 10 s at most), trusting `ca` and sending `token` as a bearer token
 * when given. Never fails: a connection that fails or times out answers status 0.
 */
export function get(url: string, o: { ca?: Buffer; token?: string } = {}): Promise<{ status: number; body: string }> {
    return new Promise((resolve) => {
        const mod = url.startsWith("https:") ? https : http;
        const req = mod.get(
            url,
            { ca: o.ca, headers: o.token ? { Authorization: `Bearer ${o.token}` } : {}, timeout: 10_000 },
            (res) => {
                let body = "";
                res.on("data", (d) => (body = (body + d).slice(0, 65536)));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            },
        );
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("error", () => resolve({ status: 0, body: "" }));
    });
}

/** Polls `check` until it is true, the process exits or the deadline passes (a readiness wait, never a fixed sleep). */
export async function waitFor(
    what: string,
    check: () => Promise<boolean>,
    procs: { name: string; p: Spawned; log: () => string }[],
    timeoutMs: number,
): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const exited = new Map<string, boolean>();
    // `exited` never rejects (support/process.ts).
    for (const x of procs)
        x.p.exited.then(
            () => exited.set(x.name, true),
            () => undefined,
        );
    for (;;) {
        for (const x of procs) {
            if (exited.get(x.name))
                throw new Error(`${x.name} exited while waiting for ${what}:\n${x.log().slice(-3000)}`);
        }
        if (await check()) return;
        if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs / 1000}s`);
        await new Promise((r) => setTimeout(r, 250));
    }
}
