/**
 * The order of reviews that could interact (cluster/review-locks.ts): a review waits for earlier ones that share
 * a key, not for others; ALL waits for and holds off everything; grants are first come, first served; a wait
 * ends at the review's deadline, holding nothing.
 */
import * as assert from "assert";
import { ALL, ReviewLocks } from "../../../cluster/review-locks";

/** Whether a promise has settled after the turns already queued. */
async function settled(p: Promise<unknown>): Promise<boolean> {
    let done = false;
    p.then(
        () => (done = true),
        () => (done = true),
    );
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return done;
}

describe("cluster/review-locks: reviews that share a key, one at a time", () => {
    it("a review waits for an earlier one sharing a key, not for one that shares none", async () => {
        const locks = new ReviewLocks();
        const first = await locks.acquire(["ns:a", "role:ClusterRole//x"]);
        const sameNs = locks.acquire(["ns:a"]);
        const other = locks.acquire(["ns:b"]);
        assert.strictEqual(await settled(sameNs), false);
        assert.strictEqual(await settled(other), true);
        first();
        assert.strictEqual(await settled(sameNs), true);
        (await sameNs)();
        (await other)();
        assert.deepStrictEqual(locks.counts(), { holding: 0, waiting: 0 });
    });

    it("ALL waits for every holder, and later reviews wait for it, in order", async () => {
        const locks = new ReviewLocks();
        const a = await locks.acquire(["ns:a"]);
        const all = locks.acquire([ALL]);
        const later = locks.acquire(["ns:z"]);
        assert.strictEqual(await settled(all), false);
        assert.strictEqual(await settled(later), false, "a later review does not pass the waiting ALL");
        a();
        assert.strictEqual(await settled(all), true);
        assert.strictEqual(await settled(later), false);
        (await all)();
        assert.strictEqual(await settled(later), true);
        (await later)();
    });

    it("a wait ends at the deadline holding nothing, and those behind it go on", async () => {
        const locks = new ReviewLocks();
        const a = await locks.acquire(["ns:a"]);
        const deadline = new AbortController();
        const waiting = locks.acquire(["ns:a", "ns:b"], deadline.signal);
        const behind = locks.acquire(["ns:b"]);
        assert.strictEqual(await settled(behind), false);
        deadline.abort();
        await assert.rejects(waiting, /kept this one waiting until its deadline/);
        assert.strictEqual(await settled(behind), true);
        (await behind)();
        a();
        a(); // released twice: nothing more
        assert.deepStrictEqual(locks.counts(), { holding: 0, waiting: 0 });
    });
});
