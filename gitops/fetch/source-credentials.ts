/**
 * Credentials, only from where users already keep them, and only for their own host.
 * Helm's repositories.yaml and registry config, then Docker's config.json (credential helpers are not run); git applies
 * its own (./git.ts). A credential is returned as the Authorization header for its host and port only and never appears
 * in a message, a report or the cache. Lookup order: docs/check.md, "Remote sources".
 */
import * as fs from "fs";
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

/** The Basic credential Helm's or Docker's registry config holds for a registry host (`host` or `host:port`). */
export function registryCredential(
    host: string,
    port: number,
    env: NodeJS.ProcessEnv = process.env,
): HostCredential | undefined {
    const files = [
        env.HELM_REGISTRY_CONFIG ?? path.join(helmConfigHome(env), "registry", "config.json"),
        path.join(env.DOCKER_CONFIG ?? path.join(os.homedir(), ".docker"), "config.json"),
    ];
    const wanted = new Set([port === 443 ? host : `${host}:${port}`, `${host}:${port}`]);
    for (const file of files) {
        const text = readSmall(file);
        if (text === undefined) continue;
        let auths: Record<string, unknown> = {};
        try {
            auths = (JSON.parse(text) as { auths?: Record<string, unknown> }).auths ?? {};
        } catch {
            continue;
        }
        for (const [key, value] of Object.entries(auths)) {
            const name = key
                .replace(/^[a-z]+:\/\//i, "")
                .replace(/\/.*$/, "")
                .toLowerCase();
            if (!wanted.has(name) || !value || typeof value !== "object") continue;
            const v = value as Record<string, unknown>;
            if (typeof v.auth === "string" && v.auth !== "") return { host, port, header: `Basic ${v.auth}` };
            if (typeof v.username === "string")
                return { host, port, header: basic(v.username, String(v.password ?? "")) };
        }
    }
    return undefined;
}

/** The header a request to `u` carries: the credential's, only when `u` is its host and port. */
export function authFor(cred: HostCredential | undefined): (u: URL) => string | undefined {
    return (u) =>
        cred && u.hostname.toLowerCase() === cred.host && urlPort(u) === cred.port ? cred.header : undefined;
}
