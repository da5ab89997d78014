/**
 * The admission decision (cluster/admission.ts) over a cache seeded with cluster state, no server:
 * deny with rule, field and fix; both directions of the cross-object rule; warn-only denies nothing;
 * an unsynced cache fails closed; Secret values never enter the cache or a decision. Fresh reads shared
 * by concurrent reviews are still each sent after the review arrived.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { judgeAdmission, judgeAdmissionFresh, relatedObjects } from "../../../cluster/admission";
import { KObject } from "../../../cluster/kinds";
import { SharedReads } from "../../../cluster/shared-reads";
import { PER_NAMESPACE_READS } from "../../../cluster/view";
import { Doc, guideDocs } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";

const CANARY = "canary-51c0ffee77";

describe("admission decisions with cluster state", function () {
    this.timeout(60_000);
    const config = packConfig();
    const example = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "pulumi");
    const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "pulumi");
    const stackOf = (docs: Doc[]) => docs.find((d) => d.kind === "Stack")!;
    const adminBinding = example.find((d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name))!;

    it("denies a Stack whose account already has cluster-admin, naming the rule, the field and the fix", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackOf(governed) },
            seededCache([...governed.filter((x) => x.kind !== "Stack"), adminBinding]),
            { config, warnOnly: false },
        );
        assert.strictEqual(d.allowed, false);
        assert.match(
            d.message!,
            /- pko-stack-no-cluster-admin: ClusterRoleBinding "ClusterRoleBinding\/pulumi-webapp:cluster-admin" grants cluster-admin .* \(field subjects\[0\]\) Fix: Bind/,
        );
        assert.strictEqual(d.findings.filter((f) => f.status === "blocking").length, 1);
    });

    it("denies a binding that would give an existing Stack's account cluster-admin", () => {
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding }, seededCache(governed), {
            config,
            warnOnly: false,
        });
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /which Stack "Stack\/pulumi\/webapp-production"/);
    });

    it("admits the same binding with a warning when no Stack runs as the account", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: adminBinding },
            seededCache(governed.filter((x) => x.kind !== "Stack")),
            { config, warnOnly: false },
        );
        assert.strictEqual(d.allowed, true);
        assert.ok(
            d.warnings.some((w) => /^rbac-no-cluster-admin-serviceaccount: /.test(w)),
            JSON.stringify(d.warnings),
        );
    });

    it("the cluster's own system:masters binding grants no Stack anything; a binding to the account still does", () => {
        const bootstrap = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "cluster-admin", labels: { "kubernetes.io/bootstrapping": "rbac-defaults" } },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:masters" }],
        };
        const ok = judgeAdmission(
            { operation: "CREATE", object: stackOf(governed) },
            seededCache([...governed.filter((x) => x.kind !== "Stack"), bootstrap]),
            { config, warnOnly: false },
        );
        assert.strictEqual(ok.allowed, true, ok.message);
        const both = {
            ...bootstrap,
            metadata: { ...bootstrap.metadata, name: "sneaky" },
            subjects: [...bootstrap.subjects, { kind: "ServiceAccount", name: "webapp", namespace: "pulumi" }],
        };
        const denied = judgeAdmission(
            { operation: "CREATE", object: stackOf(governed) },
            seededCache([...governed.filter((x) => x.kind !== "Stack"), both]),
            { config, warnOnly: false },
        );
        assert.strictEqual(denied.allowed, false);
    });

    it("reads bindings and Stacks fresh: a binding the cache has not seen yet still denies the Stack", async () => {
        const c = seededCache(governed.filter((x) => x.kind !== "Stack"));
        const fresh = async (kind: string, ns?: string) =>
            [...governed.filter((x) => x.kind !== "Stack"), adminBinding].filter(
                (x) => x.kind === kind && (ns === undefined || x.metadata.namespace === ns),
            );
        assert.strictEqual(
            judgeAdmission({ operation: "CREATE", object: stackOf(governed) }, c, { config, warnOnly: false }).allowed,
            true,
            "the stale cache alone would admit",
        );
        const d = await judgeAdmissionFresh(
            { operation: "CREATE", object: stackOf(governed) },
            c,
            { config, warnOnly: false },
            fresh,
        );
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-stack-no-cluster-admin/);
    });

    it("fails closed when the fresh read fails", async () => {
        const d = await judgeAdmissionFresh(
            { operation: "CREATE", object: stackOf(governed) },
            seededCache(governed),
            { config, warnOnly: false },
            async () => {
                throw new Error("connection refused");
            },
        );
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /cluster state cannot be read \(connection refused\)/);
    });

    it("findings the cluster already had are not blamed on an unrelated object", () => {
        const d = judgeAdmission(
            {
                operation: "CREATE",
                object: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "other", namespace: "pulumi" } },
            },
            seededCache(example),
            { config, warnOnly: false },
        );
        assert.strictEqual(d.allowed, true, d.message);
    });

    it("warn-only denies nothing and returns the would-be denials as warnings", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackOf(example) },
            seededCache(example.filter((x) => x.kind !== "Stack")),
            { config, warnOnly: true },
        );
        assert.strictEqual(d.allowed, true);
        assert.ok(
            d.warnings.some((w) => /^would deny: pko-stack-prod-pinned-commit: .*\(field spec\.branch\)/.test(w)),
            JSON.stringify(d.warnings),
        );
    });

    it("fails closed until the cache has synced", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackOf(governed) },
            seededCache(
                governed.filter((x) => x.kind !== "Stack"),
                ["Stack"],
            ),
            { config, warnOnly: false },
        );
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /cluster state is not known yet \(not synced: Stack\)/);
    });

    it("ignores deletions of kinds no rule judges on delete, and kinds no rule reads", () => {
        assert.strictEqual(
            judgeAdmission({ operation: "DELETE", object: null, oldObject: adminBinding }, seededCache([]), {
                config,
                warnOnly: false,
            }).allowed,
            true,
        );
        assert.strictEqual(
            judgeAdmission(
                { operation: "CREATE", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } } },
                seededCache([], ["Stack"]),
                { config, warnOnly: false },
            ).allowed,
            true,
        );
    });

    it("relates an object to the Applications deploying to its namespace and to every aggregating ClusterRole, through the cache's indexes", () => {
        const app = (name: string, namespace: string) => ({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name, namespace: "argocd" },
            spec: { destination: { namespace } },
        });
        const aggregate = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "agg" },
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: "y" } }] },
        };
        const plain = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "plain" },
            rules: [],
        };
        const c = seededCache([
            ...governed.filter((x) => x.kind !== "Stack"),
            app("here", "pulumi"),
            app("elsewhere", "other"),
            aggregate,
            plain,
        ]);
        const names = (objects: KObject[]) => objects.map((x) => `${x.kind}/${(x.metadata ?? {}).name}`);
        const related = names(relatedObjects(stackOf(governed), c));
        assert.ok(
            related.includes("Application/here") && !related.includes("Application/elsewhere"),
            JSON.stringify(related),
        );
        assert.ok(
            related.includes("ClusterRole/agg") && !related.includes("ClusterRole/plain"),
            JSON.stringify(related),
        );
        // The indexes follow updates: the Application moved away, the role no longer aggregating.
        c.seed("Application", [app("here", "moved")]);
        c.seed("ClusterRole", [{ ...aggregate, aggregationRule: undefined }]);
        const after = names(relatedObjects(stackOf(governed), c));
        assert.ok(!after.includes("Application/here") && !after.includes("ClusterRole/agg"), JSON.stringify(after));
    });

    it("keeps a Secret's key names, never its values (nor the last-applied copy of them)", () => {
        const secret = {
            apiVersion: "v1",
            kind: "Secret",
            metadata: {
                name: "t",
                namespace: "pulumi",
                annotations: {
                    "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({
                        stringData: { accessToken: CANARY },
                    }),
                },
            },
            data: { accessToken: Buffer.from(CANARY).toString("base64") },
            stringData: { other: CANARY },
        };
        const c = seededCache([secret]);
        const held = JSON.stringify(c.list("Secret"));
        assert.ok(!held.includes(CANARY) && !held.includes(Buffer.from(CANARY).toString("base64")), held);
        assert.deepStrictEqual(c.list("Secret")[0].data, { accessToken: "" });
        const d = judgeAdmission({ operation: "CREATE", object: secret }, c, { config, warnOnly: false });
        assert.ok(!JSON.stringify(d).includes(CANARY));
    });
});

/**
 * A fake API server: a list answers with the objects held when it was SENT; while held, lists wait until
 * released (then every list answers at once).
 */
class SlowServer {
    objects: KObject[] = [];
    private readonly pending: (() => void)[] = [];
    private held = true;
    sent = 0;
    inFlight = 0;
    maxInFlight = 0;
    readonly list = (kind: string, ns?: string, name?: string): Promise<KObject[]> => {
        this.sent++;
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        const snapshot = this.objects.filter(
            (x) =>
                x.kind === kind &&
                (ns === undefined || (x.metadata ?? {}).namespace === ns) &&
                (name === undefined || (x.metadata ?? {}).name === name),
        );
        return new Promise((resolve) => {
            const end = () => {
                this.inFlight--;
                resolve(snapshot);
            };
            if (this.held) this.pending.push(end);
            else setImmediate(end);
        });
    };
    /** Ends every list sent so far (and, with `hold` false, answers later ones at once). */
    release(hold = false): void {
        this.held = hold;
        for (const end of this.pending.splice(0)) end();
    }
}

/** Lets the event loop run every promise callback due now (the reads' chaining). */
const settle = () => new Promise((r) => setImmediate(r));

describe("fresh reads shared by concurrent reviews", function () {
    this.timeout(60_000);
    const config = packConfig();
    const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "pulumi");
    const example = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "pulumi");
    const stack = governed.find((d) => d.kind === "Stack")!;
    const adminBinding = example.find((d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name))!;

    it("a review never shares a read sent before it arrived: a binding created meanwhile still denies the Stack", async () => {
        const server = new SlowServer();
        server.objects = governed.filter((x) => x.kind !== "Stack");
        const reads = new SharedReads(server.list);
        const stale = seededCache(governed.filter((x) => x.kind !== "Stack"));
        // Review 1 (another Stack of the namespace) sends its reads; they are on their way...
        const first = judgeAdmissionFresh(
            { operation: "CREATE", object: { ...stack, metadata: { ...stack.metadata, name: "other" } } },
            stale,
            { config, warnOnly: false },
            reads.read,
        );
        await settle();
        const sentForFirst = server.sent;
        assert.ok(sentForFirst >= 2, "ClusterRoleBindings and the namespace's RoleBindings");
        // ...when the cluster-admin binding is stored, and then the Stack it empowers comes for review.
        server.objects.push(adminBinding);
        const second = judgeAdmissionFresh(
            { operation: "CREATE", object: stack },
            stale,
            { config, warnOnly: false },
            reads.read,
        );
        // A third review arriving while the second waits shares the second's reads.
        const third = judgeAdmissionFresh(
            { operation: "CREATE", object: stack },
            stale,
            { config, warnOnly: false },
            reads.read,
        );
        await settle();
        assert.strictEqual(server.sent, sentForFirst, "nothing more is sent while the same reads are on their way");
        server.release();
        for (const d of [await second, await third]) {
            assert.strictEqual(d.allowed, false, "the Stack was judged with the binding stored before it arrived");
            assert.match(d.message!, /pko-stack-no-cluster-admin/);
        }
        await first;
        assert.ok(reads.counters.lists < reads.counters.reads, JSON.stringify(reads.counters));
    });

    it("reads fresh the role a binding names: a role stored just before its binding and Stack is neither missing nor stale", async () => {
        const role = (rules: unknown[]) => ({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "stack-deployer" },
            rules,
        });
        const narrow = role([{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }]);
        const wildcard = role([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
        const binding = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "webapp:stack-deployer" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "stack-deployer" },
            subjects: [{ kind: "ServiceAccount", name: "webapp", namespace: "pulumi" }],
        };
        const base = governed.filter((x) => x.kind !== "Stack");
        const judge = (cached: KObject[], served: KObject[]) => {
            const server = new SlowServer();
            server.release();
            server.objects = served;
            return judgeAdmissionFresh(
                { operation: "CREATE", object: stack },
                seededCache(cached),
                { config, warnOnly: false },
                new SharedReads(server.list).read,
            );
        };
        const fromCache = (cached: KObject[]) =>
            judgeAdmission({ operation: "CREATE", object: stack }, seededCache(cached), { config, warnOnly: false })
                .allowed;
        // The cache has not seen the role yet (a binding to no role grants nothing), or holds it as it was.
        assert.strictEqual(fromCache([...base, binding]), true, "the cache alone would admit");
        assert.strictEqual(fromCache([...base, binding, narrow]), true, "the cache alone would admit");
        for (const cached of [
            [...base, binding],
            [...base, binding, narrow],
        ]) {
            const denied = await judge(cached, [...base, binding, wildcard]);
            assert.strictEqual(denied.allowed, false);
            assert.match(denied.message!, /pko-stack-no-cluster-admin/);
        }
        const ok = await judge([...base, binding], [...base, binding, narrow]);
        assert.strictEqual(ok.allowed, true, ok.message);
        const denied = await judge([...base, binding, narrow], [...base, binding, wildcard]);
        assert.strictEqual(denied.allowed, false);
        assert.match(denied.message!, /pko-stack-no-cluster-admin/);
    });

    it("sends at most maxConcurrent lists at once", async () => {
        const server = new SlowServer();
        const reads = new SharedReads(server.list, 2);
        const all = Promise.all(["a", "b", "c", "d", "e"].map((n) => reads.read("Stack", n)));
        for (let i = 0; i < 10; i++) {
            await settle();
            assert.ok(server.inFlight <= 2);
            server.release(true);
        }
        await all;
        assert.strictEqual(server.sent, 5);
        assert.strictEqual(server.maxInFlight, 2);
    });

    it("a shared read that fails denies every review that shared it, as the state cannot be told", async () => {
        let calls = 0;
        const failing = () =>
            new SharedReads(async () => {
                calls++;
                await settle();
                throw new Error("the server went away");
            });
        const review = (reads: SharedReads) =>
            judgeAdmissionFresh(
                { operation: "CREATE", object: stack },
                seededCache(governed),
                { config, warnOnly: false },
                reads.read,
            );
        assert.strictEqual((await review(failing())).allowed, false);
        const alone = calls;
        calls = 0;
        const reads = failing();
        const decisions = await Promise.all([1, 2, 3].map(() => review(reads)));
        for (const d of decisions) {
            assert.strictEqual(d.allowed, false);
            assert.match(d.message!, /pko-guard-cluster-state: cluster state cannot be read \(the server went away\)/);
        }
        // The first review's lists, then one of each shared by the two that arrived while those were on their way.
        assert.strictEqual(calls, 2 * alone);
    });

    it("a binding that reaches every namespace reads their Stacks cluster-wide once, not once a namespace", async () => {
        const namespaces = Array.from({ length: PER_NAMESPACE_READS + 5 }, (_, i) => `team-${i}`);
        const stacks = namespaces.map((n) => ({ ...stack, metadata: { ...stack.metadata, namespace: n } }));
        const asked: string[] = [];
        const fresh = async (kind: string, ns?: string) => {
            asked.push(`${kind}/${ns ?? "*"}`);
            return stacks.filter(
                (x) => (x as { kind?: unknown }).kind === kind && (ns === undefined || x.metadata.namespace === ns),
            );
        };
        const toGroup = {
            ...adminBinding,
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
        };
        const d = await judgeAdmissionFresh(
            { operation: "CREATE", object: toGroup },
            seededCache(stacks),
            { config, warnOnly: false },
            fresh,
        );
        // The Stacks cluster-wide once, and the role the binding names; no binding read for a binding.
        assert.deepStrictEqual(asked.sort(), ["ClusterRole/*", "Stack/*"]);
        assert.strictEqual(
            d.allowed,
            false,
            "a binding giving every account cluster-admin is denied for the Stacks it reaches",
        );
    });
});
