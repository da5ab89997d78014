/**
 * The admission decision (core/cluster/admission.ts) over a cache seeded with cluster state, no server:
 * deny with rule, field and fix; both directions of the cross-object rule; warn-only denies nothing;
 * an unsynced cache fails closed; Secret values never enter the cache or a decision.
 */
import * as assert from "assert";
import * as k8s from "@kubernetes/client-node";
import { packConfig } from "../../core/pack-config";
import { ClusterCache } from "../../core/cluster/cache";
import { judgeAdmission, judgeAdmissionFresh } from "../../core/cluster/admission";
import { WATCHED_KINDS } from "../../core/cluster/kinds";
import { Doc, guideDocs } from "./cluster";

const CANARY = "canary-51c0ffee77";

function cache(objects: Doc[], synced = true): ClusterCache {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: "none", server: "https://127.0.0.1:1" }], users: [{ name: "u" }], contexts: [{ name: "c", cluster: "none", user: "u" }], currentContext: "c" });
    const c = new ClusterCache(kc);
    for (const k of WATCHED_KINDS)
        if (synced || k.kind !== "Stack")
            c.seed(
                k.kind,
                objects.filter((o) => o.kind === k.kind),
            );
    return c;
}

describe("admission decisions with cluster state", function () {
    this.timeout(60_000);
    const config = packConfig();
    const example = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "pulumi");
    const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "pulumi");
    const stackOf = (docs: Doc[]) => docs.find((d) => d.kind === "Stack")!;
    const adminBinding = example.find((d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name))!;

    it("denies a Stack whose account already has cluster-admin, naming the rule, the field and the fix", () => {
        const d = judgeAdmission({ operation: "CREATE", object: stackOf(governed) }, cache([...governed.filter((x) => x.kind !== "Stack"), adminBinding]), { config, warnOnly: false });
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /- pko-stack-no-cluster-admin: ClusterRoleBinding "ClusterRoleBinding\/pulumi-webapp:cluster-admin" grants cluster-admin .* \(field subjects\[0\]\) Fix: Bind/);
        assert.strictEqual(d.findings.filter((f) => f.status === "blocking").length, 1);
    });

    it("denies a binding that would give an existing Stack's account cluster-admin", () => {
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding }, cache(governed), { config, warnOnly: false });
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /which Stack "Stack\/pulumi\/webapp-production"/);
    });

    it("admits the same binding with a warning when no Stack runs as the account", () => {
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding }, cache(governed.filter((x) => x.kind !== "Stack")), { config, warnOnly: false });
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
        const ok = judgeAdmission({ operation: "CREATE", object: stackOf(governed) }, cache([...governed.filter((x) => x.kind !== "Stack"), bootstrap]), { config, warnOnly: false });
        assert.strictEqual(ok.allowed, true, ok.message);
        const both = { ...bootstrap, metadata: { ...bootstrap.metadata, name: "sneaky" }, subjects: [...bootstrap.subjects, { kind: "ServiceAccount", name: "webapp", namespace: "pulumi" }] };
        const denied = judgeAdmission({ operation: "CREATE", object: stackOf(governed) }, cache([...governed.filter((x) => x.kind !== "Stack"), both]), { config, warnOnly: false });
        assert.strictEqual(denied.allowed, false);
    });

    it("reads bindings and Stacks fresh: a binding the cache has not seen yet still denies the Stack", async () => {
        const c = cache(governed.filter((x) => x.kind !== "Stack"));
        const fresh = async (kind: string, ns?: string) => [...governed.filter((x) => x.kind !== "Stack"), adminBinding].filter((x) => x.kind === kind && (ns === undefined || x.metadata.namespace === ns));
        assert.strictEqual(judgeAdmission({ operation: "CREATE", object: stackOf(governed) }, c, { config, warnOnly: false }).allowed, true, "the stale cache alone would admit");
        const d = await judgeAdmissionFresh({ operation: "CREATE", object: stackOf(governed) }, c, { config, warnOnly: false }, fresh);
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-stack-no-cluster-admin/);
    });

    it("fails closed when the fresh read fails", async () => {
        const d = await judgeAdmissionFresh({ operation: "CREATE", object: stackOf(governed) }, cache(governed), { config, warnOnly: false }, async () => {
            throw new Error("connection refused");
        });
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /cluster state cannot be read \(connection refused\)/);
    });

    it("findings the cluster already had are not blamed on an unrelated object", () => {
        const d = judgeAdmission({ operation: "CREATE", object: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "other", namespace: "pulumi" } } }, cache(example), { config, warnOnly: false });
        assert.strictEqual(d.allowed, true, d.message);
    });

    it("warn-only denies nothing and returns the would-be denials as warnings", () => {
        const d = judgeAdmission({ operation: "CREATE", object: stackOf(example) }, cache(example.filter((x) => x.kind !== "Stack")), { config, warnOnly: true });
        assert.strictEqual(d.allowed, true);
        assert.ok(
            d.warnings.some((w) => /^would deny: pko-stack-prod-pinned-commit: .*\(field spec\.branch\)/.test(w)),
            JSON.stringify(d.warnings),
        );
    });

    it("fails closed until the cache has synced", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: stackOf(governed) },
            cache(
                governed.filter((x) => x.kind !== "Stack"),
                false,
            ),
            { config, warnOnly: false },
        );
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /cluster state is not known yet \(not synced: Stack\)/);
    });

    it("ignores deletions and kinds no rule reads", () => {
        assert.strictEqual(judgeAdmission({ operation: "DELETE", object: null, oldObject: adminBinding }, cache([]), { config, warnOnly: false }).allowed, true);
        assert.strictEqual(judgeAdmission({ operation: "CREATE", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } } }, cache([], false), { config, warnOnly: false }).allowed, true);
    });

    it("keeps a Secret's key names, never its values (nor the last-applied copy of them)", () => {
        const secret = {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "t", namespace: "pulumi", annotations: { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ stringData: { accessToken: CANARY } }) } },
            data: { accessToken: Buffer.from(CANARY).toString("base64") },
            stringData: { other: CANARY },
        };
        const c = cache([secret]);
        const held = JSON.stringify(c.list("Secret"));
        assert.ok(!held.includes(CANARY) && !held.includes(Buffer.from(CANARY).toString("base64")), held);
        assert.deepStrictEqual(c.list("Secret")[0].data, { accessToken: "" });
        const d = judgeAdmission({ operation: "CREATE", object: secret }, c, { config, warnOnly: false });
        assert.ok(!JSON.stringify(d).includes(CANARY));
    });
});
