/**
 * Changes and deletions at the door (cluster/change.ts, cluster/admission.ts), over a cache seeded with cluster
 * state: production is sticky (an UPDATE is judged with its old object) and belongs to the Pulumi stack (another
 * Stack of a production stack is production), a DELETE of a Stack that would destroy production is denied, and an
 * UPDATE of an object that already violates a mandatory rule is denied unless it removes the violation or changes
 * only what no rule reads. Each case names the rules that block it, exactly.
 */
import * as assert from "assert";
import { packConfig, packPolicies, reconcilePackConfig } from "../../../evaluation/pack-config";
import { Decision, judgeAdmission } from "../../../cluster/admission";
import { metadataOnly, readAnnotation } from "../../../cluster/change";
import { KObject } from "../../../cluster/kinds";
import * as fs from "fs";
import * as path from "path";
import { FakeCluster, offlineKubeConfig, seededCache } from "../../support/fake-cluster";
import { makeTempDir } from "../../../support/process";
import { runAudit } from "../../../cli/audit";
import { goodSpec } from "../../support/helpers";
import { sameStack } from "../../../policies/model/review";

const PRODUCTION = "pko-guard-production";
const DESTROY = "pko-stack-destroy-on-finalize-nonprod";
const PINNED = "pko-stack-prod-pinned-commit";
const NO_ADMIN = "pko-stack-no-cluster-admin";
const TENANT = { username: "alice", groups: ["team-a", "system:authenticated"] };

function copy<T>(x: T): T {
    return JSON.parse(JSON.stringify(x)) as T;
}

/** A production Stack by its label alone (its stack name matches no production pattern). */
function production(over: Record<string, unknown> = {}): KObject {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name: "payments", namespace: "team-a", labels: { environment: "production" } },
        spec: goodSpec({ stack: "acme/payments/live", refresh: true, ...over }),
    };
}

/** The rules whose findings block the decision, sorted, once each. */
function blocking(d: Decision): string[] {
    return [...new Set(d.findings.filter((f) => f.status === "blocking").map((f) => f.policy))].sort();
}

describe("changes and deletions at the door", function () {
    this.timeout(60_000);
    const config = packConfig();
    const judge = (input: Parameters<typeof judgeAdmission>[0], cluster: KObject[], c = config) =>
        judgeAdmission({ userInfo: TENANT, ...input }, seededCache(cluster), { config: c, warnOnly: false });

    describe("production is sticky", () => {
        const before = production();
        const update = (edit: (o: KObject & { spec: Record<string, unknown> }) => void, c = config) => {
            const next = copy(before) as KObject & { spec: Record<string, unknown> };
            edit(next);
            return judge({ operation: "UPDATE", object: next, oldObject: before }, [before], c);
        };

        it("denies one patch that removes the production label and adds destroyOnFinalize", () => {
            const d = update((o) => {
                delete o.metadata!.labels;
                o.spec.destroyOnFinalize = true;
            });
            assert.strictEqual(d.allowed, false);
            assert.deepStrictEqual(blocking(d), [PRODUCTION, DESTROY]);
            assert.match(
                d.message!,
                /is production as its earlier version was \(production by label environment="production"\)/,
            );
        });

        it("denies the first of two steps (the label alone), so the second never meets a non-production Stack", () => {
            const d = update((o) => delete o.metadata!.labels);
            assert.strictEqual(d.allowed, false);
            assert.deepStrictEqual(blocking(d), [PRODUCTION]);
            assert.match(d.message!, /takes a production Stack out of production/);
        });

        it("denies another label value, and reads `Production` as production in any case", () => {
            const staging = update((o) => (o.metadata!.labels = { environment: "staging" }));
            assert.deepStrictEqual(blocking(staging), [PRODUCTION]);
            const upper = update((o) => {
                o.metadata!.labels = { environment: "Production" };
                o.spec.destroyOnFinalize = true;
            });
            assert.deepStrictEqual(blocking(upper), [DESTROY]);
            assert.match(upper.message!, /production by label environment="Production"/);
        });

        it("denies the label removed with a branch instead of the commit", () => {
            const d = update((o) => {
                delete o.metadata!.labels;
                delete o.spec.commit;
                o.spec.branch = "main";
            });
            assert.deepStrictEqual(blocking(d), [PRODUCTION, PINNED]);
        });

        it("denies spec.stack moved away from a production name", () => {
            const byName = production({ stack: "acme/payments/prod" });
            delete byName.metadata!.labels;
            const next = copy(byName) as KObject & { spec: Record<string, unknown> };
            next.spec.stack = "acme/payments/sandbox";
            const d = judge({ operation: "UPDATE", object: next, oldObject: byName }, [byName]);
            assert.deepStrictEqual(blocking(d), [PRODUCTION]);
            assert.match(d.message!, /production by spec\.stack "acme\/payments\/prod"/);
        });

        it("admits the reclassification from an approved user or group, or with a waiver, judging it as production", () => {
            const approved = (properties: Record<string, unknown>) =>
                reconcilePackConfig(packPolicies(), { [PRODUCTION]: { properties } }, "test");
            const byUser = update((o) => delete o.metadata!.labels, approved({ reclassificationUsers: ["alice"] }));
            assert.strictEqual(byUser.allowed, true, byUser.message);
            const byGroup = update((o) => delete o.metadata!.labels, approved({ reclassificationGroups: ["team-a"] }));
            assert.strictEqual(byGroup.allowed, true, byGroup.message);
            const waived = update(
                (o) => delete o.metadata!.labels,
                approved({ waivers: [{ resource: "Stack/team-a/payments", reason: "decommissioned" }] }),
            );
            assert.strictEqual(waived.allowed, true, waived.message);
            // The reclassifying change itself is still judged as production.
            const withDestroy = update(
                (o) => {
                    delete o.metadata!.labels;
                    o.spec.destroyOnFinalize = true;
                },
                approved({ reclassificationUsers: ["alice"] }),
            );
            assert.deepStrictEqual(blocking(withDestroy), [DESTROY]);
            const other = update((o) => delete o.metadata!.labels, approved({ reclassificationUsers: ["bob"] }));
            assert.deepStrictEqual(blocking(other), [PRODUCTION]);
        });
    });

    describe("production belongs to the Pulumi stack", () => {
        const prod = production();
        const twin: KObject = {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: "twin", namespace: "team-b" },
            spec: goodSpec({ stack: "ACME/payments/live", destroyOnFinalize: true, branch: "main", commit: undefined }),
        };

        it("denies a second Stack object of a production stack with destroyOnFinalize and a branch", () => {
            const d = judge({ operation: "CREATE", object: twin }, [prod]);
            assert.deepStrictEqual(blocking(d), [PRODUCTION, DESTROY, PINNED]);
            assert.match(d.message!, /is the stack "Stack\/team-a\/payments" deploys/);
        });

        it("admits the same Stack when no production Stack deploys its stack", () => {
            const d = judge({ operation: "CREATE", object: twin }, []);
            assert.strictEqual(d.allowed, true, d.message);
        });

        it("denies an Update that destroys a stack a production Stack of another namespace deploys", () => {
            const update: KObject = {
                apiVersion: "auto.pulumi.com/v1alpha1",
                kind: "Update",
                metadata: { name: "teardown", namespace: "team-b" },
                spec: { workspaceName: "twin", stackName: "acme/payments/live", type: "destroy" },
            };
            const d = judge({ operation: "CREATE", object: update }, [prod]);
            assert.deepStrictEqual(blocking(d), ["pko-update-prod-approved-path"]);
            assert.match(d.message!, /is the stack "Stack\/team-a\/payments" deploys/);
            assert.strictEqual(judge({ operation: "CREATE", object: update }, []).allowed, true);
        });

        it("is how audit judges the cluster's Stacks too", async () => {
            const dir = makeTempDir("change-audit");
            try {
                const kubeconfig = path.join(dir, "kubeconfig");
                fs.writeFileSync(kubeconfig, offlineKubeConfig().exportConfig());
                const fake = new FakeCluster().add(prod, twin);
                const r = await runAudit(
                    { kubeconfig, failOnAdvisory: false, timeoutMs: 30_000 },
                    { transport: fake.transport },
                );
                const onTwin = r.subject.findings.filter(
                    (f) => f.resource === "Stack/team-b/twin" && f.status === "blocking",
                );
                assert.deepStrictEqual([...new Set(onTwin.map((f) => f.policy))].sort(), [PRODUCTION, DESTROY, PINNED]);
                assert.deepStrictEqual(
                    r.subject.findings.filter((f) => f.resource === "Stack/team-a/payments" && f.status === "blocking"),
                    [],
                );
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        });

        it("names one stack by a short name or in another case, never another stack", () => {
            assert.ok(sameStack("acme/payments/live", "ACME/Payments/live"));
            assert.ok(sameStack("acme/payments/live", "payments/live"));
            assert.ok(sameStack("live", "acme/payments/live"));
            assert.ok(!sameStack("acme/payments/live", "acme/payments/live2"));
            assert.ok(!sameStack("acme/payments/live", "other/payments/live"));
            assert.ok(!sameStack("", "acme/payments/live"));
        });
    });

    describe("deletions are judged where they destroy", () => {
        const destroying = production({ destroyOnFinalize: true });
        const del = (old: KObject, cluster: KObject[]) =>
            judge({ operation: "DELETE", object: null, oldObject: old }, cluster);

        it("denies deleting a production Stack with destroyOnFinalize", () => {
            const d = del(destroying, [destroying]);
            assert.strictEqual(d.allowed, false);
            assert.deepStrictEqual(blocking(d), [DESTROY]);
            assert.match(
                d.message!,
                /^pko-guard denied the deletion of Stack\/team-a\/payments: 1 mandatory violation/,
            );
        });

        it("denies deleting a second Stack of a production stack that has destroyOnFinalize, admits it alone", () => {
            const second: KObject = {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "second", namespace: "team-b" },
                spec: goodSpec({ stack: "acme/payments/live", destroyOnFinalize: true }),
            };
            assert.deepStrictEqual(blocking(del(second, [production(), second])), [DESTROY]);
            assert.strictEqual(del(second, [second]).allowed, true);
        });

        it("admits deleting a production Stack without destroyOnFinalize, and ignores other kinds' deletions", () => {
            assert.strictEqual(del(production(), [production()]).allowed, true);
            const sa = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "x", namespace: "team-a" } };
            assert.strictEqual(del(sa, []).skipped, "no rule judges the deletion of this kind");
        });
    });

    describe("updates keep the rules", () => {
        const stack = production();
        const admin = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "team-a-default-admin" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: "default", namespace: "team-a" }],
        };
        const cluster = [stack, admin];

        it("denies a new commit of a Stack whose account is already cluster-admin", () => {
            const next = copy(stack) as KObject & { spec: Record<string, unknown> };
            next.spec.commit = "c".repeat(40);
            const d = judge({ operation: "UPDATE", object: next, oldObject: stack }, cluster);
            assert.strictEqual(d.allowed, false);
            assert.deepStrictEqual(blocking(d), [NO_ADMIN]);
        });

        it("admits an annotation no rule reads, and a finalizer let go while deleting", () => {
            const annotated = copy(stack);
            annotated.metadata!.annotations = { "example.com/owner": "team-a" };
            const d = judge({ operation: "UPDATE", object: annotated, oldObject: stack }, cluster);
            assert.strictEqual(d.allowed, true, d.message);
            assert.strictEqual(d.skipped, "a change of nothing a rule reads");
            const deleting = copy(stack);
            deleting.metadata!.deletionTimestamp = "2026-01-01T00:00:00Z";
            deleting.metadata!.finalizers = ["finalizer.stack.pulumi.com"];
            const released = copy(deleting);
            delete released.metadata!.finalizers;
            const r = judge({ operation: "UPDATE", object: released, oldObject: deleting }, cluster);
            assert.strictEqual(r.allowed, true, r.message);
        });

        it("denies a finalizer added to a live object, an annotation a rule reads, and a label", () => {
            for (const edit of [
                (o: KObject) => (o.metadata!.finalizers = ["example.com/hold"]),
                (o: KObject) => (o.metadata!.annotations = { "argocd.argoproj.io/sync-wave": "3" }),
                (o: KObject) => (o.metadata!.labels = { environment: "production", team: "a" }),
            ]) {
                const next = copy(stack);
                edit(next);
                const d = judge({ operation: "UPDATE", object: next, oldObject: stack }, cluster);
                assert.deepStrictEqual(blocking(d), [NO_ADMIN], JSON.stringify(next.metadata));
            }
        });

        it("admits the update that removes the violation", () => {
            const next = copy(stack) as KObject & { spec: Record<string, unknown> };
            next.spec.serviceAccountName = "deployer";
            const d = judge({ operation: "UPDATE", object: next, oldObject: stack }, cluster);
            assert.deepStrictEqual(blocking(d), []);
        });

        it("tells metadata no rule reads from what rules and PKO read", () => {
            assert.ok(!readAnnotation("example.com/owner"));
            assert.ok(!readAnnotation("kubectl.kubernetes.io/last-applied-configuration"));
            for (const k of [
                "argocd.argoproj.io/sync-wave",
                "helm.sh/hook",
                "pko-guard.io/waive",
                "pulumi.com/reconciliation-request",
            ])
                assert.ok(readAnnotation(k), k);
            const a = {
                apiVersion: "v1",
                kind: "Secret",
                metadata: { name: "s", resourceVersion: "1" },
                data: { k: "YQ==" },
            };
            assert.ok(metadataOnly(a, { ...a, metadata: { name: "s", resourceVersion: "2" } }));
            assert.ok(!metadataOnly(a, { ...a, data: { k: "Yg==" } }));
            const app = { apiVersion: "argoproj.io/v1alpha1", kind: "Application", metadata: { name: "a" }, spec: {} };
            assert.ok(metadataOnly(app, { ...app, status: { sync: { status: "Synced" } } }));
        });
    });
});
