/**
 * The content-addressed cache of fetched sources, in the user's cache folder (`--cache-dir`), shared by every command
 * that fetches.
 * `v1/content/<key>/` holds a tree keyed by SHA-256 of (kind, URL with its query, resolved revision or digest), written once by
 * rename, never changed, with its size (`bytes`); the folder's modification time is when it was last used (every
 * hit and every fetch sets it). `v1/refs/<key>.json` is what a reference last resolved to. The cache is bounded
 * (CacheBounds): each new entry evicts what has gone unused past the age limit, then the least recently used entries
 * until the rest fits the size limit, never one used within the last hour (a run may be reading it). Nothing in it
 * holds a credential: URLs are kept as shown (./network-policy.ts shownUrl).
 */
import * as fs from "fs";
import * as path from "path";
import type { FetchedSource, SourceKind } from "./fetched-source";
import { DEFAULT_CACHE_BOUNDS, FetchPolicy } from "./network-policy";
import { extended } from "../../support/shapes";

const DAY_MS = 24 * 60 * 60 * 1000;

/** An entry used this recently is never evicted: this run, or another one sharing the cache, may be reading it. */
const IN_USE_MS = 60 * 60 * 1000;

/** A fetch's scratch folder left this long (a run that was killed) is removed. */
const STALE_SCRATCH_MS = DAY_MS;

/** SHA-256 of the parts; Node's crypto loaded on first use (a run that fetches nothing does not load it). */
function sha256(parts: string[]): string {
    return (require("crypto") as typeof import("crypto")).createHash("sha256").update(parts.join("\0")).digest("hex");
}

function root(policy: FetchPolicy): string {
    return path.join(policy.cacheDir, "v1");
}

/** A new, empty folder in the cache to fetch into (renamed into place by `keep`). */
export function scratchIn(policy: FetchPolicy): string {
    const tmp = path.join(root(policy), "tmp");
    fs.mkdirSync(tmp, { recursive: true });
    return fs.mkdtempSync(path.join(tmp, "f-"));
}

interface RefRecord {
    resolved: string;
    digest: string;
    key: string;
}

function refFile(policy: FetchPolicy, kind: SourceKind, url: string, ref: string): string {
    return path.join(root(policy), "refs", `${sha256([kind, url, ref])}.json`);
}

function contentDir(policy: FetchPolicy, key: string): string {
    return path.join(root(policy), "content", key);
}

/**
 * What the cache holds for a reference, when it holds its content too. `url`: as shown; `id`: the URL the key is
 * made of (with its query: ./fetch.ts cacheId), the shown one when not given.
 */
export function cachedSource(
    policy: FetchPolicy,
    kind: SourceKind,
    url: string,
    ref: string,
    floating: boolean,
    id: string = url,
): FetchedSource | undefined {
    let rec: RefRecord;
    try {
        rec = JSON.parse(fs.readFileSync(refFile(policy, kind, id, ref), "utf8")) as RefRecord;
    } catch {
        return undefined;
    }
    if (typeof rec.key !== "string" || !/^[0-9a-f]{64}$/.test(rec.key)) return undefined;
    const dir = contentDir(policy, rec.key);
    if (!fs.existsSync(path.join(dir, "tree"))) return undefined;
    touch(dir);
    return {
        kind,
        url,
        ref,
        resolved: rec.resolved,
        digest: rec.digest,
        floating,
        path: path.join(dir, "tree"),
        fromCache: true,
    };
}

/**
 * Puts a fetched tree (`scratch/tree`, made by scratchIn) into the cache under its resolved revision and records
 * the reference; when the same revision is already there, that copy is kept and the new one removed. `id`: the URL
 * the keys are made of (with its query), the shown one when not given.
 */
export function keep(
    policy: FetchPolicy,
    scratch: string,
    s: Omit<FetchedSource, "path" | "fromCache">,
    id: string = s.url,
): FetchedSource {
    const key = sha256([s.kind, id, s.resolved, s.digest]);
    const dir = contentDir(policy, key);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // Marked used before it is looked at, so a run evicting old entries at the same time leaves this one.
    touch(dir);
    if (fs.existsSync(path.join(dir, "tree"))) fs.rmSync(scratch, { recursive: true, force: true });
    else {
        fs.rmSync(dir, { recursive: true, force: true });
        try {
            fs.renameSync(scratch, dir);
        } catch (e) {
            // Another run (the pre-commit hook, a second check) put the same revision in place first: keep its copy.
            if (!fs.existsSync(path.join(dir, "tree"))) throw e;
            fs.rmSync(scratch, { recursive: true, force: true });
        }
    }
    entryBytes(dir);
    touch(dir);
    const file = refFile(policy, s.kind, id, s.ref);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const record: RefRecord = { resolved: s.resolved, digest: s.digest, key };
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(record));
    fs.renameSync(tmp, file);
    try {
        evict(policy);
    } catch {
        // Bounding the cache never fails a fetch; the next one tries again.
    }
    return extended(s, { path: path.join(dir, "tree"), fromCache: false });
}

/** Marks an entry used now (its folder's modification time). */
function touch(dir: string): void {
    try {
        const now = new Date();
        fs.utimesSync(dir, now, now);
    } catch {
        // Gone meanwhile (another run evicted it): the caller's copy is read already or fetched again.
    }
}

/**
 * The bytes of an entry's tree: recorded in its `bytes` file when kept, counted (and recorded, the entry's time of
 * last use kept) when missing.
 */
function entryBytes(dir: string): number {
    const file = path.join(dir, "bytes");
    try {
        const n = Number(fs.readFileSync(file, "utf8"));
        if (Number.isSafeInteger(n) && n >= 0) return n;
    } catch {
        // not recorded yet
    }
    let total = 0;
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) walk(p);
            else total += fs.lstatSync(p).size;
        }
    };
    const used = fs.statSync(dir);
    walk(path.join(dir, "tree"));
    fs.writeFileSync(file, String(total));
    fs.utimesSync(dir, used.atime, used.mtime);
    return total;
}

/** Removes a folder of the cache: renamed away first, so no reader ever sees it half removed. */
function removeEntry(policy: FetchPolicy, dir: string): void {
    const gone = path.join(root(policy), "tmp", `evicted-${path.basename(dir)}-${process.pid}`);
    try {
        fs.mkdirSync(path.dirname(gone), { recursive: true });
        fs.renameSync(dir, gone);
    } catch {
        return; // another run removed it first
    }
    fs.rmSync(gone, { recursive: true, force: true });
}

/**
 * Bounds the cache (policy.cache, else DEFAULT_CACHE_BOUNDS): entries unused for longer than `maxAgeMs` are removed,
 * then the least recently used until the rest holds at most `maxBytes`; an entry used within IN_USE_MS stays. Then
 * the references whose entry is gone, and scratch folders of killed runs. `now`: the time it runs at.
 */
export function evict(policy: FetchPolicy, now = Date.now()): void {
    const bounds = policy.cache ?? DEFAULT_CACHE_BOUNDS;
    const content = path.join(root(policy), "content");
    let names: string[];
    try {
        names = fs.readdirSync(content).filter((n) => /^[0-9a-f]{64}$/.test(n));
    } catch {
        return;
    }
    const entries: { dir: string; used: number; bytes: number }[] = [];
    for (const n of names) {
        const dir = path.join(content, n);
        try {
            entries.push({ dir, used: fs.statSync(dir).mtimeMs, bytes: entryBytes(dir) });
        } catch {
            // half written or removed meanwhile: not counted
        }
    }
    entries.sort((a, b) => a.used - b.used);
    let total = entries.reduce((sum, e) => sum + e.bytes, 0);
    for (const e of entries) {
        if (now - e.used < IN_USE_MS) break; // the rest were used as recently or more
        if (now - e.used <= bounds.maxAgeMs && total <= bounds.maxBytes) continue;
        removeEntry(policy, e.dir);
        total -= e.bytes;
    }
    const refs = path.join(root(policy), "refs");
    for (const f of fs.existsSync(refs) ? fs.readdirSync(refs) : []) {
        if (!f.endsWith(".json")) continue;
        try {
            const rec = JSON.parse(fs.readFileSync(path.join(refs, f), "utf8")) as RefRecord;
            if (typeof rec.key === "string" && !fs.existsSync(contentDir(policy, rec.key)))
                fs.rmSync(path.join(refs, f));
        } catch {
            // being written by another run
        }
    }
    const tmp = path.join(root(policy), "tmp");
    for (const f of fs.existsSync(tmp) ? fs.readdirSync(tmp) : []) {
        const p = path.join(tmp, f);
        try {
            if (now - fs.statSync(p).mtimeMs > STALE_SCRATCH_MS) fs.rmSync(p, { recursive: true, force: true });
        } catch {
            // removed meanwhile
        }
    }
}
