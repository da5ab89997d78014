/**
 * Claims across replicas (cluster/claims.ts) against a fake API server's Leases: a held key makes the next review
 * wait until it is released; a claim is kept until what its review admitted shows, or its hold passes; an expired
 * Lease is taken over at its resourceVersion, and its old holder's release then deletes nothing; ALL and keys
 * exclude each other; a wait past the deadline, or an API server that refuses, rejects holding nothing; under many
 * concurrent claims of random keys no two conflicting ones are ever held at once.
 */
import * as assert from "assert";
import { ALL_LEASE, ClaimError, Claims, LeaseStore, leaseName } from "../../../cluster/claims";
import { ALL } from "../../../cluster/review-locks";
import { FakeLeases, settled } from "../../support/fake-leases";

/** Waits for `cond`, a bounded number of timer turns (a condition, not a timing: the bound only ends a hang). */
async function until(what: string, cond: () => boolean): Promise<void> {
    for (let i = 0; i < 5000; i++) {
        if (cond()) return;
        await new Promise((r) => setTimeout(r, 1));
    }
    assert.fail(`never: ${what}`);
}

const open = () => new AbortController().signal;

/** Keys claimed exclusively (and `shared` ones shared). */
const ex = (keys: string[], shared: string[] = []) => ({ exclusive: keys, shared });

function claims(store: LeaseStore, replica = "r1", extra: Partial<ConstructorParameters<typeof Claims>[1]> = {}) {
    return new Claims(store, { replica, holdMs: 60_000, durationS: 30, pollMs: 1, ...extra });
}

describe("cluster/claims: interacting reviews ordered across replicas through Leases", () => {
    it("a key held by one replica's review keeps another's waiting until released; other keys do not wait", async () => {
        const store = new FakeLeases();
        const one = claims(store, "r1");
        const two = claims(store, "r2");
        const first = await one.claim(ex(["ns:a", "role:Role/a/x"]), open());
        assert.ok(store.leases.has(leaseName("ns:a")));
        const same = two.claim(ex(["ns:a"]), open());
        const other = two.claim(ex(["ns:b"]), open());
        assert.strictEqual(await settled(same), false);
        assert.strictEqual(await settled(other), true);
        first.release();
        assert.strictEqual(await settled(same), true);
        (await same).release();
        (await other).release();
        await until("every Lease deleted", () => store.leases.size === 0);
        assert.strictEqual(one.held + two.held, 0);
    });

    it("a claim is kept until what its review admitted shows in the cache", async () => {
        const store = new FakeLeases();
        const one = claims(store, "r1");
        let shown = false;
        (await one.claim(ex(["ns:a"]), open())).release(() => shown);
        const next = claims(store, "r2").claim(ex(["ns:a"]), open());
        assert.strictEqual(await settled(next), false);
        assert.ok(store.leases.has(leaseName("ns:a")), "still held while not shown");
        shown = true;
        const got = await next;
        assert.match(store.leases.get(leaseName("ns:a"))!.holder, /^r2\//);
        got.release();
    });

    it("a claim whose object never shows (the API server refused the write) is released once its hold passes", async () => {
        const store = new FakeLeases();
        const one = claims(store, "r1", { holdMs: 5 });
        (await one.claim(ex(["ns:a"]), open())).release(() => false);
        await until("the hold to pass", () => store.leases.size === 0);
        assert.strictEqual(one.held, 0);
    });

    it("an expired Lease (its holder died) is taken over at its resourceVersion; the old holder then deletes nothing", async () => {
        const store = new FakeLeases();
        let clock = 1_000_000;
        const dead = claims(store, "dead", { now: () => clock });
        const theirs = await dead.claim(ex(["ns:a"]), open());
        const before = store.leases.get(leaseName("ns:a"))!;
        const live = claims(store, "live", { now: () => clock });
        const waiting = live.claim(ex(["ns:a"]), open());
        assert.strictEqual(await settled(waiting), false, "not taken before it expires");
        clock += 31_000;
        const mine = await waiting;
        const now = store.leases.get(leaseName("ns:a"))!;
        assert.strictEqual(store.calls.takeOver, 1);
        assert.strictEqual(now.uid, before.uid, "the same Lease, updated");
        assert.notStrictEqual(now.resourceVersion, before.resourceVersion);
        assert.match(now.holder, /^live\//);
        theirs.release();
        await until("the old holder's release sent", () => store.calls.remove >= 1);
        assert.ok(store.leases.has(leaseName("ns:a")), "the taker's claim is still there");
        mine.release();
        await until("the taker's release", () => store.leases.size === 0);
    });

    it("two replicas taking over one expired Lease: one wins, the other waits for it", async () => {
        const store = new FakeLeases();
        let clock = 1_000_000;
        await claims(store, "dead", { now: () => clock }).claim(ex(["ns:a"]), open());
        clock += 31_000;
        const a = claims(store, "a", { now: () => clock }).claim(ex(["ns:a"]), open());
        const b = claims(store, "b", { now: () => clock }).claim(ex(["ns:a"]), open());
        const first = await Promise.race([a.then(() => "a"), b.then(() => "b")]);
        const loser = first === "a" ? b : a;
        assert.strictEqual(await settled(loser), false, "the loser waits");
        (await (first === "a" ? a : b)).release();
        (await loser).release();
        await until("every Lease deleted", () => store.leases.size === 0);
    });

    it("a claim not made before the deadline rejects with one reason, holding nothing", async () => {
        const store = new FakeLeases();
        const held = await claims(store, "r1").claim(ex(["ns:b"]), open());
        const deadline = new AbortController();
        const other = claims(store, "r2");
        // ns:a is taken, ns:b waited on: at the deadline ns:a is given back.
        const waiting = other.claim(ex(["ns:a", "ns:b"]), deadline.signal);
        // Taken ns:a, and found ns:b held (its read of ns:b's holder started): waiting, whichever call is in flight.
        await until(
            "ns:a taken and ns:b found held",
            () => store.leases.has(leaseName("ns:a")) && store.calls.get >= 1,
        );
        deadline.abort();
        await assert.rejects(waiting, (e: Error) => {
            assert.ok(e instanceof ClaimError);
            assert.match(
                e.message,
                /^waited until its deadline for another review's claim on the same namespaces or role$/,
            );
            return true;
        });
        await until("ns:a given back", () => !store.leases.has(leaseName("ns:a")));
        assert.strictEqual(other.held, 0);
        held.release();
    });

    it("an API server that does not answer: refused at the deadline as state that cannot be read, not as a wait", async () => {
        const store = new FakeLeases();
        store.hang = true;
        const deadline = new AbortController();
        const claim = claims(store, "r1").claim(ex(["ns:a"]), deadline.signal);
        assert.strictEqual(await settled(claim), false);
        deadline.abort();
        await assert.rejects(claim, (e: Error) => {
            assert.ok(e instanceof ClaimError);
            assert.match(
                e.message,
                /^cluster state cannot be read \(the review's claim did not answer before its deadline\)$/,
            );
            return true;
        });
    });

    it("an API server that refuses the claim rejects with its reason, giving back what was taken", async () => {
        const store = new FakeLeases();
        const other = await claims(store, "r2").claim(ex(["ns:b"]), open());
        const one = claims(store, "r1");
        // ns:a taken, ns:b waited on when the API server starts refusing.
        const first = one.claim(ex(["ns:a", "ns:b"]), open());
        await until("ns:a taken", () => store.leases.has(leaseName("ns:a")));
        store.fail = new Error('leases.coordination.k8s.io is forbidden: User "x" cannot create\nmore');
        await assert.rejects(first, (e: Error) => {
            assert.ok(e instanceof ClaimError);
            assert.match(e.message, /^the API server did not take the review's claim \(leases.* cannot create\)$/);
            return true;
        });
        await until("ns:a given back", () => !store.leases.has(leaseName("ns:a")));
        assert.strictEqual(one.held, 0);
        other.release();
        await until("ns:b released", () => store.leases.size === 0);
    });

    it("ALL waits for every key's claim, and keys wait while ALL is held", async () => {
        const store = new FakeLeases();
        const r1 = claims(store, "r1");
        const r2 = claims(store, "r2");
        const key = await r1.claim(ex(["ns:a"]), open());
        const all = r2.claim(ex([ALL, "ns:z"]), open());
        assert.strictEqual(await settled(all), false, "ALL waits for ns:a");
        assert.ok(store.leases.has(ALL_LEASE), "ALL's Lease is taken while it waits");
        const later = r1.claim(ex(["ns:b"]), open());
        assert.strictEqual(await settled(later), false, "a key waits while ALL is held");
        key.release();
        const every = await all;
        assert.strictEqual(await settled(later), false);
        assert.ok(!store.leases.has(leaseName("ns:b")), "ns:b given back while ALL is held");
        every.release();
        (await later).release();
        await until("every Lease deleted", () => store.leases.size === 0);
    });

    it("shared claims of a key do not wait for each other; an exclusive one waits for them, and they for it", async () => {
        const store = new FakeLeases();
        const [r1, r2, r3] = ["r1", "r2", "r3"].map((r) => claims(store, r));
        const role = "role:ClusterRole//view";
        const a = await r1.claim(ex([], [role]), open());
        const b = r2.claim(ex(["ns:b"], [role]), open());
        assert.strictEqual(await settled(b), true, "a second shared claim does not wait");
        const change = r3.claim(ex([role]), open());
        assert.strictEqual(await settled(change), false, "the exclusive claim waits for the shared ones");
        assert.ok(store.leases.has(leaseName(role)), "holding its Lease while it waits");
        const later = r1.claim(ex([], [role]), open());
        assert.strictEqual(await settled(later), false, "a shared claim waits while the exclusive one is held");
        a.release();
        (await b).release();
        const changing = await change;
        assert.strictEqual(await settled(later), false);
        changing.release();
        (await later).release();
        await until("every Lease deleted", () => store.leases.size === 0);
    });

    it("many concurrent claims of random keys, shared and exclusive, over three replicas: no two conflicting ones held at once", async () => {
        const store = new FakeLeases();
        const replicas = ["a", "b", "c"].map((r) => claims(store, r));
        const keys = ["ns:a", "ns:b", "role:Role/a/x", "role:ClusterRole//view", ALL];
        const holding: { exclusive: Set<string>; shared: Set<string> }[] = [];
        let overlaps = 0;
        let seed = 7;
        const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
        const one = async (i: number) => {
            const exclusive = keys.filter(() => random() < 0.25);
            const shared = keys.filter((k) => k !== ALL && !exclusive.includes(k) && random() < 0.3);
            if (exclusive.length + shared.length === 0) exclusive.push(keys[i % keys.length]);
            const mine = { exclusive: new Set(exclusive), shared: new Set(shared) };
            const c = await replicas[i % 3].claim(ex(exclusive, shared), open());
            const every = (s: typeof mine) => [...s.exclusive, ...s.shared];
            const conflicting = (s: typeof mine) =>
                s.exclusive.has(ALL) ||
                mine.exclusive.has(ALL) ||
                every(s).some((k) => mine.exclusive.has(k)) ||
                every(mine).some((k) => s.exclusive.has(k));
            if (holding.some(conflicting)) overlaps++;
            holding.push(mine);
            for (let t = 0; t < 1 + (i % 3); t++) await new Promise((r) => setTimeout(r, 0));
            holding.splice(holding.indexOf(mine), 1);
            c.release();
        };
        await Promise.all(Array.from({ length: 80 }, (_, i) => one(i)));
        assert.strictEqual(overlaps, 0);
        await until("every Lease deleted", () => store.leases.size === 0);
    });
});
