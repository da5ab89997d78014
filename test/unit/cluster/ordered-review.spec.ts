/**
 * A review at the door (cluster/ordered-review.ts) with what this replica admitted overlaid and interacting reviews
 * ordered: a Stack and a binding giving its account cluster-admin, posted at the same moment, are never both
 * admitted, though the cluster never shows either (nothing is stored here); a dry run records nothing. A
 * binding whose role grants nothing a rule forbids (`view` to every account) is judged with its own namespace
 * alone (no Stack of another namespace is read), while one granting cluster-admin to every account is denied on
 * the first Stacks it reaches (FIRST_PROOF), without reading every namespace.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PackConfig, packConfig } from "../../../evaluation/pack-config";
import { AdmittedOverlay } from "../../../cluster/admitted";
import { ClusterCache } from "../../../cluster/cache";
import { FreshReads } from "../../../cluster/deadline";
import { KObject } from "../../../cluster/kinds";
import { ReviewContext, ReviewInput, FIRST_PROOF, reviewObject } from "../../../cluster/ordered-review";
import { ReviewLocks } from "../../../cluster/review-locks";
import { Claims, leaseName } from "../../../cluster/claims";
import { FakeLeases, settled } from "../../support/fake-leases";
import { Doc, guideDocs } from "../../support/cluster";
import { FakeCluster, offlineKubeConfig, seededCache } from "../../support/fake-cluster";

const config = packConfig();
const FILE = "manifests/production/stack.yaml";

/** A tenant namespace's governed Stack and what it needs, and a binding giving its account cluster-admin. */
function tenant(ns: string): { around: Doc[]; stack: Doc; admin: Doc } {
    const governed = guideDocs("gitops-guide-governed", FILE, ns);
    const example = guideDocs("gitops-guide-example", FILE, ns);
    return {
        around: governed.filter((d) => d.kind !== "Stack"),
        stack: governed.find((d) => d.kind === "Stack")!,
        admin: example.find((d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name))!,
    };
}

const clusterRole = (name: string, rules: unknown[]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules,
});
const CLUSTER_ADMIN = clusterRole("cluster-admin", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
const VIEW = clusterRole("view", [{ apiGroups: [""], resources: ["pods", "configmaps"], verbs: ["get", "list"] }]);

function toEveryAccount(name: string, role: string, ns = "tenant"): Doc {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace: ns, uid: `uid-${name}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
    };
}

function context(cache: ClusterCache, fresh?: () => ReturnType<FreshReads["forReview"]>): ReviewContext {
    return {
        cache,
        judge: { config, warnOnly: false },
        overlay: new AdmittedOverlay(cache),
        locks: new ReviewLocks(),
        fresh,
    };
}

const create = (object: Doc, dryRun = false): ReviewInput => ({
    operation: "CREATE",
    object: object as KObject,
    dryRun,
});

describe("reviews at the door: admitted objects overlaid, interacting reviews ordered", function () {
    this.timeout(120_000);

    it("a Stack and a binding giving its account cluster-admin, posted at once, are never both admitted", async () => {
        const tenants = Array.from({ length: 12 }, (_, i) => tenant(`race-${i}`));
        const cache = seededCache([...tenants.flatMap((t) => t.around), CLUSTER_ADMIN]);
        const ctx = context(cache);
        for (const [i, t] of tenants.entries()) {
            // Half the tries send the binding first, half the Stack.
            const pair = i % 2 === 0 ? [t.stack, t.admin] : [t.admin, t.stack];
            const [a, b] = await Promise.all(pair.map((o) => reviewObject(create(o), ctx)));
            assert.strictEqual([a, b].filter((d) => d.allowed).length, 1, `${a.message ?? ""}\n${b.message ?? ""}`);
            const denied = a.allowed ? b : a;
            assert.match(denied.message!, /pko-stack-no-cluster-admin: .*grants cluster-admin/);
        }
    });

    it("without the overlay the cluster shows neither: each alone is admitted (the window the overlay closes)", async () => {
        const t = tenant("alone");
        const cache = seededCache([...t.around, CLUSTER_ADMIN]);
        for (const o of [t.stack, t.admin])
            assert.strictEqual((await reviewObject(create(o), context(cache))).allowed, true);
    });

    it("a dry run is judged but not recorded: the write after it is judged without it", async () => {
        const t = tenant("dry");
        const ctx = context(seededCache([...t.around, CLUSTER_ADMIN]));
        assert.strictEqual((await reviewObject(create(t.stack, true), ctx)).allowed, true);
        assert.strictEqual((await reviewObject(create(t.admin), ctx)).allowed, true);
        // The binding was admitted for real: now the Stack is denied.
        const d = await reviewObject(create(t.stack), ctx);
        assert.strictEqual(d.allowed, false, d.message);
    });

    describe("bindings to every account, fresh reads through the client (fake API server)", () => {
        const STACKS = 3 * FIRST_PROOF + 20;
        let cache: ClusterCache | undefined;
        afterEach(() => cache?.stop());

        async function setUp(extra: Doc[] = []) {
            const docs = Array.from({ length: STACKS }, (_, i) => {
                const t = tenant(`team-${String(i).padStart(3, "0")}`);
                return [...t.around, t.stack];
            }).flat();
            const fake = new FakeCluster().add(...docs, ...extra, CLUSTER_ADMIN, VIEW);
            cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport, retryMs: 1 });
            cache.start();
            await cache.waitForSync(30_000);
            const c = cache;
            const reads = new FreshReads(
                (kind, ns, name, signal, floor) => c.listFresh(kind, ns, name, signal, floor),
                { readTimeoutMs: 30_000 },
            );
            fake.requests.length = 0;
            return { fake, ctx: context(cache, () => reads.forReview()) };
        }
        const stackLists = (requests: string[]) => requests.filter((r) => /\/stacks(\?|$)/.test(r.split("?")[0] + "?"));

        it("`view` grants nothing forbidden: admitted, no Stack of another namespace read", async () => {
            const { fake, ctx } = await setUp();
            const d = await reviewObject(create(toEveryAccount("readers", "view")), ctx);
            assert.strictEqual(d.allowed, true, d.message);
            const lists = stackLists(fake.requests);
            assert.ok(lists.length > 0, "its own namespace's Stacks are read");
            for (const r of lists) assert.match(r, /\/namespaces\/tenant\/stacks/, r);
        });

        it("a Role bound to every account: judged alone while it grants reads, with the Stacks once a wildcard", async () => {
            const bound = {
                ...toEveryAccount("team-readers", "reader"),
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
            };
            const { fake, ctx } = await setUp([bound]);
            const reader = (rules: unknown[]) => ({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "Role",
                metadata: { name: "reader", namespace: "tenant" },
                rules,
            });
            const reads = await reviewObject(
                create(reader([{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }])),
                ctx,
            );
            assert.strictEqual(reads.allowed, true, reads.message);
            for (const r of stackLists(fake.requests)) assert.match(r, /\/namespaces\/tenant\/stacks/, r);
            const wild = await reviewObject(
                create(reader([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }])),
                ctx,
            );
            assert.strictEqual(wild.allowed, false);
            assert.match(
                wild.message!,
                /pko-stack-no-cluster-admin: RoleBinding "RoleBinding\/tenant\/team-readers" grants/,
            );
            const all = stackLists(fake.requests).filter((r) => /^\/apis\/pulumi\.com\/v1\/stacks/.test(r));
            assert.deepStrictEqual(all, [], "denied on the first Stacks, without listing every namespace's");
        });

        it("cluster-admin to every account is denied on the first Stacks it reaches, not all of them", async () => {
            const { fake, ctx } = await setUp();
            const d = await reviewObject(create(toEveryAccount("everyone-admin", "cluster-admin")), ctx);
            assert.strictEqual(d.allowed, false);
            const blocking = d.findings.filter(
                (f) => f.status === "blocking" && f.policy === "pko-stack-no-cluster-admin",
            );
            assert.ok(blocking.length >= 1 && blocking.length <= FIRST_PROOF, `${blocking.length} findings`);
            const lists = stackLists(fake.requests);
            assert.ok(
                !lists.some((r) => /^\/apis\/pulumi\.com\/v1\/stacks/.test(r)),
                "no list of every namespace's Stacks",
            );
            const namespaces = new Set(lists.map((r) => /\/namespaces\/([^/]+)\//.exec(r)?.[1]));
            assert.ok(namespaces.size <= FIRST_PROOF + 1, [...namespaces].join(", "));
        });

        it("warn-only: admitted, the would-be denial told from the first Stacks too", async () => {
            const { ctx } = await setUp();
            const d = await reviewObject(create(toEveryAccount("everyone-admin", "cluster-admin")), {
                ...ctx,
                judge: { config, warnOnly: true },
            });
            assert.strictEqual(d.allowed, true);
            const would = d.warnings.filter((w) => /^would deny: pko-stack-no-cluster-admin/.test(w));
            assert.ok(would.length >= 1 && would.length <= FIRST_PROOF, `${would.length} warnings`);
        });

        it("a waived binding proves nothing on the first Stacks: judged with every namespace, admitted", async () => {
            const { ctx } = await setUp();
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "review-spec-"));
            let waived: PackConfig;
            try {
                const file = path.join(dir, "config.json");
                const waiver = { resource: "RoleBinding/tenant/everyone-admin", reason: "spec" };
                fs.writeFileSync(file, JSON.stringify({ "pko-stack-no-cluster-admin": { waivers: [waiver] } }));
                waived = packConfig(file);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
            const d = await reviewObject(create(toEveryAccount("everyone-admin", "cluster-admin")), {
                ...ctx,
                judge: { config: waived, warnOnly: false },
            });
            assert.strictEqual(d.allowed, true, d.message);
            const found = d.findings.filter((f) => f.status === "waived" && f.policy === "pko-stack-no-cluster-admin");
            assert.strictEqual(found.length, STACKS);
        });
    });

    describe("claims across replicas (cluster/claims.ts, a fake API server's Leases)", () => {
        it("a review waits for another replica's claim on its namespace, is refused at its deadline, and records nothing", async () => {
            const t = tenant("claimed");
            const store = new FakeLeases();
            const other = await new Claims(store, { replica: "other", holdMs: 60_000, durationS: 30, pollMs: 1 }).claim(
                { exclusive: ["ns:claimed"], shared: [] },
                new AbortController().signal,
            );
            const deadline = new AbortController();
            const ctx: ReviewContext = {
                ...context(seededCache([...t.around, CLUSTER_ADMIN, VIEW])),
                claims: new Claims(store, { replica: "me", holdMs: 60_000, durationS: 30, pollMs: 1 }),
                deadline: deadline.signal,
            };
            const stack = reviewObject(create(t.stack), ctx);
            // On a third replica, a binding of `view` claims its role alone: the namespace's claim does not hold it up.
            const third: ReviewContext = {
                ...context(seededCache([...t.around, CLUSTER_ADMIN, VIEW])),
                claims: new Claims(store, { replica: "third", holdMs: 0, durationS: 30, pollMs: 1 }),
                deadline: new AbortController().signal,
            };
            const view = await reviewObject(create(toEveryAccount("readers", "view", "claimed")), third);
            assert.strictEqual(view.allowed, true, view.message);
            assert.strictEqual(await settled(stack), false, "the Stack waits for the namespace's claim");
            deadline.abort();
            const d = await stack;
            assert.strictEqual(d.allowed, false);
            assert.match(
                d.message!,
                /pko-guard-cluster-state: waited until its deadline for another review's claim on the same namespaces or role; the object is refused, retry/,
            );
            assert.strictEqual(ctx.overlay.keeps(t.stack as KObject), false, "nothing recorded");
            other.release();
        });

        it("an admitted review keeps its claim while the cache does not show its object; another replica's review waits for it", async () => {
            const t = tenant("kept");
            const store = new FakeLeases();
            const ctx: ReviewContext = {
                ...context(seededCache([...t.around, CLUSTER_ADMIN])),
                claims: new Claims(store, { replica: "me", holdMs: 60_000, durationS: 30, pollMs: 1 }),
                deadline: new AbortController().signal,
            };
            const admitted = await reviewObject(create(t.stack), ctx);
            assert.strictEqual(admitted.allowed, true, admitted.message);
            const name = leaseName("ns:kept");
            assert.match(store.leases.get(name)?.holder ?? "", /^me\//, "kept: the cache does not show the Stack");
            // Another replica's binding giving the Stack's account cluster-admin waits for it.
            const elsewhere: ReviewContext = {
                ...context(seededCache([...t.around, CLUSTER_ADMIN])),
                claims: new Claims(store, { replica: "other", holdMs: 0, durationS: 30, pollMs: 1 }),
                deadline: new AbortController().signal,
            };
            const binding = reviewObject(create(t.admin), elsewhere);
            assert.strictEqual(await settled(binding), false);
            // The first replica's hold ends (here: its Lease deleted, as the release does); the binding proceeds.
            store.leases.delete(name);
            await binding;
            for (let i = 0; i < 1000 && store.leases.has(name); i++) await new Promise((r) => setTimeout(r, 1));
            assert.strictEqual(store.leases.has(name), false, "the binding's claim released once its hold passed");
        });
    });
});
