/**
 * Lists past the first page on a real API server (harness/apiserver.ts), which pages every list of more
 * than 500 objects: with 1,234 Stacks and 777 Argo CD Applications stored, the cluster cache, a fresh read
 * and audit see them all, so a binding that gives the 501st Stack's account cluster-admin is denied and
 * fails the audit. A Stack nested 5,000 levels deep (the Stack CRD preserves unknown fields under
 * spec.config) is skipped alone and reported.
 * Fixed by 8afce69 (paging by metadata.continue) and 0f78251 (objects decoded alone); before them, lists stopped
 * at 500 and the deep Stack stopped the webhook and audit (docs/contributing/verified-facts.md).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@kubernetes/client-node";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache } from "../../../cluster/cache";
import { objectClient } from "../../../cluster/client";
import { judgeAdmission } from "../../../cluster/admission";
import { loadKubeConfig } from "../../../cluster/kubeconfig";
import { auditSummaryLine, runAudit } from "../../../cli/audit";
import { ApiServer, installApplicationCrd, installPkoCrds, startApiServer } from "../../../harness/apiserver";
import { deepJson } from "../../support/fake-cluster";
import { namespaceYaml, requireCluster } from "../../support/cluster";
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

const DEPTH = 5000;

describe("cluster lists past the first page, on a real API server", function () {
    this.timeout(900_000);
    const config = packConfig();
    let server: ApiServer;
    let kc: k8s.KubeConfig;
    let cache: ClusterCache | undefined;

    before(async function () {
        requireCluster(this);
        server = await startApiServer();
        await installPkoCrds(server);
        await installApplicationCrd(server);
        for (const ns of ["crowd", "argocd", "attic"]) await server.apply(namespaceYaml(ns));
        await server.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: webapp, namespace: crowd}\n");
        kc = loadKubeConfig(server.kubeconfig);
        const { api, close } = objectClient(kc, 16);
        try {
            const objects = crowdObjects() as k8s.KubernetesObject[];
            let next = 0;
            const worker = async () => {
                while (next < objects.length) await api.create(objects[next++]);
            };
            await Promise.all(Array.from({ length: 16 }, worker));
        } finally {
            close();
        }
        // The deep Stack is sent as JSON text (kubectl sends the file's bytes as they are).
        const file = path.join(server.dir, "deep-stack.json");
        fs.writeFileSync(
            file,
            deepJson(
                {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: "deep", namespace: "attic" },
                    spec: {
                        stack: "org/app/deep",
                        projectRepo: "https://github.com/org/app.git",
                        commit: "0123456789abcdef0123456789abcdef01234567",
                    },
                },
                "config",
                DEPTH,
            ),
        );
        const created = await server.kubectl([
            "create",
            "--raw",
            "/apis/pulumi.com/v1/namespaces/attic/stacks",
            "-f",
            file,
        ]);
        assert.strictEqual(created.code, 0, created.stderr);
    });
    afterEach(() => cache?.stop());
    after(async () => {
        await server?.stop();
    });

    it("the cache lists every Stack and Application and skips the deep Stack alone; it denies the binding", async () => {
        const unreadable: string[] = [];
        cache = new ClusterCache(kc, {
            log: (event, f) => event === "cache.unreadable" && unreadable.push(`${f.namespace}/${f.name}`),
        });
        cache.start();
        await cache.waitForSync(300_000);
        assert.strictEqual(cache.size("Stack"), STACKS);
        assert.strictEqual(cache.size("Application"), APPLICATIONS);
        assert.ok(cache.get("Stack", "crowd", `stack-${pad(TARGET)}`));
        assert.deepStrictEqual(unreadable, ["attic/deep"]);
        const d = judgeAdmission({ operation: "CREATE", object: adminBinding }, cache, { config, warnOnly: false });
        assert.strictEqual(d.allowed, false, "admitted");
        assert.match(d.message!, new RegExp(TARGET_STACK));
    });

    it("a fresh read lists every page: the binding is denied with an empty cache", async () => {
        cache = new ClusterCache(kc);
        await assertDeniedByFreshRead(cache, config);
    });

    it("audit reads and judges every Stack but the deep one, which it reports, and fails", async () => {
        await server.apply(JSON.stringify(adminBinding));
        const r = await runAudit({ kubeconfig: server.kubeconfig, failOnAdvisory: false, timeoutMs: 300_000 });
        assert.deepStrictEqual(r.counts.Stack, { read: STACKS + 1, judged: STACKS });
        assert.deepStrictEqual(r.counts.Application, { read: APPLICATIONS, judged: APPLICATIONS });
        assert.match(auditSummaryLine(r), new RegExp(`${STACKS + 1} Stack read, ${STACKS} judged`));
        assert.strictEqual(r.subject.outcome, "fail");
        const by = (policy: string) => r.subject.findings.filter((f) => f.policy === policy);
        assert.ok(
            by("pko-stack-no-cluster-admin").some((f) => f.message.includes(TARGET_STACK)),
            JSON.stringify(r.subject.findings.map((f) => `${f.policy}: ${f.message}`).slice(0, 20)),
        );
        assert.deepStrictEqual(
            by("pko-guard-unreadable-object").map((f) => f.resource),
            ["Stack/attic/deep"],
        );
    });
});
