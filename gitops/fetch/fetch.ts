/**
 * Remote sources as Argo CD's repo server (and Flux's source-controller) fetch them, under one network policy
 * (./network-policy.ts), into one content-addressed cache (./source-cache.ts).
 * `fetchSourceSync` exists because rendering is synchronous: the cache answers when it may, else a child process
 * (./child.ts) fetches, bounded by the policy's time limit. Every failure is a FetchError: one line, the URL without
 * credentials. What is fetched and the policy: docs/check.md, "Remote sources".
 */
import { spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";
import { extended } from "../../support/shapes";
import { cachedSource, keep, scratchIn } from "./source-cache";
import { gitCheckout } from "./git";
import { helmPull } from "./helm-repo";
import { ociPull } from "./oci";
import { ociArtifactPull, ociSemverTag } from "./oci-artifact";
import { Budget, FetchError, policyGet } from "./http-client";
import { FetchPolicy, shownUrl } from "./network-policy";

export { FetchError } from "./http-client";
export { FetchRequest, FetchedSource, SourceKind, fetchedFileName, floatingNote, isFloating } from "./fetched-source";
import { FetchRequest, FetchedSource, isFloating } from "./fetched-source";

/** How a request's URL is shown and recorded (credentials never kept: no user information, query or fragment). */
function cacheUrl(req: FetchRequest): string {
    return req.kind === "helm" ? `${shownUrl(req.url).replace(/\/+$/, "")}#${req.chart}` : shownUrl(req.url);
}

/**
 * What a request's URL is in the cache's keys: everything the server is sent, so its query too (two URLs that
 * differ only by the query can answer differently); not its user information (refused anyway) or fragment (never
 * sent). Only a hash of it is written, so a token in the query is never kept.
 */
function cacheId(req: FetchRequest): string {
    let id: string;
    try {
        const u = new URL(req.url);
        u.username = "";
        u.password = "";
        u.hash = "";
        id = u.toString();
    } catch {
        id = req.url.replace(/#.*$/, "");
    }
    return req.kind === "helm" ? `${id.replace(/\/+$/, "")}#${req.chart}` : id;
}

/** The reference as recorded and cached: a semver range as `semver <range>` (a tag cannot hold a space). */
function refOf(req: FetchRequest): string {
    if (req.kind === "git") return req.semver ? `semver ${req.ref}` : req.ref;
    if (req.kind === "oci" && req.digest !== undefined) return req.digest;
    if (req.kind === "oci" && req.fluxSemver)
        return `semver ${req.version}${req.fluxSemver.filter ? ` filter ${req.fluxSemver.filter}` : ""}`;
    return req.kind === "file" ? "" : req.version;
}

/** The cache's answer for a request, when the policy lets it answer (offline; a reference that cannot move). */
export function fromCache(req: FetchRequest, policy: FetchPolicy): FetchedSource | undefined {
    const floating = isFloating(req);
    const hit = cachedSource(policy, req.kind, cacheUrl(req), refOf(req), floating, cacheId(req));
    if (hit && (policy.offline || (!policy.refresh && !floating))) return hit;
    return undefined;
}

/** A fetched tree within the limits: no symbolic link, at most `maxFiles` files. */
function checkTree(dir: string, policy: FetchPolicy, shown: string): void {
    let files = 0;
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isSymbolicLink()) throw new FetchError(`${shown}: holds a symbolic link, which is not read`);
            if (e.isDirectory()) walk(p);
            else if (++files > policy.limits.maxFiles)
                throw new FetchError(`${shown}: more files than the fetch limit (${policy.limits.maxFiles})`);
        }
    };
    walk(dir);
}

/** Fetches a request (the cache first, when it may answer) and keeps it in the cache. */
export async function fetchSource(req: FetchRequest, policy: FetchPolicy): Promise<FetchedSource> {
    const cached = fromCache(req, policy);
    if (cached) return cached;
    const url = cacheUrl(req);
    if (policy.offline) throw new FetchError(`${url}: not in the cache, and --offline fetches nothing`);
    const scratch = scratchIn(policy);
    try {
        const tree = path.join(scratch, "tree");
        const base = { kind: req.kind, url, ref: refOf(req), floating: isFloating(req) };
        const id = cacheId(req);
        if (req.kind === "git") {
            const got = await gitCheckout(policy, req.url, req.ref, tree, req.semver === true);
            checkTree(tree, policy, url);
            return keep(policy, scratch, extended(base, { resolved: got.commit, digest: `git-tree:${got.tree}` }), id);
        }
        if (req.kind === "file") {
            const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
            const answer = await policyGet(policy, req.url, { budget });
            const digest = `sha256:${crypto.createHash("sha256").update(answer.body).digest("hex")}`;
            const name = path.posix.basename(new URL(req.url).pathname).replace(/[^\w.-]/g, "_") || "resource.yaml";
            fs.mkdirSync(tree);
            fs.writeFileSync(path.join(tree, name), answer.body);
            return keep(policy, scratch, extended(base, { resolved: digest, digest }), id);
        }
        const semver = req.kind === "oci" && req.digest === undefined ? req.fluxSemver : undefined;
        if (req.kind === "oci" && req.artifact !== undefined) {
            const got = await ociArtifactPull(
                policy,
                req.url,
                {
                    digest: req.digest,
                    semver: semver ? req.version : undefined,
                    semverFilter: semver?.filter,
                    tag: req.digest === undefined && !semver ? req.version : undefined,
                    mediaType: req.artifact.mediaType,
                },
                tree,
            );
            checkTree(tree, policy, url);
            const resolved = got.tag === undefined ? got.digest : `${got.tag}@${got.digest}`;
            return keep(policy, scratch, extended(base, { resolved, digest: got.digest }), id);
        }
        const pulled = path.join(scratch, "pull");
        const got =
            req.kind === "helm"
                ? await helmPull(policy, req.url, req.chart, req.version, pulled)
                : await ociPull(
                      policy,
                      req.url,
                      semver ? await ociSemverTag(policy, req.url, req.version, semver.filter) : req.version,
                      pulled,
                      req.digest,
                  );
        // helm pulling by digest also leaves an empty `<chart>@sha256:...` folder: only a folder with files is a chart.
        const dirs = fs
            .readdirSync(path.join(pulled, "tree"), { withFileTypes: true })
            .filter((e) => e.isDirectory() && fs.readdirSync(path.join(pulled, "tree", e.name)).length > 0);
        if (dirs.length !== 1) throw new FetchError(`${url}: the archive holds no single chart folder`);
        fs.renameSync(path.join(pulled, "tree", dirs[0].name), tree);
        fs.rmSync(pulled, { recursive: true, force: true });
        checkTree(tree, policy, url);
        return keep(policy, scratch, extended(base, { resolved: got.version, digest: got.digest }), id);
    } catch (e) {
        fs.rmSync(scratch, { recursive: true, force: true });
        throw e;
    }
}

export function fetchGit(url: string, ref: string, policy: FetchPolicy): Promise<FetchedSource> {
    return fetchSource({ kind: "git", url, ref }, policy);
}

export function fetchChart(repoUrl: string, chart: string, version: string, policy: FetchPolicy) {
    return fetchSource({ kind: "helm", url: repoUrl, chart, version }, policy);
}

export function fetchOci(url: string, version: string, policy: FetchPolicy): Promise<FetchedSource> {
    return fetchSource({ kind: "oci", url, version }, policy);
}

/** What a run fetched, by request: kept with the run's record of fetched sources (RenderContext.fetched). */
const runFetches = new WeakMap<FetchedSource[], Map<string, FetchedSource | FetchError>>();

/**
 * fetchSourceSync once a run: the first request for a source fetches it (and records it in `fetched`, the run's
 * record); every later one in the run gets the same answer, a failure included. So a floating reference resolves
 * to one revision for every user of it in the run (an ApplicationSet's git generator and the Applications it
 * generates, fifteen Applications of one repository), and a failing server is waited for once.
 */
export function fetchForRun(req: FetchRequest, policy: FetchPolicy, fetched: FetchedSource[]): FetchedSource {
    let memo = runFetches.get(fetched);
    if (!memo) runFetches.set(fetched, (memo = new Map<string, FetchedSource | FetchError>()));
    const key = JSON.stringify(req);
    const known = memo.get(key);
    if (known instanceof FetchError) throw known;
    if (known) return known;
    try {
        const got = fetchSourceSync(req, policy);
        memo.set(key, got);
        // Two URLs shown alike (they differ only by a query, which is never shown) are two sources when their content is.
        if (!fetched.some((x) => x.url === got.url && x.ref === got.ref && x.digest === got.digest)) fetched.push(got);
        return got;
    } catch (e) {
        if (e instanceof FetchError) memo.set(key, e);
        throw e;
    }
}

/** The child process that fetches for synchronous callers (tsc's output of ./child.ts). */
export const FETCH_CHILD = path.join(REPO_ROOT, "bin", "gitops", "fetch", "child.js");

/**
 * fetchSource for synchronous callers: the cache when it may answer, else a child process of ours (./child.ts),
 * killed when the policy's time limit (and a few seconds to start) has passed.
 */
export function fetchSourceSync(req: FetchRequest, policy: FetchPolicy): FetchedSource {
    const cached = fromCache(req, policy);
    if (cached) return cached;
    const url = cacheUrl(req);
    if (policy.offline) throw new FetchError(`${url}: not in the cache, and --offline fetches nothing`);
    const r = spawnSync(process.execPath, [FETCH_CHILD], {
        input: JSON.stringify({ req, policy }),
        encoding: "utf8",
        timeout: policy.limits.timeoutMs + 10_000,
        killSignal: "SIGKILL",
        maxBuffer: 1024 * 1024,
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
        throw new FetchError(`${url}: no answer within the time limit`);
    let answer: { source?: FetchedSource; error?: string } = {};
    try {
        answer = JSON.parse(r.stdout ?? "") as typeof answer;
    } catch {
        throw new FetchError(`${url}: the fetch failed (${r.error ? "cannot start it" : `exit ${r.status}`})`);
    }
    if (answer.source) return answer.source;
    throw new FetchError(answer.error ?? `${url}: the fetch failed`);
}
