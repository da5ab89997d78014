/**
 * The one network policy every fetch obeys (gitops/fetch/): which URLs and addresses may be reached, and the limits of
 * each fetch.
 * By default only public addresses over `https://`; others need `--allow-host`, and `--offline` reaches nothing. Names
 * are resolved once and the connection goes to the checked address (./http-client.ts, ./proxy.ts), so DNS rebinding is
 * never used. The ranges and limits: docs/check.md, "Remote sources".
 */
import * as net from "net";
import * as path from "path";
import { userCacheDir } from "../../support/cache-dir";
import { BadInputError } from "../../support/errors";
import { extended } from "../../support/shapes";
import { forgetInSnapshot } from "../../support/snapshot";

/** A host an `--allow-host` lets through whatever its address, and over plain `http://`; any port when unset. */
export interface AllowedHost {
    host: string;
    port?: number;
}

/** What one fetch may take. */
export interface FetchLimits {
    /** Bytes one fetch may read from the network (every answer and redirect of it together). */
    maxBytes: number;
    /** Files a fetched tree (a git checkout, an unpacked chart) may hold. */
    maxFiles: number;
    /** Milliseconds one fetch may take, connection set-up to the last byte. */
    timeoutMs: number;
    /** Redirects one request may follow, each checked again. */
    maxRedirects: number;
}

export const DEFAULT_LIMITS: FetchLimits = {
    maxBytes: 256 * 1024 * 1024,
    maxFiles: 50_000,
    timeoutMs: 120_000,
    maxRedirects: 5,
};

/** How large the fetch cache may grow and how long an entry may go unused (./source-cache.ts). */
export interface CacheBounds {
    maxBytes: number;
    maxAgeMs: number;
}

const MIB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The defaults: 2 GiB, 30 days unused. */
export const DEFAULT_CACHE_BOUNDS: CacheBounds = { maxBytes: 2048 * MIB, maxAgeMs: 30 * DAY_MS };

/**
 * The cache's bounds a machine sets in its environment, `PKO_GUARD_CACHE_MAX_MB` and `PKO_GUARD_CACHE_MAX_DAYS`
 * (whole numbers, at least 1; the cache is the machine's, shared by every repository); the defaults otherwise. A
 * bad value is one line, exit 2.
 */
export function cacheBounds(env: NodeJS.ProcessEnv = process.env): CacheBounds {
    const read = (name: string, unit: number, fallback: number) => {
        const raw = env[name];
        if (raw === undefined || raw.trim() === "") return fallback;
        if (!/^\s*[1-9]\d{0,8}\s*$/.test(raw))
            throw new BadInputError(`${name}: ${JSON.stringify(raw.slice(0, 40))} is not a whole number of at least 1`);
        return Number(raw) * unit;
    };
    return {
        maxBytes: read("PKO_GUARD_CACHE_MAX_MB", MIB, DEFAULT_CACHE_BOUNDS.maxBytes),
        maxAgeMs: read("PKO_GUARD_CACHE_MAX_DAYS", DAY_MS, DEFAULT_CACHE_BOUNDS.maxAgeMs),
    };
}

/** The network policy of a run. */
export interface FetchPolicy {
    /** Nothing is fetched: what the cache holds, else the source is not read (today's offline behaviour). */
    offline: boolean;
    /** Hosts let through (--allow-host). */
    allowHosts: AllowedHost[];
    /** The cache's folder (--cache-dir; default the user's cache folder). */
    cacheDir: string;
    /** Resolve and fetch again, whatever the cache holds (--refresh). */
    refresh: boolean;
    limits: FetchLimits;
    /** The checked repository's root: the only place a `file://` source may point into. */
    repoRoot?: string;
    /** How large the cache may grow and how long an unused entry stays (./source-cache.ts); unset: the defaults. */
    cache?: CacheBounds;
}

/** The user's cache folder for pko-guard, as support/cache-dir.ts names it for every command. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
    return userCacheDir(env);
}

/** A policy from the run's options; every value checked (bad ones are one line, exit 2). */
export function fetchPolicy(o: {
    offline?: boolean;
    allowHosts?: string[];
    cacheDir?: string;
    refresh?: boolean;
    repoRoot?: string;
    limits?: Partial<FetchLimits>;
    cache?: CacheBounds;
}): FetchPolicy {
    return {
        offline: o.offline === true,
        allowHosts: (o.allowHosts ?? []).map((h) => parseAllowHost(h)),
        cacheDir: path.resolve(o.cacheDir ?? defaultCacheDir()),
        refresh: o.refresh === true,
        limits: extended(DEFAULT_LIMITS, o.limits ?? {}) as FetchLimits,
        repoRoot: o.repoRoot,
        ...(o.cache ? { cache: o.cache } : {}),
    };
}

/** `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT`, as `--allow-host` takes it; the host in lower case. */
export function parseAllowHost(text: string, what = "--allow-host"): AllowedHost {
    const t = text.trim();
    const m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(t) ?? /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(t);
    const port = m?.[2] === undefined ? undefined : Number(m[2]);
    if (!m || (m[1].includes(":") && net.isIPv6(m[1]) === false) || (port !== undefined && (port < 1 || port > 65535)))
        throw new BadInputError(`${what}: not a host or host:port (expected e.g. charts.example.com or 10.0.0.5:8080)`);
    return port === undefined ? { host: m[1].toLowerCase() } : { host: m[1].toLowerCase(), port };
}

/** Whether `host` (as a URL names it, lower case, IPv6 without brackets) and `port` are listed. */
export function hostAllowed(policy: Pick<FetchPolicy, "allowHosts">, host: string, port: number): boolean {
    const h = host.toLowerCase().replace(/^\[|\]$/g, "");
    return policy.allowHosts.some((a) => a.host === h && (a.port === undefined || a.port === port));
}

/** Address ranges never reached unless their host is listed, each with why (IANA special-purpose registries). */
const FORBIDDEN: [string, number, "ipv4" | "ipv6", string][] = [
    ["0.0.0.0", 8, "ipv4", "an unspecified address"],
    ["10.0.0.0", 8, "ipv4", "a private address"],
    ["100.64.0.0", 10, "ipv4", "a shared (carrier-grade NAT) address"],
    ["127.0.0.0", 8, "ipv4", "a loopback address"],
    ["169.254.0.0", 16, "ipv4", "a link-local address (cloud metadata)"],
    ["172.16.0.0", 12, "ipv4", "a private address"],
    ["192.0.0.0", 24, "ipv4", "a reserved address"],
    ["192.0.2.0", 24, "ipv4", "a documentation address"],
    ["192.168.0.0", 16, "ipv4", "a private address"],
    ["198.18.0.0", 15, "ipv4", "a benchmarking address"],
    ["198.51.100.0", 24, "ipv4", "a documentation address"],
    ["203.0.113.0", 24, "ipv4", "a documentation address"],
    ["224.0.0.0", 4, "ipv4", "a multicast address"],
    ["240.0.0.0", 4, "ipv4", "a reserved address"],
    ["::", 128, "ipv6", "an unspecified address"],
    ["::1", 128, "ipv6", "a loopback address"],
    ["100::", 64, "ipv6", "a discard address"],
    ["2001:db8::", 32, "ipv6", "a documentation address"],
    ["fc00::", 7, "ipv6", "a private (unique local) address"],
    ["fe80::", 10, "ipv6", "a link-local address (cloud metadata)"],
    ["ff00::", 8, "ipv6", "a multicast address"],
];

/**
 * FORBIDDEN as block lists, made on first use: a BlockList is a native handle, which a start-up snapshot cannot
 * hold (support/snapshot.ts), and most runs fetch nothing.
 */
let blocks: { list: net.BlockList; type: string; why: string }[] | undefined;
forgetInSnapshot(() => {
    blocks = undefined;
});

function blockLists(): { list: net.BlockList; type: string; why: string }[] {
    return (blocks ??= FORBIDDEN.map(([addr, prefix, type, why]) => {
        const list = new net.BlockList();
        list.addSubnet(addr, prefix, type);
        return { list, type, why };
    }));
}

/** The IPv4 address an IPv6 one carries (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64 `64:ff9b::/96`). */
function embeddedIPv4(ip: string): string | undefined {
    const m = /^(?:::ffff:|::|64:ff9b::)(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (m) return m[1];
    const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
    if (!hex) return undefined;
    const [a, b] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

/** Why an address is never reached by default; undefined for a public address. */
export function forbiddenAddress(ip: string): string | undefined {
    const family = net.isIP(ip);
    if (family === 0) return "not an address";
    if (family === 6) {
        const v4 = embeddedIPv4(ip.toLowerCase());
        if (v4 !== undefined) return forbiddenAddress(v4);
    }
    const type = family === 4 ? "ipv4" : "ipv6";
    return blockLists().find((b) => b.type === type && b.list.check(ip, type))?.why;
}

/** A URL as shown in any output: no user information, no query (a query can carry a token), no fragment. */
/** An ssh remote as git reads one: `ssh://`, `git+ssh://`, `ssh+git://`, or the scp form `[user@]host:path`. */
const SSH_REMOTE = /^(?:(?:git\+)?ssh(?:\+git)?:\/\/|(?:[^@/:\s]+@)?[^@/:\s]{2,}:(?!\/\/))/i;

/** A host ssh may be handed: a name (letters, digits, dots, dashes; never a leading dash) or a bracketed IPv6 address. */
const SSH_HOST = /^(?:[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\])$/;

/** An ssh remote's host (as written, lower case) and port (22 when none), and whether it holds a password. */
export function sshRemote(raw: string): { host: string; port: number; password: boolean } | undefined {
    const text = raw.trim();
    if (!SSH_REMOTE.test(text)) return undefined;
    if (/^[a-z+]+:\/\//i.test(text)) {
        try {
            const u = new URL(text.replace(/^(?:git\+ssh|ssh\+git):/i, "ssh:"));
            if (u.hostname === "") return undefined;
            return {
                host: u.hostname.toLowerCase(),
                port: u.port === "" ? 22 : Number(u.port),
                password: u.password !== "",
            };
        } catch {
            return undefined;
        }
    }
    const scp = /^(?:[^@/:\s]+@)?([^@/:\s]+):/.exec(text);
    return scp ? { host: scp[1].toLowerCase(), port: 22, password: false } : undefined;
}

export function shownUrl(raw: string): string {
    try {
        const u = new URL(raw);
        u.username = "";
        u.password = "";
        u.search = "";
        u.hash = "";
        return u.toString();
    } catch {
        return raw
            .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1")
            .replace(/^[^@/:\s]+@(?=[^@/:\s]+:(?!\/\/))/, "")
            .replace(/[?#].*$/, "");
    }
}

/** The port a URL connects to. */
export function urlPort(u: URL): number {
    if (u.port !== "") return Number(u.port);
    return u.protocol === "http:" ? 80 : 443;
}

/**
 * Why a URL is refused before anything is resolved (its scheme, plain http to a host not listed, user information
 * in it, a `file://` outside the repository); undefined when it may be fetched (its addresses are checked next).
 */
export function refusedUrl(policy: FetchPolicy, raw: string): string | undefined {
    // git over ssh: its connection goes through the policy's relay (./ssh-relay.ts), which checks the address; the
    // host is a plain name or address (it is handed to ssh's ProxyCommand), a password is never in the URL.
    if (SSH_REMOTE.test(raw.trim())) {
        const r = sshRemote(raw);
        if (!r) return "an ssh remote git would not read";
        if (r.password)
            return "it holds credentials (keep them in Helm's, Docker's or git's own configuration, never in a URL)";
        if (!SSH_HOST.test(r.host)) return "an ssh remote whose host is not a plain name or address";
        return undefined;
    }
    let u: URL;
    try {
        u = new URL(raw);
    } catch {
        return "not a URL";
    }
    if (u.username !== "" || u.password !== "")
        return "it holds credentials (keep them in Helm's, Docker's or git's own configuration, never in a URL)";
    if (u.protocol === "file:") {
        const root = policy.repoRoot && path.resolve(policy.repoRoot);
        const rel = root ? path.relative(root, decodeURIComponent(u.pathname)) : "..";
        return rel.startsWith("..") || path.isAbsolute(rel) ? "a file:// URL outside the repository" : undefined;
    }
    if (u.protocol === "http:" && !hostAllowed(policy, u.hostname, urlPort(u)))
        return "plain http:// (list the host with --allow-host to fetch it without TLS)";
    if (u.protocol !== "https:" && u.protocol !== "http:") return `the ${u.protocol}// scheme is not fetched`;
    return undefined;
}

/** The network options of a `check` run as its command line gives them (undefined or empty: not given). */
export interface FetchFlags {
    offline?: boolean;
    allowHost: string[];
    cacheDir?: string;
    refresh?: boolean;
}

/** Why an `allow-hosts` entry of `.pko-guard.yaml` is refused (the words after its name), or undefined. */
export function allowHostProblem(value: unknown): string | undefined {
    if (typeof value !== "string") return "is not a string";
    try {
        parseAllowHost(value);
        return undefined;
    } catch {
        return "is not a host or host:port";
    }
}

/** A run's network policy: its flags, the hosts allowed (options, else the file), the repository's root. */
export function runFetchPolicy(flags: FetchFlags, allowHosts: string[], repoRoot: string): FetchPolicy {
    return fetchPolicy({
        offline: flags.offline === true,
        allowHosts,
        cacheDir: flags.cacheDir,
        refresh: flags.refresh === true,
        repoRoot,
        cache: cacheBounds(),
    });
}

/**
 * The policy for one fetch of a run whose work must end by `deadline` (ms since the epoch; check's --timeout):
 * its time limit is what is left of the run's, when that is less. Past the deadline, a fetch is refused.
 */
export function withinDeadline(policy: FetchPolicy, deadline: number): FetchPolicy {
    const left = Math.floor(deadline - Date.now());
    if (left <= 0) throw new BadInputError("fetching ran out of time (--timeout)");
    if (left >= policy.limits.timeoutMs) return policy;
    return extended(policy, { limits: extended(policy.limits, { timeoutMs: left }) });
}
