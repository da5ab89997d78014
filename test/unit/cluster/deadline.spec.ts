/**
 * An API server that stops answering, through the client library with a stand-in server
 * (test/support/fake-cluster.ts): each fresh read of a review has a deadline (here a signal the spec fires:
 * the deadline passing), a review whose reads are stuck fails closed then, the stuck lists are aborted and
 * nothing later waits on them; the reads are marked failing until one answers again (the readiness probe);
 * a watch that fails marks its kind stale until it is opened again. And reads at a revision (FreshReads with a
 * source of revisions, as the webhook makes them): a review first reads the API server's current revision, by a
 * request sent after it arrived, then lists at that revision or later; what was stored before the review arrived
 * is seen, the revision read is shared only with reviews that arrived before it was sent, and a revision that
 * cannot be read refuses the review.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache, PROBE_NAME } from "../../../cluster/cache";
import { judgeAdmissionFresh } from "../../../cluster/admission";
import { DeadlineError, FreshReads, withDeadline } from "../../../cluster/deadline";
import { FakeCluster, offlineKubeConfig } from "../../support/fake-cluster";

const stack = {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "webapp", namespace: "app" },
    spec: {
        serviceAccountName: "webapp",
        stack: "org/app/prod",
        projectRepo: "https://github.com/org/app.git",
        commit: "0123456789abcdef0123456789abcdef01234567",
    },
};
const adminBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "webapp:cluster-admin" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name: "webapp", namespace: "app" }],
};
const clusterAdmin = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "cluster-admin" },
    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
};
const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "webapp", namespace: "app" } };

/** Turns of the event loop until `check` holds (no timer: the fake answers within a few turns). */
async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
    assert.ok(check(), "condition never held");
}

/**
 * A synced cache over a fake cluster holding `objects`, and fresh reads whose deadlines are signals the spec fires
 * (`passAll`), at revisions when `atRevisions` (as the webhook makes them), else quorum lists.
 */
async function freshReadsOver(objects: Record<string, unknown>[], atRevisions: boolean) {
    const fake = new FakeCluster().add(...objects);
    const cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport, retryMs: 1 });
    cache.start();
    await cache.waitForSync(10_000);
    const deadlines: AbortController[] = [];
    const reads = new FreshReads(
        (kind, ns, name, signal, floor) => cache.listFresh(kind, ns, name, signal, floor),
        {
            readTimeoutMs: 1000,
            deadline: () => {
                const c = new AbortController();
                deadlines.push(c);
                return c.signal;
            },
        },
        atRevisions ? (signal) => cache.currentRevision(signal) : undefined,
    );
    const passAll = () => deadlines.splice(0).forEach((c) => c.abort());
    const review = () =>
        judgeAdmissionFresh(
            { operation: "CREATE", object: stack },
            cache,
            { config: packConfig(undefined), warnOnly: false },
            reads.forReview(),
        );
    return { cache, fake, reads, passAll, review };
}

describe("cluster/deadline: fresh reads under deadlines, and their health", () => {
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    async function setUp() {
        const made = await freshReadsOver([account, adminBinding, clusterAdmin], false);
        cache = made.cache;
        return made;
    }

    it("a stuck read fails its review closed at the deadline, is aborted, and no later review waits on it", async () => {
        const { fake, reads, passAll, review } = await setUp();
        fake.hang();
        const first = review();
        await until(() => fake.hung.held > 0);
        passAll();
        const d1 = await first;
        assert.strictEqual(d1.allowed, false);
        assert.match(
            d1.message!,
            /pko-guard-cluster-state: cluster state cannot be read \(the list of \w+.*did not answer before its deadline\)/,
        );
        await until(() => fake.hung.aborted === fake.hung.held);
        assert.match(reads.failing() ?? "", /did not answer before its deadline/);
        // Still hanging: a later review sends its own lists (the stuck ones were abandoned) and fails closed too.
        const heldBefore = fake.hung.held;
        const second = review();
        await until(() => fake.hung.held > heldBefore);
        passAll();
        assert.strictEqual((await second).allowed, false);
        // The server answers again: the readiness probe finds it, and a review is judged by the rules.
        fake.recover();
        await reads.probe();
        assert.strictEqual(reads.failing(), undefined);
        assert.ok(fake.requests.some((r) => r.includes(encodeURIComponent(`metadata.name=${PROBE_NAME}`))));
        const third = await review();
        assert.strictEqual(third.allowed, false);
        assert.match(third.message!, /pko-stack-no-cluster-admin/);
        assert.doesNotMatch(third.message!, /pko-guard-cluster-state/);
    });

    it("a review's many reads at once raise no listener warning (the webhook's stderr stays JSON lines)", async () => {
        const warnings: string[] = [];
        const onWarning = (w: Error) => warnings.push(w.name);
        process.on("warning", onWarning);
        try {
            const reads = new FreshReads(async () => [], { readTimeoutMs: 60_000 });
            const read = reads.forReview();
            await Promise.all(Array.from({ length: 40 }, (_, i) => read("Stack", `ns${i}`)));
            await new Promise((r) => setImmediate(r));
        } finally {
            process.off("warning", onWarning);
        }
        assert.deepStrictEqual(warnings, []);
    });

    it("withDeadline fails at the deadline even when the work ignores the abort", async () => {
        const c = new AbortController();
        const never = withDeadline("a read", c.signal, () => new Promise<never>(() => undefined));
        c.abort();
        await assert.rejects(
            never,
            (e: Error) => e instanceof DeadlineError && /a read did not answer/.test(e.message),
        );
    });

    it("a failed watch marks its kind stale until it is opened again", async () => {
        const { fake } = await setUp();
        assert.deepStrictEqual(cache!.stale(), []);
        fake.refuseWatches = true;
        fake.dropWatches();
        await until(() => cache!.stale().length > 0);
        assert.ok(cache!.stale().includes("Stack"), cache!.stale().join(","));
        fake.refuseWatches = false;
        await until(() => cache!.stale().length === 0);
        assert.ok(fake.watching() > 0);
    });
});

const isRevisionRead = (r: string) => r.includes(encodeURIComponent(`metadata.name=${PROBE_NAME}`));

describe("fresh reads at the API server's revision, read after the review arrived", () => {
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    async function setUp() {
        const made = await freshReadsOver([account, clusterAdmin], true);
        cache = made.cache;
        return made;
    }

    it("reads the revision first, lists at it, and sees a binding stored just before the review", async () => {
        const { fake, review } = await setUp();
        fake.add(adminBinding); // stored, its watch event not arrived: the cache does not hold it
        const from = fake.requests.length;
        const d = await review();
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-stack-no-cluster-admin/);
        const sent = fake.requests.slice(from);
        assert.ok(isRevisionRead(sent[0]), sent.join("\n"));
        assert.doesNotMatch(sent[0], /resourceVersion=/);
        const lists = sent.slice(1);
        assert.ok(lists.length > 0 && lists.every((r) => !isRevisionRead(r)), sent.join("\n"));
        const floor = /resourceVersion=(\d+)&resourceVersionMatch=NotOlderThan/.exec(lists[0])?.[1];
        assert.ok(floor !== undefined, lists[0]);
        for (const r of lists)
            assert.match(r, new RegExp(`resourceVersion=${floor}&resourceVersionMatch=NotOlderThan`));
    });

    it("a review arriving while a revision read is on its way reads the revision again", async () => {
        const { fake, review } = await setUp();
        fake.hang();
        const from = fake.requests.length;
        const first = review();
        await until(() => fake.hung.held === 1); // the first review's revision read, held
        fake.add(adminBinding); // stored after that read was sent, before the second review arrives
        const second = review();
        fake.recover();
        const [d1, d2] = await Promise.all([first, second]);
        const revisionReads = fake.requests.slice(from).filter(isRevisionRead);
        assert.strictEqual(revisionReads.length, 2, fake.requests.slice(from).join("\n"));
        // The second review saw the binding stored before it arrived; the first may or may not have.
        assert.strictEqual(d2.allowed, false);
        assert.match(d2.message!, /pko-stack-no-cluster-admin/);
        assert.ok(d1.findings.length > 0);
    });

    it("a review at the revision an earlier one read is answered by its reads: one revision read, no list", async () => {
        const { fake, review, reads } = await setUp();
        fake.add(adminBinding);
        const first = fake.requests.length;
        assert.strictEqual((await review()).allowed, false);
        const listsOfFirst = fake.requests.slice(first).filter((r) => !isRevisionRead(r));
        assert.ok(listsOfFirst.length > 0, "the first review listed nothing");
        const second = fake.requests.length;
        const kept = reads.shared.counters.kept;
        const d = await review();
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-stack-no-cluster-admin/);
        const sent = fake.requests.slice(second);
        assert.strictEqual(sent.length, 1, sent.join("\n"));
        assert.ok(isRevisionRead(sent[0]), sent[0]);
        assert.strictEqual(reads.shared.counters.kept - kept, listsOfFirst.length);
    });

    it("a write between two reviews moves the revision: the second lists anew and sees it", async () => {
        const { fake, review } = await setUp();
        assert.strictEqual((await review()).allowed, true);
        fake.add(adminBinding); // stored after the first review, its watch event not arrived
        const from = fake.requests.length;
        const d = await review();
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-stack-no-cluster-admin/);
        assert.ok(fake.requests.slice(from).filter((r) => !isRevisionRead(r)).length > 0);
    });

    it("a review that reads nothing fresh (a deletion, a kind no rule reads) sends nothing", async () => {
        const { fake, reads } = await setUp();
        const from = fake.requests.length;
        const judge = { config: packConfig(undefined), warnOnly: false };
        for (const input of [
            { operation: "DELETE", object: null, oldObject: stack },
            { operation: "CREATE", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } } },
        ])
            assert.strictEqual((await judgeAdmissionFresh(input, cache!, judge, reads.forReview())).allowed, true);
        // The fake answers a request within a few turns of the event loop: give one sent every chance to arrive.
        for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));
        assert.deepStrictEqual(fake.requests.slice(from), []);
        assert.strictEqual(reads.shared.counters.lists, 0);
    });

    it("a revision that cannot be read refuses the review, saying so", async () => {
        const { fake, review, passAll } = await setUp();
        fake.hang();
        const pending = review();
        await until(() => fake.hung.held === 1);
        passAll();
        const d = await pending;
        assert.strictEqual(d.allowed, false);
        assert.match(
            d.message!,
            /pko-guard-cluster-state: cluster state cannot be read \(the API server's current revision .*did not answer before its deadline\)/,
        );
        fake.recover();
    });
});
