/**
 * Lists past the first page, through the client library as it answers (test/support/fake-cluster.ts): the
 * cache's list, admission's fresh reads and audit see every Stack and Application of a kind that takes
 * several pages, so a binding that gives the 501st Stack's account cluster-admin is found (test/support/paging-crowd.ts).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache } from "../../../cluster/cache";
import { judgeAdmission } from "../../../cluster/admission";
import { auditSummaryLine, runAudit } from "../../../cli/audit";
import { makeTempDir } from "../../../support/process";
import { FakeCluster, offlineKubeConfig } from "../../support/fake-cluster";
import {
    APPLICATIONS,
    STACKS,
    TARGET,
    TARGET_STACK,
    adminBinding,
    assertDeniedByFreshRead,
    crowdObjects,
    pad,
} from "../../support/paging-crowd";

const webapp = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "webapp", namespace: "crowd" } };
const clusterAdmin = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "cluster-admin" },
    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
};

function crowd(): FakeCluster {
    const f = new FakeCluster();
    f.add(webapp, clusterAdmin);
    f.add(...crowdObjects());
    return f;
}

describe("cluster lists past the first page", function () {
    this.timeout(120_000);
    const config = packConfig();
    let cache: ClusterCache | undefined;
    afterEach(() => cache?.stop());

    it("the cache lists every Stack and Application, page by page", async () => {
        const fake = crowd();
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport });
        cache.start();
        await cache.waitForSync(60_000);
        assert.strictEqual(cache.size("Stack"), STACKS);
        assert.strictEqual(cache.size("Application"), APPLICATIONS);
        assert.ok(cache.get("Stack", "crowd", `stack-${pad(TARGET)}`), "the 501st Stack is cached");
        assert.strictEqual(cache.applicationsFor(`dest-${pad(APPLICATIONS - 1)}`).length, 1);
        const stackPages = fake.requests.filter((r) => r.startsWith("/apis/pulumi.com/v1/stacks?"));
        assert.strictEqual(stackPages.length, Math.ceil(STACKS / 500), stackPages.join("\n"));
        // The cache alone denies a binding that gives the 501st Stack's account cluster-admin.
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding }, cache, { config, warnOnly: false });
        assert.strictEqual(d.allowed, false, "admitted");
        assert.match(d.message!, new RegExp(TARGET_STACK));
    });

    it("a continue token that expires (410) mid-list: the cache lists the kind again from the start, whole", async () => {
        const fake = crowd();
        fake.expireContinues = 2;
        const failed: string[] = [];
        cache = new ClusterCache(offlineKubeConfig(), {
            transport: fake.transport,
            log: (event, f) => event === "cache.list_failed" && failed.push(String(f.kind)),
        });
        cache.start();
        await cache.waitForSync(60_000);
        assert.strictEqual(fake.expireContinues, 0);
        assert.strictEqual(cache.size("Stack"), STACKS);
        assert.strictEqual(cache.size("Application"), APPLICATIONS);
        assert.deepStrictEqual(failed, []);
    });

    it("a fresh read lists every page: the binding is denied with an empty cache", async () => {
        const fake = crowd();
        cache = new ClusterCache(offlineKubeConfig(), { transport: fake.transport });
        await assertDeniedByFreshRead(cache, config);
    });

    it("audit reads and judges every Stack, a continue token expiring on the way: the 501st Stack's binding fails it", async () => {
        const fake = crowd().add(adminBinding);
        fake.expireContinues = 1;
        const dir = makeTempDir("paging-audit");
        try {
            const kubeconfig = path.join(dir, "kubeconfig");
            fs.writeFileSync(kubeconfig, offlineKubeConfig().exportConfig());
            const r = await runAudit(
                { kubeconfig, failOnAdvisory: false, timeoutMs: 60_000 },
                { transport: fake.transport },
            );
            assert.strictEqual(fake.expireContinues, 0);
            assert.match(auditSummaryLine(r), new RegExp(`\\b${STACKS} Stack\\b`));
            assert.match(auditSummaryLine(r), new RegExp(`\\b${APPLICATIONS} Application\\b`));
            assert.strictEqual(r.subject.outcome, "fail");
            assert.ok(
                r.subject.findings.some(
                    (f) =>
                        f.policy === "pko-stack-no-cluster-admin" &&
                        f.status === "blocking" &&
                        f.message.includes(TARGET_STACK),
                ),
                JSON.stringify(r.subject.findings.map((f) => `${f.policy}: ${f.message}`)),
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
