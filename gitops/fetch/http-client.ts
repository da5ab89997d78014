/**
 * HTTP(S) GET under the network policy (./network-policy.ts).
 * Each name is resolved once and the connection made to the checked address (no second lookup a rebinding DNS could
 * answer); redirects are followed by hand, bounded and each checked again; every answer is bounded in bytes and time. A
 * credential goes only to its own host (`auth` is asked per request). Failures are one line, the URL without user
 * information or query.
 */
import * as dns from "dns";
import * as http from "http";
import * as https from "https";
import * as net from "net";
import { BadInputError } from "../../support/errors";
import { extraCaOptions } from "../../support/extra-ca";
import { FetchPolicy, forbiddenAddress, hostAllowed, refusedUrl, shownUrl, urlPort } from "./network-policy";

/** A fetch that failed: one line, exit 2 (or the fail-closed finding where the caller's contract says so). */
export class FetchError extends BadInputError {}

/** What one fetch may still spend: bytes from the network and time; shared by every request of the fetch. */
export class Budget {
    private used = 0;
    readonly deadline: number;
    constructor(
        readonly maxBytes: number,
        timeoutMs: number,
    ) {
        this.deadline = Date.now() + timeoutMs;
    }
    /** Counts `n` more bytes; false once the fetch has read more than it may. */
    take(n: number): boolean {
        this.used += n;
        return this.used <= this.maxBytes;
    }
    left(): number {
        return this.deadline - Date.now();
    }
}

/** Resolves `host` once and checks every address; the address to connect to, or the reason it is refused. */
export async function checkedAddress(
    policy: FetchPolicy,
    host: string,
    port: number,
): Promise<{ address: string; family: number }> {
    const bare = host.replace(/^\[|\]$/g, "");
    const allowed = hostAllowed(policy, bare, port);
    let answers: dns.LookupAddress[];
    if (net.isIP(bare)) answers = [{ address: bare, family: net.isIP(bare) }];
    else {
        try {
            answers = await dns.promises.lookup(bare, { all: true, verbatim: true });
        } catch {
            throw new FetchError(`${bare}: the name does not resolve`);
        }
    }
    if (answers.length === 0) throw new FetchError(`${bare}: the name does not resolve`);
    if (!allowed)
        for (const a of answers) {
            const why = forbiddenAddress(a.address);
            if (why !== undefined)
                throw new FetchError(
                    `${bare}${bare === a.address ? "" : ` (${a.address})`}: refused, ${why}; list the host with --allow-host ${bare.includes(":") ? `[${bare}]` : bare}:${port} to fetch from it`,
                );
        }
    return answers[0];
}

export interface GetOptions {
    budget: Budget;
    /** The Authorization header for a URL (asked for every request, redirects included), if it has one. */
    auth?: (u: URL) => string | undefined;
    headers?: Record<string, string>;
    /** Statuses returned to the caller rather than failing (e.g. 401 for an OCI token challenge). */
    pass?: number[];
}

export interface Answer {
    status: number;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
    /** The URL that answered (after redirects). */
    url: string;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|ERR_TLS|ERR_SSL|EPROTO/;

function networkReason(e: NodeJS.ErrnoException): string {
    const code = e.code ?? "";
    if (TLS_CODES.test(code) || /certificate|ssl|tls/i.test(e.message))
        return `TLS failed: the server's certificate is not trusted for this name (${code || "TLS error"})`;
    if (code === "ECONNREFUSED") return "the connection was refused";
    if (code === "ECONNRESET" || code === "EPIPE") return "the connection was reset";
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the name does not resolve";
    return `the request failed (${code || "network error"})`;
}

function whyStatus(status: number): string {
    if (status === 401) return "the server asks for credentials (none configured for this host, or they were refused)";
    if (status === 403) return "the server refused access (403): check the credentials for this host";
    if (status === 404) return "not found (404)";
    return `the server answered HTTP ${status}`;
}

/** One request to the checked address; the answer bounded by the budget. */
async function once(policy: FetchPolicy, u: URL, o: GetOptions): Promise<Answer> {
    const port = urlPort(u);
    const pinned = await checkedAddress(policy, u.hostname, port);
    const left = o.budget.left();
    if (left <= 0) throw new FetchError(`${shownUrl(u.href)}: ran out of time`);
    const headers: Record<string, string> = { "user-agent": "pko-guard", ...(o.headers ?? {}) };
    const auth = o.auth?.(u);
    if (auth) headers.authorization = auth;
    const bare = u.hostname.replace(/^\[|\]$/g, "");
    return new Promise<Answer>((resolve, reject) => {
        const lib = u.protocol === "https:" ? https : http;
        const req = lib.request({
            protocol: u.protocol,
            host: bare,
            port,
            path: `${u.pathname}${u.search}`,
            method: "GET",
            headers,
            agent: false,
            ...(u.protocol === "https:" ? extraCaOptions() : {}),
            ...(net.isIP(bare) ? {} : { servername: bare }),
            lookup: ((_h: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
                opts?.all
                    ? cb(null, [{ address: pinned.address, family: pinned.family }])
                    : cb(null, pinned.address, pinned.family)) as unknown as net.LookupFunction,
        });
        const fail = (why: string) => {
            req.destroy();
            reject(new FetchError(`${shownUrl(u.href)}: ${why}`));
        };
        const timer = setTimeout(
            () => fail(`no complete answer within ${Math.round(left / 1000)}s (time limit)`),
            left,
        );
        req.on("error", (e: NodeJS.ErrnoException) => {
            clearTimeout(timer);
            reject(new FetchError(`${shownUrl(u.href)}: ${networkReason(e)}`));
        });
        req.on("response", (res) => {
            const declared = Number(res.headers["content-length"] ?? "0");
            if (declared > o.budget.maxBytes) {
                clearTimeout(timer);
                return fail(`the answer is larger than the fetch limit (${o.budget.maxBytes} bytes)`);
            }
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => {
                if (!o.budget.take(c.length)) {
                    clearTimeout(timer);
                    return fail(`the answer is larger than the fetch limit (${o.budget.maxBytes} bytes)`);
                }
                chunks.push(c);
            });
            res.on("error", () => undefined);
            res.on("end", () => {
                clearTimeout(timer);
                resolve({
                    status: res.statusCode ?? 0,
                    headers: res.headers,
                    body: Buffer.concat(chunks),
                    url: u.href,
                });
            });
        });
        req.end();
    });
}

/**
 * GET `url` under the policy, following at most `limits.maxRedirects` redirects, each checked as the first URL.
 * A status other than 200 (and those in `pass`) is a FetchError naming it.
 */
export async function policyGet(policy: FetchPolicy, url: string, o: GetOptions): Promise<Answer> {
    if (policy.offline) throw new FetchError(`${shownUrl(url)}: not fetched (--offline)`);
    let current = url;
    for (let hop = 0; ; hop++) {
        const refused = refusedUrl(policy, current);
        if (refused !== undefined)
            throw new FetchError(
                `${shownUrl(current)}: refused, ${refused}${hop > 0 ? ` (redirected from ${shownUrl(url)})` : ""}`,
            );
        const u = new URL(current);
        if (u.protocol === "file:") throw new FetchError(`${shownUrl(current)}: a file:// URL is read, not fetched`);
        let answer: Answer;
        try {
            answer = await once(policy, u, o);
        } catch (e) {
            if (hop > 0 && e instanceof FetchError && !e.message.includes("redirected from"))
                throw new FetchError(`${e.message} (redirected from ${shownUrl(url)})`);
            throw e;
        }
        const location = answer.headers.location;
        if ([301, 302, 303, 307, 308].includes(answer.status) && typeof location === "string") {
            if (hop >= policy.limits.maxRedirects)
                throw new FetchError(`${shownUrl(url)}: more than ${policy.limits.maxRedirects} redirects`);
            try {
                current = new URL(location, current).href;
            } catch {
                throw new FetchError(`${shownUrl(current)}: redirects to something that is not a URL`);
            }
            continue;
        }
        if (answer.status === 200 || (o.pass ?? []).includes(answer.status)) return answer;
        throw new FetchError(`${shownUrl(current)}: ${whyStatus(answer.status)}`);
    }
}
