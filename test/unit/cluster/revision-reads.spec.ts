/**
 * Fresh reads at a revision (cluster/deadline.ts FreshReads with a source of revisions, as the webhook makes
 * them), through the client library with a stand-in server (test/support/fake-cluster.ts): a review first reads
 * the API server's current revision, by a request sent after it arrived, then lists at that revision or later;
 * what was stored before the review arrived is seen, the revision read is shared only with reviews that arrived
 * before it was sent, and a revision that cannot be read refuses the review.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache } from "../../../cluster/cache";
import { judgeAdmissionFresh } from "../../../cluster/admission";
import { FreshReads, PROBE_NAME } from "../../../cluster/deadline";
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

const isRevisionRead = (r: string) => r.includes(encodeURIComponent(`metadata.name=${PROBE_NAME}`));

describe("fresh reads at the API server's revision, read after the review arrived", () => {
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    async function setUp() {
        const fake = new FakeCluster().add(account, clusterAdmin);
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport });
        cache.start();
        await cache.waitForSync(10_000);
        const deadlines: AbortController[] = [];
        const reads = new FreshReads(
            (kind, ns, name, signal, floor) => cache!.listFresh(kind, ns, name, signal, floor),
            {
                readTimeoutMs: 1000,
                deadline: () => {
                    const c = new AbortController();
                    deadlines.push(c);
                    return c.signal;
                },
            },
            (signal) => cache!.currentRevision(PROBE_NAME, signal),
        );
        const review = () =>
            judgeAdmissionFresh(
                { operation: "CREATE", object: stack },
                cache!,
                { config: packConfig(undefined), warnOnly: false },
                reads.forReview(),
            );
        const passAll = () => deadlines.splice(0).forEach((c) => c.abort());
        return { fake, review, passAll };
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

    it("a review arriving while a revision read is on its way waits for the next one", async () => {
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
