/**
 * The content-addressed cache of fetched sources, in the user's cache folder (`--cache-dir`), shared by every command
 * that fetches.
 * `v1/content/<key>/` holds a tree keyed by SHA-256 of (kind, URL, resolved revision or digest), written once by
 * rename, never changed; `v1/refs/<key>.json` what a reference last resolved to. Nothing in it holds a credential: URLs
 * are kept as shown (./network-policy.ts shownUrl).
 */
import * as fs from "fs";
import * as path from "path";
import type { FetchedSource, SourceKind } from "./fetched-source";
import { FetchPolicy } from "./network-policy";
import { extended } from "../../support/shapes";

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

/** What the cache holds for a reference, when it holds its content too. */
export function cachedSource(
    policy: FetchPolicy,
    kind: SourceKind,
    url: string,
    ref: string,
    floating: boolean,
): FetchedSource | undefined {
    let rec: RefRecord;
    try {
        rec = JSON.parse(fs.readFileSync(refFile(policy, kind, url, ref), "utf8")) as RefRecord;
    } catch {
        return undefined;
    }
    if (typeof rec.key !== "string" || !/^[0-9a-f]{64}$/.test(rec.key)) return undefined;
    const dir = contentDir(policy, rec.key);
    if (!fs.existsSync(path.join(dir, "tree"))) return undefined;
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
 * the reference; when the same revision is already there, that copy is kept and the new one removed.
 */
export function keep(
    policy: FetchPolicy,
    scratch: string,
    s: Omit<FetchedSource, "path" | "fromCache">,
): FetchedSource {
    const key = sha256([s.kind, s.url, s.resolved, s.digest]);
    const dir = contentDir(policy, key);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
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
    const file = refFile(policy, s.kind, s.url, s.ref);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const record: RefRecord = { resolved: s.resolved, digest: s.digest, key };
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(record));
    fs.renameSync(tmp, file);
    return extended(s, { path: path.join(dir, "tree"), fromCache: false });
}
