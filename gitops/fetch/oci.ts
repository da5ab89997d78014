/**
 * A chart from an OCI registry (`oci://host[:port]/path/chart`), pulled by the real helm (`helm pull oci://...
 * --version ... --untar`, as Argo CD's repo server runs it).
 * Helm can reach only a loopback registry of ours that relays its `/v2/...` requests under the network policy
 * (./http-client.ts) and answers token challenges itself, so the credential goes to the registry's own host (and a
 * token service Docker would trust with it: ./source-credentials.ts realmMayReceive; any other is asked anonymously),
 * never to helm. Plain HTTP is tried only for an --allow-host host whose
 * HTTPS fails.
 */
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as path from "path";
import { exec } from "../../support/process";
import { findTool } from "../render/tools";
import { firstErrorLine } from "../render/tool-errors";
import { HostCredential, realmMayReceive, registryCredential } from "./source-credentials";
import { Answer, Budget, FetchError, policyGet } from "./http-client";
import { FetchPolicy, hostAllowed, shownUrl, urlPort } from "./network-policy";
import { helmEnv } from "./helm-repo";

/** `oci://host[:port]/path/chart` split: the registry's host and port, and the repository path. */
export function parseOciUrl(url: string): { host: string; port: number; repo: string } {
    const m = /^oci:\/\/([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?\/([a-z0-9]+(?:[._\-/][a-z0-9]+)*)\/?$/.exec(
        url.trim(),
    );
    if (!m) throw new FetchError(`${shownUrl(url)}: not an OCI chart reference (expected oci://host/path/chart)`);
    return { host: m[1].toLowerCase().replace(/^\[|\]$/g, ""), port: m[2] ? Number(m[2]) : 443, repo: m[3] };
}

/** The value of one parameter of a WWW-Authenticate challenge. */
function param(challenge: string, name: string): string | undefined {
    return new RegExp(`${name}="([^"]*)"`, "i").exec(challenge)?.[1];
}

/** Relays registry requests to one registry under the policy; what it resolved and the first failure. */
export class Relay {
    private scheme: "https" | "http" = "https";
    private bearer = new Map<string, string>();
    error?: string;
    manifest?: { tag: string; digest: string };

    constructor(
        private readonly policy: FetchPolicy,
        private readonly budget: Budget,
        private readonly host: string,
        private readonly port: number,
        private readonly cred: HostCredential | undefined,
    ) {}

    private origin(): string {
        const h = this.host.includes(":") ? `[${this.host}]` : this.host;
        return `${this.scheme}://${h}:${this.port}`;
    }

    private own(u: URL): boolean {
        return u.hostname.replace(/^\[|\]$/g, "").toLowerCase() === this.host && urlPort(u) === this.port;
    }

    /** One registry request (`/v2/...`), under the policy, with the registry's own credential or token. */
    async get(pathAndQuery: string, accept: string | undefined, scope: string): Promise<Answer> {
        const headers: Record<string, string> = accept ? { accept } : {};
        const auth = (u: URL) => {
            if (!this.own(u) && !(u.port === "" && u.hostname === this.host)) return undefined;
            const token = this.bearer.get(scope);
            return token ? `Bearer ${token}` : this.cred?.header;
        };
        const first = await this.request(pathAndQuery, headers, auth);
        if (first.status !== 401) return first;
        const challenge = String(first.headers["www-authenticate"] ?? "");
        if (/^bearer/i.test(challenge)) {
            const realm = param(challenge, "realm");
            if (!realm) throw new FetchError(`${this.origin()}: a token challenge without a realm`);
            const t = new URL(realm);
            const service = param(challenge, "service");
            if (service) t.searchParams.set("service", service);
            t.searchParams.set("scope", param(challenge, "scope") ?? scope);
            // The credential goes to the token service only when it is the registry's own host, or one Docker and
            // Helm would trust with it over https (realmMayReceive); asked at each URL, redirects included.
            const answer = await policyGet(this.policy, t.href, {
                budget: this.budget,
                auth: (u) => (this.own(u) || realmMayReceive(this.host, this.port, u) ? this.cred?.header : undefined),
            });
            let token: unknown;
            try {
                const body = JSON.parse(answer.body.toString("utf8")) as { token?: unknown; access_token?: unknown };
                token = body.token ?? body.access_token;
            } catch {
                token = undefined;
            }
            if (typeof token !== "string" || token === "")
                throw new FetchError(`${shownUrl(t.href)}: the token service gave no token`);
            this.bearer.set(scope, token);
        } else if (!this.cred) {
            throw new FetchError(`${this.origin()}: the registry asks for credentials (none configured for this host)`);
        }
        const again = await this.request(pathAndQuery, headers, auth);
        if (again.status === 401)
            throw new FetchError(`${this.origin()}: the registry refused the credentials configured for this host`);
        return again;
    }

    private async request(
        pathAndQuery: string,
        headers: Record<string, string>,
        auth: (u: URL) => string | undefined,
    ): Promise<Answer> {
        const once = () =>
            policyGet(this.policy, `${this.origin()}${pathAndQuery}`, {
                budget: this.budget,
                auth,
                headers,
                pass: [401, 404],
            });
        try {
            return await once();
        } catch (e) {
            // A listed host may serve plain HTTP (a registry on a private network, a test's).
            if (this.scheme === "https" && hostAllowed(this.policy, this.host, this.port) && e instanceof FetchError) {
                this.scheme = "http";
                return once();
            }
            throw e;
        }
    }

    /** Serves one of helm's requests. */
    async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
        const u = req.url ?? "/";
        if (u === "/v2/" || u === "/v2")
            return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
        const m = /^\/v2\/(.+?)\/(manifests|blobs|tags)\/([^?]*)(\?.*)?$/.exec(u);
        if (!m || (req.method !== "GET" && req.method !== "HEAD")) return void res.writeHead(404).end();
        const scope = `repository:${m[1]}:pull`;
        const accept = typeof req.headers.accept === "string" ? req.headers.accept : undefined;
        const a = await this.get(u, accept, scope);
        if (a.status === 404) {
            this.error ??= `${this.origin()}/${m[1]}: ${m[2] === "manifests" ? `no version ${JSON.stringify(decodeURIComponent(m[3]))}` : "not found (404)"}`;
            return void res.writeHead(404, { "content-type": "application/json" }).end('{"errors":[]}');
        }
        const headers: Record<string, string> = { "content-length": String(a.body.length) };
        for (const h of ["content-type", "docker-content-digest", "link"])
            if (typeof a.headers[h] === "string") headers[h] = a.headers[h];
        if (m[2] === "manifests" && !/^sha256:/.test(m[3]) && typeof a.headers["docker-content-digest"] === "string")
            this.manifest = { tag: decodeURIComponent(m[3]), digest: a.headers["docker-content-digest"] };
        if (m[2] === "manifests" && /^sha256:/.test(m[3]) && this.manifest === undefined)
            this.manifest = { tag: decodeURIComponent(m[3]), digest: m[3] };
        res.writeHead(200, headers).end(req.method === "HEAD" ? undefined : a.body);
    }
}

/**
 * Pulls the chart `url` (`oci://host[:port]/path/chart`) at `version` (an exact version, a constraint, or empty
 * for the newest), or by its manifest's `digest` (`sha256:...`) when one is given, by the real helm into
 * `into/tree/<chart>`; the tag it resolved to (the digest, pulled by one) and the manifest's digest.
 */
export async function ociPull(
    policy: FetchPolicy,
    url: string,
    version: string,
    into: string,
    digest?: string,
): Promise<{ version: string; digest: string; dir: string }> {
    const shown = shownUrl(url);
    if (digest !== undefined && !/^sha256:[0-9a-f]{64}$/.test(digest))
        throw new FetchError(`${shown}: not a sha256 digest`);
    const { host, port, repo } = parseOciUrl(url);
    const helm = findTool("helm");
    if (!helm) throw new FetchError(`${shown}: pulling an OCI chart needs helm, which is not installed`);
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const relay = new Relay(policy, budget, host, port, registryCredential(host, port));
    const server = http.createServer((req, res) => {
        void relay.serve(req, res).catch((e: unknown) => {
            relay.error ??= e instanceof FetchError ? e.message : `${shown}: the fetch failed`;
            // Failed Dependency: final, as the relay already applied the policy and limits. Helm's registry client
            // (oras-go's retry policy) retries any 5xx five times with backoff, seconds per source for nothing.
            if (!res.headersSent) res.writeHead(424).end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const local = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const home = path.join(into, ".helm");
    fs.mkdirSync(home, { recursive: true });
    try {
        const ref = digest === undefined ? `oci://${local}/${repo}` : `oci://${local}/${repo}@${digest}`;
        const args = ["pull", ref, "--plain-http", "--destination", into];
        args.push("--untar", "--untardir", "tree");
        if (version !== "" && digest === undefined) args.push("--version", version);
        const r = await exec(helm.path, args, { cwd: into, env: helmEnv(home), timeoutMs: Math.max(1, budget.left()) });
        if (relay.error) throw new FetchError(relay.error);
        if (r.timedOut) throw new FetchError(`${shown}: no answer within the time limit`);
        if (r.code !== 0 || !relay.manifest)
            throw new FetchError(
                `${shown}: helm pull failed: ${firstErrorLine(r.stderr.split(`oci://${local}`).join(`oci://${host}`).split(local).join(host))}`,
            );
        return {
            version: relay.manifest.tag,
            digest: relay.manifest.digest,
            dir: path.join(into, "tree", path.basename(repo)),
        };
    } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
        fs.rmSync(home, { recursive: true, force: true });
    }
}
