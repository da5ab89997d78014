/**
 * The cache's watches as readiness sees them (cluster/cache.ts), against stand-ins of an API server whose
 * watch misbehaves:
 * - a watch that stalls silently (open, no event, no close) counts its kind stale once nothing arrived for
 *   `watchStallMs` (the server ends a healthy watch at the `timeoutSeconds` it is sent), is ended and opened
 *   again, and the kind is fresh again once an event arrives; a start that is never answered (a connection
 *   held open) is left behind and another sent;
 * - a watch refused at its start, as an API server whose store was replaced (a new etcd: the cache's
 *   resourceVersion is one it never had, "Too large resource version") refuses it, relists instead of asking
 *   again from the same resourceVersion for ever, and recovers by itself with what the new store holds;
 * - a watch an API server on a replaced store accepts at a resourceVersion ahead of its own (kube-apiserver's
 *   watch cache then sends nothing until its revision passes it) and ends at its timeout having sent nothing:
 *   the cache reads the server's revision, finds its own ahead of it, and relists.
 */
import * as assert from "assert";
import { ClusterCache } from "../../../cluster/cache";
import { WatchFn } from "../../../cluster/client";
import { WATCHED_KINDS } from "../../../cluster/kinds";
import { FakeCluster, offlineKubeConfig } from "../../support/fake-cluster";

const STACK = WATCHED_KINDS.find((k) => k.kind === "Stack")!;
const stack = (name: string) => ({
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name, namespace: "app", uid: `uid-${name}`, resourceVersion: "1" },
    spec: { stack: `org/p/${name}` },
});

/** Turns of the event loop (and the cache's short timers) until `check` holds. */
async function until(what: string, check: () => boolean): Promise<void> {
    for (let i = 0; i < 20_000 && !check(); i++) await new Promise((r) => setImmediate(r));
    assert.ok(check(), `${what}: never held`);
}

interface Opened {
    query: Record<string, unknown>;
    controller: AbortController;
    onEvent: (phase: string, obj: never) => void;
    done: (err: unknown) => void;
}

describe("the cache's watches and readiness", () => {
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    it("a watch that stalls silently marks its kind stale, is opened again, and is fresh once events flow", async () => {
        const fake = new FakeCluster().add(stack("a"));
        const opened: Opened[] = [];
        // Opens and then says nothing, never closing (a proxy or server that hangs on the stream).
        const watch: WatchFn = (_path, query, onEvent, done) => {
            const controller = new AbortController();
            controller.signal.addEventListener("abort", () => done(new Error("The operation was aborted.")));
            opened.push({ query, controller, onEvent: onEvent as Opened["onEvent"], done });
            return Promise.resolve(controller);
        };
        const events: string[] = [];
        cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK],
            retryMs: 1,
            watchStallMs: 5,
            transport: { send: fake.transport.send, watch },
            log: (event) => events.push(event),
        });
        cache.start();
        await cache.waitForSync(10_000);
        await until("the stalled watch noticed", () => cache!.stale().includes("Stack"));
        assert.ok(events.includes("cache.watch_stalled"), events.join(","));
        assert.ok(opened[0].controller.signal.aborted, "the stalled watch is ended");
        assert.ok(typeof opened[0].query.timeoutSeconds === "number", JSON.stringify(opened[0].query));
        await until("a new watch", () => opened.length > 1);
        // Still stale while the new watch says nothing either.
        assert.deepStrictEqual(cache.stale(), ["Stack"]);
        const last = opened[opened.length - 1];
        last.onEvent("ADDED", stack("b") as never);
        assert.deepStrictEqual(cache.stale(), []);
        assert.ok(cache.get("Stack", "app", "b"));
    });

    it("a watch whose start is never answered is left behind: the kind is stale, and another start recovers it", async () => {
        const fake = new FakeCluster().add(stack("a"));
        let starts = 0;
        // The second start hangs (a connection held open before the server answers); the others are the fake's.
        const watch: WatchFn = (path, query, onEvent, done) => {
            if (++starts !== 2) return fake.transport.watch!(path, query, onEvent, done);
            return new Promise<AbortController>(() => undefined);
        };
        cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK],
            retryMs: 1,
            watchStallMs: 5,
            transport: { send: fake.transport.send, watch },
        });
        cache.start();
        await cache.waitForSync(10_000);
        await until("watching", () => fake.watching() === 1);
        fake.dropWatches();
        await until("the hung start noticed", () => cache!.stale().includes("Stack") && starts >= 3);
        await until("watching again", () => fake.watching() === 1);
        fake.emit("ADDED", stack("b"));
        assert.deepStrictEqual(cache.stale(), []);
        assert.ok(cache.get("Stack", "app", "b"));
    });

    it("a watch refused at its start (a replaced store) relists and recovers by itself", async () => {
        const fake = new FakeCluster().add(stack("old"));
        let refuseUpTo = 0;
        const watches: string[] = [];
        const watch: WatchFn = (path, query, onEvent, done) => {
            watches.push(String(query.resourceVersion));
            if (Number(query.resourceVersion) <= refuseUpTo) {
                const e = Object.assign(new Error("Gateway Timeout"), { statusCode: 504 });
                done(e);
                return Promise.resolve(new AbortController());
            }
            return fake.transport.watch!(path, query, onEvent, done);
        };
        cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK],
            retryMs: 1,
            transport: { send: fake.transport.send, watch },
        });
        cache.start();
        await cache.waitForSync(10_000);
        await until("watching", () => fake.watching() === 1);
        const listed = watches[0];
        // The API server restarts on a new store: the cache's resourceVersion is refused from now on, and the
        // new store holds another Stack (at a newer revision here, so the fake's lists can tell them apart).
        refuseUpTo = Number(listed);
        fake.add(stack("new"));
        fake.dropWatches();
        await until("stale", () => cache!.stale().includes("Stack"));
        await until("recovered", () => cache!.stale().length === 0 && fake.watching() === 1);
        assert.ok(cache.get("Stack", "app", "new"), "relisted: the new store's Stack is cached");
        assert.ok(watches.filter((v) => v === listed).length < 5, `asked again from ${listed}: ${watches.join(",")}`);
    });

    it("a watch ended with nothing sent, on a server whose revision is behind the cache's, relists", async () => {
        // The old store: many writes, so its revision is well ahead of the new one's.
        const old = new FakeCluster().add(stack("old"));
        for (let i = 0; i < 20; i++) old.add(stack(`churn-${i}`));
        const fresh = new FakeCluster().add(stack("new"));
        let target = old;
        const CRB = WATCHED_KINDS.find((k) => k.kind === "ClusterRoleBinding")!;
        cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK, CRB],
            retryMs: 1,
            transport: {
                send: (ctx) => target.transport.send!(ctx),
                watch: (path, query, onEvent, done) => target.transport.watch!(path, query, onEvent, done),
            },
        });
        cache.start();
        await cache.waitForSync(10_000);
        assert.ok(cache.get("Stack", "app", "old"));
        // The API server restarts on a new store, which accepts the cache's resourceVersion and sends nothing.
        target = fresh;
        old.endWatches();
        await until("watching the new store", () => fresh.watching() === 2);
        fresh.endWatches();
        await until("relisted from the new store", () => cache!.get("Stack", "app", "new") !== undefined);
        assert.strictEqual(cache.get("Stack", "app", "old"), undefined);
    });

    it("a step of the loop that throws is logged, marks its kind stale and relists it (no unhandled rejection)", async () => {
        const fake = new FakeCluster().add(stack("a"));
        const events: string[] = [];
        let thrown = false;
        cache = new ClusterCache(offlineKubeConfig(), {
            kinds: [STACK],
            retryMs: 1,
            transport: fake.transport,
            log: (event) => {
                events.push(event);
                // The caller's logger failing once, after the first list: the relist's step rejects.
                if (event === "cache.listed" && !thrown) {
                    thrown = true;
                    throw new Error("logger down");
                }
            },
        });
        cache.start();
        await until("the failed step logged", () => events.includes("cache.step_failed"));
        await until("relisted", () => events.filter((e) => e === "cache.listed").length === 2);
        await cache.waitForSync(10_000);
        assert.ok(cache.get("Stack", "app", "a"));
        assert.deepStrictEqual(cache.stale(), []);
    });
});
