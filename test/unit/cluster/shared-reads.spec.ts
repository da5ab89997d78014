/**
 * Reads shared by concurrent reviews, without a server (cluster/shared-reads.ts): answers kept for the newest
 * revision read, and revision reads that do not wait for one another. The reviews around them, over a stand-in
 * API server, are test/unit/cluster/deadline.spec.ts's and admission.spec.ts's.
 */
import * as assert from "assert";
import { performance } from "perf_hooks";
import { SharedReads } from "../../../cluster/shared-reads";

/** A revision source whose reads end when the spec says: `answer(i, revision)` ends the i-th read sent. */
function heldRevisions() {
    const pending: ((r: string) => void)[] = [];
    const sentAt: number[] = [];
    return {
        read: () => new Promise<string>((resolve) => (sentAt.push(performance.now()), pending.push(resolve))),
        sent: () => pending.length,
        /** When each read was sent (performance.now()). */
        sentAt,
        answer: (i: number, revision: string) => pending[i](revision),
    };
}

/** Turns of the event loop until `check` holds. */
async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
    assert.ok(check(), "condition never held");
}

/** Until `check` holds, looking every millisecond (a spaced read is sent by a timer). */
async function spaced(check: () => boolean): Promise<void> {
    for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(check(), "condition never held");
}

describe("cluster/shared-reads: answers kept at a revision, revision reads side by side", () => {
    it("a read that failed is not kept, nor one answered at a revision no longer the newest", async () => {
        let revision = "5";
        const sent: string[] = [];
        let fail = true;
        const shared = new SharedReads(
            async (kind, _ns, _name, floor) => {
                sent.push(`${kind}@${floor}`);
                if (fail) throw new Error("the list failed");
                return [];
            },
            8,
            async () => revision,
        );
        const floor = await shared.revision();
        await assert.rejects(shared.read("RoleBinding", "app", undefined, floor), /the list failed/);
        fail = false;
        await shared.read("RoleBinding", "app", undefined, floor);
        await shared.read("RoleBinding", "app", undefined, floor);
        assert.deepStrictEqual(sent, ["RoleBinding@5", "RoleBinding@5"]);
        revision = "6";
        assert.strictEqual(await shared.revision(), "6");
        await shared.read("RoleBinding", "app", undefined, "5"); // a review that read the older revision
        await shared.read("RoleBinding", "app", undefined, "6");
        await shared.read("RoleBinding", "app", undefined, "6");
        assert.deepStrictEqual(sent.slice(2), ["RoleBinding@5", "RoleBinding@6"]);
        assert.strictEqual(shared.counters.kept, 2);
    });

    it("a review arriving while a revision read is on its way sends its own without waiting for its answer", async () => {
        const source = heldRevisions();
        const shared = new SharedReads(async () => [], 8, source.read, 0);
        const first = shared.revision();
        await until(() => source.sent() === 1);
        const second = shared.revision();
        await until(() => source.sent() === 2); // sent while the first is still unanswered
        source.answer(1, "7");
        assert.strictEqual(await second, "7");
        source.answer(0, "6"); // the older read ends last: the newest revision stays 7
        assert.strictEqual(await first, "6");
        const sent: string[] = [];
        const reads = new SharedReads(
            async (kind, _ns, _name, floor) => (sent.push(`${kind}@${floor}`), []),
            8,
            source.read,
            0,
        );
        const r = reads.revision();
        await spaced(() => source.sent() === 3);
        source.answer(2, "9");
        await r;
        const late = reads.revision();
        await until(() => source.sent() === 4);
        const later = reads.revision();
        await until(() => source.sent() === 5);
        source.answer(4, "11");
        source.answer(3, "10"); // ends after the read that returned 11
        assert.deepStrictEqual([await late, await later], ["10", "11"]);
        await reads.read("Role", "app", "r", "11");
        await reads.read("Role", "app", "r", "11");
        assert.deepStrictEqual(sent, ["Role@11"], "answers at 11 were dropped by the older read ending last");
        // A read sent later answering a lower revision (etcd restored from a backup): what was kept is dropped,
        // and the revision 11 reached again is listed anew.
        for (const [i, revision] of [
            [5, "9"],
            [6, "11"],
        ] as const) {
            const next = reads.revision();
            await until(() => source.sent() === i + 1);
            source.answer(i, revision);
            assert.strictEqual(await next, revision);
        }
        await reads.read("Role", "app", "r", "11");
        assert.deepStrictEqual(sent, ["Role@11", "Role@11"]);
    });

    it("reviews arriving while every revision read slot is taken share one read, sent when a slot frees", async () => {
        const source = heldRevisions();
        const shared = new SharedReads(async () => [], 8, source.read, 0);
        const onTheirWay: Promise<string>[] = [];
        for (let i = 1; i <= 32; i++) {
            onTheirWay.push(shared.revision()); // one arriving once the read before it was sent
            await until(() => source.sent() === i);
        }
        const queued = [shared.revision(), shared.revision(), shared.revision()];
        for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));
        assert.strictEqual(source.sent(), 32);
        source.answer(0, "5");
        await until(() => source.sent() === 33);
        source.answer(32, "6");
        assert.deepStrictEqual(await Promise.all(queued), ["6", "6", "6"]);
        for (let i = 1; i < 32; i++) source.answer(i, "5");
        await Promise.all(onTheirWay);
        assert.strictEqual(source.sent(), 33);
    });
    it("a revision read is sent no sooner than the spacing after the one before; reviews until then share it", async () => {
        const source = heldRevisions();
        const spacingMs = 40;
        const shared = new SharedReads(async () => [], 8, source.read, spacingMs);
        const first = shared.revision();
        await until(() => source.sent() === 1); // the first of a quiet spell is sent at once
        const arriving = [shared.revision(), shared.revision(), shared.revision()];
        await spaced(() => source.sent() === 2);
        // Timed by the clock the spacing is kept by, whatever the machine's load delays (timers only run late).
        const gap = source.sentAt[1] - source.sentAt[0];
        assert.ok(gap >= spacingMs - 0.5, `the second read was sent ${gap.toFixed(1)} ms after the first`);
        const afterItWasSent = shared.revision(); // arrived once the shared read was on its way: not joined
        source.answer(1, "8");
        assert.deepStrictEqual(await Promise.all(arriving), ["8", "8", "8"]);
        await spaced(() => source.sent() === 3);
        source.answer(2, "9");
        source.answer(0, "7");
        assert.deepStrictEqual([await first, await afterItWasSent], ["7", "9"]);
    });
});
