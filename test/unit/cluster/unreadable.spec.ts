/**
 * One object pko-guard cannot read (a Stack nested 5,000 levels deep, which a CRD that preserves unknown
 * fields lets the API server store) stops nothing: the cache lists and watches the others, names it in its
 * log (escaped) and counts it; a decision it could change is refused, others are not; a fresh read that
 * meets it fails closed; the object itself under review is refused; audit reads and judges the rest and
 * reports it. Through the client library with a stand-in server (test/support/fake-cluster.ts).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { packConfig } from "../../../evaluation/pack-config";
import { evaluatePack } from "../../../evaluation/evaluate";
import { ClusterCache } from "../../../cluster/cache";
import { judgeAdmission, judgeAdmissionFresh } from "../../../cluster/admission";
import { MAX_DEPTH, WATCHED_KINDS, clusterResource, decodeObject, nestsDeeperThan } from "../../../cluster/kinds";
import { auditSummaryLine, runAudit } from "../../../cli/audit";
import { makeTempDir } from "../../../support/process";
import { FakeCluster, deepJson, offlineKubeConfig } from "../../support/fake-cluster";

const DEPTH = 5000;
const STACK_KIND = WATCHED_KINDS.find((k) => k.kind === "Stack")!;

function stack(name: string, ns: string, account: string): Record<string, unknown> {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: ns },
        spec: {
            serviceAccountName: account,
            stack: `org/app/${name}`,
            projectRepo: "https://github.com/org/app.git",
            commit: "0123456789abcdef0123456789abcdef01234567",
        },
    };
}

/** The Stack `name` of namespace `ns`, running as `account`, with `DEPTH` levels under spec.config (JSON text). */
function deepStack(name: string, ns: string, account: string): string {
    return deepJson(stack(name, ns, account), "config", DEPTH);
}

function adminBinding(ns: string, account: string): Record<string, unknown> {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: `${ns}-${account}:cluster-admin` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: account, namespace: ns }],
    };
}

const clusterAdmin = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "cluster-admin" },
    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
};

const account = (name: string, ns: string) => ({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace: ns },
});

/** Readable Stacks in `crowd` and `elsewhere`, and the deep Stack `deep` of `crowd` (running as `hidden`). */
function cluster(): FakeCluster {
    const f = new FakeCluster();
    f.add(clusterAdmin, account("hidden", "crowd"), account("plain", "elsewhere"));
    for (let i = 0; i < 20; i++) f.add(stack(`s${i}`, i % 2 ? "crowd" : "elsewhere", `sa-${i}`));
    f.add(deepStack("deep", "crowd", "hidden"));
    return f;
}

describe("an object pko-guard cannot read", function () {
    this.timeout(120_000);
    const config = packConfig();
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    const started = async (fake: FakeCluster, log?: (event: string, f: Record<string, unknown>) => void) => {
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport, log });
        cache.start();
        await cache.waitForSync(30_000);
        return cache;
    };

    it("is skipped alone while listing: the others are cached; it is counted and named in the log, escaped", async () => {
        const fake = cluster().add(deepStack("evil\u001b]8;;x\u0007", "crowd", "hidden"));
        const logged: Record<string, unknown>[] = [];
        const c = await started(fake, (event, f) => event === "cache.unreadable" && logged.push(f));
        assert.strictEqual(c.size("Stack"), 20);
        assert.deepStrictEqual(
            c
                .unreadable("Stack")
                .map((u) => `${u.namespace}/${u.name}: ${u.reason}`)
                .sort(),
            [
                `crowd/deep: it nests deeper than ${MAX_DEPTH} levels`,
                `crowd/evil\u001b]8;;x\u0007: it nests deeper than ${MAX_DEPTH} levels`,
            ],
        );
        assert.deepStrictEqual(logged.map((f) => `${f.kind} ${f.namespace}/${f.name}`).sort(), [
            "Stack crowd/deep",
            "Stack crowd/evil\\x1b]8;;x\\x07",
        ]);
        assert.ok(c.stackNamespaces().includes("crowd"));
    });

    it("refuses a decision it could change, and only those", async () => {
        const c = await started(cluster());
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding("crowd", "hidden") }, c, {
            config,
            warnOnly: false,
        });
        assert.strictEqual(d.allowed, false, "admitted a binding that may empower the unread Stack");
        assert.match(
            d.message!,
            new RegExp(
                `pko-guard-cluster-state: cluster objects that could change this decision cannot be read: Stack/crowd/deep \\(it nests deeper than ${MAX_DEPTH} levels\\)`,
            ),
        );
        const warned = judgeAdmission({ operation: "CREATE", object: adminBinding("crowd", "hidden") }, c, {
            config,
            warnOnly: true,
        });
        assert.strictEqual(warned.allowed, true);
        assert.ok(warned.warnings.some((w) => /^would deny: pko-guard-cluster-state: /.test(w)));
        // A namespace it cannot reach: judged as usual (a binding to an account no Stack runs as is a warning).
        const other = judgeAdmission({ operation: "CREATE", object: adminBinding("elsewhere", "plain") }, c, {
            config,
            warnOnly: false,
        });
        assert.strictEqual(other.allowed, true, other.message);
        assert.ok(!other.findings.some((f) => f.policy === "pko-guard-cluster-state"));
    });

    it("is followed through watch events: an update that cannot be read drops the old version, a readable one restores it", async () => {
        const fake = new FakeCluster().add(clusterAdmin, stack("later", "crowd", "hidden"));
        const c = await started(fake);
        await until(() => fake.watching() === WATCHED_KINDS.length);
        const bind = () =>
            judgeAdmission({ operation: "CREATE", object: adminBinding("crowd", "hidden") }, c, {
                config,
                warnOnly: false,
            });
        assert.match(bind().message!, /pko-stack-no-cluster-admin/);
        fake.emit("MODIFIED", deepStack("later", "crowd", "hidden"));
        assert.strictEqual(c.get("Stack", "crowd", "later"), undefined, "the old version is still judged");
        assert.deepStrictEqual(
            c.unreadable().map((u) => u.name),
            ["later"],
        );
        assert.match(bind().message!, /pko-guard-cluster-state: .*Stack\/crowd\/later/);
        fake.emit("MODIFIED", stack("later", "crowd", "hidden"));
        assert.deepStrictEqual(c.unreadable(), []);
        assert.ok(c.get("Stack", "crowd", "later"));
        fake.emit("MODIFIED", deepStack("later", "crowd", "hidden"));
        fake.emit("DELETED", deepStack("later", "crowd", "hidden"));
        assert.deepStrictEqual(c.unreadable(), []);
        assert.strictEqual(c.size("Stack"), 0);
    });

    it("fails a fresh read that meets it closed, naming it", async () => {
        const fake = cluster();
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport });
        for (const k of WATCHED_KINDS) cache.seed(k.kind, []);
        await assert.rejects(cache.listFresh("Stack", "crowd"), /Stack\/crowd\/deep cannot be read: it nests deeper/);
        const d = await judgeAdmissionFresh(
            { operation: "CREATE", object: adminBinding("crowd", "hidden") },
            cache,
            { config, warnOnly: false },
            (kind, ns, name) => cache!.listFresh(kind, ns, name),
        );
        assert.strictEqual(d.allowed, false);
        assert.match(d.message!, /pko-guard-cluster-state: cluster state cannot be read \(Stack\/crowd\/deep cannot/);
    });

    it("under review, is refused rather than throwing", async () => {
        const c = await started(new FakeCluster().add(clusterAdmin));
        const object = JSON.parse(deepStack("deep", "crowd", "hidden"));
        for (const d of [
            judgeAdmission({ operation: "CREATE", object }, c, { config, warnOnly: false }),
            await judgeAdmissionFresh(
                { operation: "UPDATE", object, oldObject: object },
                c,
                { config, warnOnly: false },
                (kind, ns, name) => c.listFresh(kind, ns, name),
            ),
        ]) {
            assert.strictEqual(d.allowed, false);
            assert.match(
                d.message!,
                /pko-guard denied Stack\/crowd\/deep:\n- pko-guard-unreadable-object: pko-guard cannot judge this object: it nests deeper than/,
            );
        }
    });

    it("is reported by audit, which judges every other object and fails", async () => {
        const fake = cluster().add(adminBinding("crowd", "sa-1"));
        const dir = makeTempDir("unreadable-audit");
        try {
            const kubeconfig = path.join(dir, "kubeconfig");
            fs.writeFileSync(kubeconfig, offlineKubeConfig().exportConfig());
            const r = await runAudit(
                { kubeconfig, failOnAdvisory: false, timeoutMs: 30_000 },
                { transport: fake.transport },
            );
            assert.deepStrictEqual(r.counts.Stack, { read: 21, judged: 20 });
            const line = auditSummaryLine(r);
            assert.match(line, /21 Stack read, 20 judged/);
            assert.match(line, /\(1 not judged: pko-guard-unreadable-object\)/);
            assert.match(line, /FAIL$/);
            const unjudged = r.subject.findings.filter((f) => f.policy === "pko-guard-unreadable-object");
            assert.deepStrictEqual(
                unjudged.map((f) => [f.resource, f.status]),
                [["Stack/crowd/deep", "blocking"]],
            );
            assert.match(unjudged[0].message, new RegExp(`it nests deeper than ${MAX_DEPTH} levels`));
            // The others were judged: the binding that gives Stack s1's account cluster-admin is found.
            assert.ok(
                r.subject.findings.some(
                    (f) => f.policy === "pko-stack-no-cluster-admin" && f.message.includes("Stack/crowd/s1"),
                ),
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("is anything deeper than MAX_DEPTH; an object of MAX_DEPTH levels is kept and the evaluator judges it", () => {
        const at = JSON.parse(deepJson(stack("edge", "crowd", "hidden"), "config", MAX_DEPTH - 2));
        const over = JSON.parse(deepJson(stack("edge", "crowd", "hidden"), "config", MAX_DEPTH - 1));
        assert.strictEqual(nestsDeeperThan(at, MAX_DEPTH), false);
        assert.strictEqual(nestsDeeperThan(over, MAX_DEPTH), true);
        const kept = decodeObject(at, STACK_KIND);
        assert.ok(kept.object, kept.unreadable?.reason);
        assert.ok(decodeObject(over, STACK_KIND).unreadable);
        assert.ok(Array.isArray(evaluatePack([clusterResource(kept.object)], config)));
        assert.deepStrictEqual(decodeObject(null, STACK_KIND).unreadable?.reason, "it is not a JSON object");
    });
});

async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(check(), "timed out");
}
