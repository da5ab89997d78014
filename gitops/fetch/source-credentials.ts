/**
 * Credentials, only from where users already keep them, and only for their own host.
 * Helm's repositories.yaml and registry config, then Docker's config.json (its credential helpers run as Docker runs
 * them, for the registry's host); git applies its own (./git.ts). A credential is returned as the Authorization header for its host and port only and never appears
 * in a message, a report or the cache. Lookup order: docs/check.md, "Remote sources".
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { urlPort } from "./network-policy";

/** The most of a configuration file read. */
const MAX_CONFIG = 4 * 1024 * 1024;

function readSmall(file: string): string | undefined {
    try {
        const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
        try {
            if (!fs.fstatSync(fd).isFile()) return undefined;
            const buf = Buffer.alloc(MAX_CONFIG + 1);
            const n = fs.readSync(fd, buf, 0, buf.length, 0);
            return n > MAX_CONFIG ? undefined : buf.subarray(0, n).toString("utf8");
        } finally {
            fs.closeSync(fd);
        }
    } catch {
        return undefined;
    }
}

function helmConfigHome(env: NodeJS.ProcessEnv): string {
    if (env.HELM_CONFIG_HOME) return env.HELM_CONFIG_HOME;
    const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
    return path.join(xdg ?? path.join(os.homedir(), ".config"), "helm");
}

/** Credentials bound to one host and port. */
export interface HostCredential {
    host: string;
    port: number;
    /** The Authorization header's value. */
    header: string;
}

/** The entries of Helm's repositories.yaml (none when it is missing or unreadable). */
function helmRepositories(env: NodeJS.ProcessEnv): Record<string, unknown>[] {
    const file = env.HELM_REPOSITORY_CONFIG ?? path.join(helmConfigHome(env), "repositories.yaml");
    const text = readSmall(file);
    if (text === undefined) return [];
    let doc: unknown;
    try {
        doc = parse(text, { maxAliasCount: 100 });
    } catch {
        return [];
    }
    const repos = (doc as { repositories?: unknown })?.repositories;
    return Array.isArray(repos) ? repos.filter((r): r is Record<string, unknown> => !!r && typeof r === "object") : [];
}

function basic(user: string, password: string): string {
    return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}

function sameRepo(a: string, b: string): boolean {
    return a.trim().replace(/\/+$/, "") === b.trim().replace(/\/+$/, "");
}

/** The credential Helm's repositories.yaml holds for a chart repository URL, bound to that URL's host. */
export function helmRepoCredential(repoUrl: string, env: NodeJS.ProcessEnv = process.env): HostCredential | undefined {
    for (const r of helmRepositories(env)) {
        const { url, username, password } = r;
        if (typeof url !== "string" || !sameRepo(url, repoUrl)) continue;
        if (typeof username !== "string" || username === "") return undefined;
        const u = new URL(url);
        return { host: u.hostname.toLowerCase(), port: urlPort(u), header: basic(username, String(password ?? "")) };
    }
    return undefined;
}

/** The URL of the repository Helm's repositories.yaml names `name` (a dependency's `@name` or `alias:name`). */
export function helmRepoUrlByName(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    for (const r of helmRepositories(env)) if (r.name === name && typeof r.url === "string") return r.url;
    return undefined;
}

/** Docker Hub's registry and token hosts, and the key Docker keeps Hub's credential under. */
const DOCKER_HUB_HOSTS = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"]);
const DOCKER_HUB_KEY = "https://index.docker.io/v1/";

/** A helper name Docker would run as `docker-credential-<name>`: a plain name, never a path. */
const HELPER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The most a credential helper may print, and the time it may take. */
const MAX_HELPER_OUTPUT = 64 * 1024;
const HELPER_TIMEOUT_MS = 30_000;

/**
 * What a Docker credential helper (`docker-credential-<name> get`, the server's key on its standard input, as Docker
 * runs it) holds for `key`: a username and secret, or undefined (none, it failed, or an identity token, which Docker
 * trades at the registry's token service and check does not). Its output and errors are never shown.
 */
function helperCredential(name: string, key: string): { user: string; secret: string } | undefined {
    if (!HELPER_NAME.test(name)) return undefined;
    const r = spawnSync(`docker-credential-${name}`, ["get"], {
        input: key,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "ignore"],
        timeout: HELPER_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: MAX_HELPER_OUTPUT,
    });
    if (r.error || r.status !== 0) return undefined;
    try {
        const got = JSON.parse(r.stdout) as { Username?: unknown; Secret?: unknown };
        if (typeof got.Username !== "string" || typeof got.Secret !== "string" || got.Secret === "") return undefined;
        if (got.Username === "<token>") return undefined;
        return { user: got.Username, secret: got.Secret };
    } catch {
        return undefined;
    }
}

/**
 * The Basic credential Helm's or Docker's registry config holds for a registry host (`host` or `host:port`), as
 * Docker looks it up in each file: its `credHelpers` entry for the host, else its `credsStore`, each run as a
 * credential helper; else `auths.<host>` (`auth`, or `username`/`password`). Docker Hub's hosts take the credential
 * Docker keeps under `https://index.docker.io/v1/`.
 */
export function registryCredential(
    host: string,
    port: number,
    env: NodeJS.ProcessEnv = process.env,
): HostCredential | undefined {
    const files = [
        env.HELM_REGISTRY_CONFIG ?? path.join(helmConfigHome(env), "registry", "config.json"),
        path.join(env.DOCKER_CONFIG ?? path.join(os.homedir(), ".docker"), "config.json"),
    ];
    const hub = DOCKER_HUB_HOSTS.has(host) && port === 443;
    const wanted = new Set([port === 443 ? host : `${host}:${port}`, `${host}:${port}`]);
    if (hub) for (const h of DOCKER_HUB_HOSTS) wanted.add(h);
    const bare = (key: string) =>
        key
            .replace(/^[a-z]+:\/\//i, "")
            .replace(/\/.*$/, "")
            .toLowerCase();
    for (const file of files) {
        const text = readSmall(file);
        if (text === undefined) continue;
        let config: { auths?: Record<string, unknown>; credHelpers?: Record<string, unknown>; credsStore?: unknown };
        try {
            config = JSON.parse(text) as typeof config;
        } catch {
            continue;
        }
        if (!config || typeof config !== "object") continue;
        const auths = config.auths && typeof config.auths === "object" ? config.auths : {};
        // The key a helper is asked for: the one written in the file when it names this host, else the host.
        const keyOf = (keys: string[]) =>
            keys.find((k) => wanted.has(bare(k))) ?? (hub ? DOCKER_HUB_KEY : [...wanted][0]);
        const helpers = config.credHelpers && typeof config.credHelpers === "object" ? config.credHelpers : {};
        const helperKey = Object.keys(helpers).find((k) => wanted.has(bare(k)));
        const helper = helperKey !== undefined ? helpers[helperKey] : config.credsStore;
        if (typeof helper === "string" && helper !== "") {
            const got = helperCredential(helper, helperKey ?? keyOf(Object.keys(auths)));
            if (got) return { host, port, header: basic(got.user, got.secret) };
        }
        for (const [key, value] of Object.entries(auths)) {
            if (!wanted.has(bare(key)) || !value || typeof value !== "object") continue;
            const v = value as Record<string, unknown>;
            if (typeof v.auth === "string" && v.auth !== "") return { host, port, header: `Basic ${v.auth}` };
            if (typeof v.username === "string")
                return { host, port, header: basic(v.username, String(v.password ?? "")) };
        }
    }
    return undefined;
}

/**
 * Whether a registry's credential may go to the token service its challenge names (`realm`), as Docker and Helm send
 * it there: only over `https://`, and only to the registry's own host and port, Docker Hub's token service for Hub,
 * or a host of the registry's parent domain on the default port (`registry.example.com` to `auth.example.com`; a
 * parent of at least two labels, never an address). Any other token service is asked without it.
 */
export function realmMayReceive(registryHost: string, registryPort: number, realm: URL): boolean {
    if (realm.protocol !== "https:") return false;
    const reg = registryHost.toLowerCase();
    const to = realm.hostname.toLowerCase();
    const port = urlPort(realm);
    if (to === reg) return port === registryPort;
    if (port !== 443) return false;
    if (DOCKER_HUB_HOSTS.has(reg)) return to === "auth.docker.io";
    if (net.isIP(reg) || net.isIP(to.replace(/^\[|\]$/g, ""))) return false;
    const parent = reg.split(".").slice(1);
    if (parent.length < 2) return false;
    const p = parent.join(".");
    return to === p || to.endsWith(`.${p}`);
}

/** The header a request to `u` carries: the credential's, only when `u` is its host and port. */
export function authFor(cred: HostCredential | undefined): (u: URL) => string | undefined {
    return (u) =>
        cred && u.hostname.toLowerCase() === cred.host && urlPort(u) === cred.port ? cred.header : undefined;
}
