/**
 * The fetch cache is bounded (gitops/fetch/source-cache.ts): a new entry evicts entries unused past the age limit,
 * then the least recently used until the rest fits the size limit; a hit counts as a use; an entry used within the
 * last hour is never evicted; references to evicted entries go with them; the bounds from the environment.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { cachedSource, keep, scratchIn } from "../../../../gitops/fetch/source-cache";
import { BadInputError } from "../../../../support/errors";
import { DEFAULT_CACHE_BOUNDS, cacheBounds, fetchPolicy } from "../../../../gitops/fetch/network-policy";

const HOUR = 60 * 60 * 1000;

describe("gitops/fetch/source-cache eviction", () => {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-cache-spec-"))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const policy = (maxBytes: number, maxAgeMs = 30 * 24 * HOUR) =>
        fetchPolicy({ cacheDir: dir, cache: { maxBytes, maxAgeMs } });
    /** Keeps a fetched tree of `bytes` bytes for `url` at ref `v1`. */
    const put = (p: ReturnType<typeof policy>, url: string, bytes: number) => {
        const scratch = scratchIn(p);
        fs.mkdirSync(path.join(scratch, "tree"));
        fs.writeFileSync(path.join(scratch, "tree", "f"), Buffer.alloc(bytes));
        return keep(p, scratch, { kind: "git", url, ref: "v1", resolved: "c", digest: `d-${url}`, floating: false });
    };
    const hit = (p: ReturnType<typeof policy>, url: string) => cachedSource(p, "git", url, "v1", false);
    /** Marks an entry (by its tree) last used `ago` ms before now. */
    const usedAgo = (tree: string, ago: number) => {
        const t = new Date(Date.now() - ago);
        fs.utimesSync(path.dirname(tree), t, t);
    };
    const refs = () => fs.readdirSync(path.join(dir, "v1", "refs")).length;

    it("evicts the least recently used entries until the rest fits the size limit; a hit is a use", () => {
        const p = policy(2500);
        const a = put(p, "https://a", 1000);
        const b = put(p, "https://b", 1000);
        usedAgo(a.path, 3 * HOUR);
        usedAgo(b.path, 2 * HOUR);
        // a is older, but a hit makes it the most recently used: b goes when c does not fit beside both.
        assert.ok(hit(p, "https://a"));
        put(p, "https://c", 1000);
        assert.ok(hit(p, "https://a"), "a was used last: kept");
        assert.strictEqual(hit(p, "https://b"), undefined, "b, least recently used, evicted");
        assert.ok(hit(p, "https://c"), "the new entry is kept");
        assert.strictEqual(fs.existsSync(b.path), false);
        assert.strictEqual(refs(), 2, "b's reference goes with it");
    });

    it("evicts an entry unused past the age limit, whatever the size", () => {
        const p = policy(1_000_000, 10 * 24 * HOUR);
        const old = put(p, "https://old", 10);
        const recent = put(p, "https://recent", 10);
        usedAgo(old.path, 11 * 24 * HOUR);
        usedAgo(recent.path, 9 * 24 * HOUR);
        put(p, "https://new", 10);
        assert.strictEqual(hit(p, "https://old"), undefined);
        assert.ok(hit(p, "https://recent"));
        assert.ok(hit(p, "https://new"));
    });

    it("never evicts an entry used within the last hour, even past the size limit", () => {
        const p = policy(100);
        put(p, "https://a", 1000);
        put(p, "https://b", 1000);
        assert.ok(hit(p, "https://a"));
        assert.ok(hit(p, "https://b"));
    });

    it("takes its bounds from the environment, the defaults otherwise, and refuses a bad one in one line", () => {
        assert.deepStrictEqual(cacheBounds({}), DEFAULT_CACHE_BOUNDS);
        assert.deepStrictEqual(cacheBounds({ PKO_GUARD_CACHE_MAX_MB: "512", PKO_GUARD_CACHE_MAX_DAYS: "7" }), {
            maxBytes: 512 * 1024 * 1024,
            maxAgeMs: 7 * 24 * HOUR,
        });
        for (const bad of ["0", "-1", "1.5", "2G", "x"])
            assert.throws(
                () => cacheBounds({ PKO_GUARD_CACHE_MAX_MB: bad }),
                (e: Error) =>
                    e instanceof BadInputError &&
                    e.message === `PKO_GUARD_CACHE_MAX_MB: ${JSON.stringify(bad)} is not a whole number of at least 1`,
            );
    });
});
