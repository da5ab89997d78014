/**
 * Every kind the door reads past two pages, on a real API server (harness/apiserver.ts pages lists at 500):
 * 1,001 ClusterRoleBindings, RoleBindings of one namespace, ClusterRoles, Workspaces and Programs, each kind's
 * last by name (on the third page) the one that matters. test/chaos/cluster/paging.spec.ts does the same for
 * Stacks and Applications. A fresh read (an empty cache: all namespaces, one namespace, by name), the cache's
 * list and audit find the third page's object; audit counts every object of each kind.
 */
import * as assert from "assert";
import * as k8s from "@kubernetes/client-node";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache } from "../../../cluster/cache";
import { objectClient } from "../../../cluster/client";
import { judgeAdmission, judgeAdmissionFresh } from "../../../cluster/admission";
import { KObject, WATCHED_KINDS } from "../../../cluster/kinds";
import { loadKubeConfig } from "../../../cluster/kubeconfig";
import { runAudit } from "../../../cli/audit";
import { ApiServer, installPkoCrds, startApiServer } from "../../../harness/apiserver";
import { namespaceYaml, requireCluster } from "../../support/cluster";

const N = 1001;
const NS = "crowd";
const RBAC = "rbac.authorization.k8s.io";
const pad = (i: number) => String(i).padStart(4, "0");
const TOKEN = "pul-" + "0123456789abcdef".repeat(2) + "01234567";

const sa = (name: string) => ({ kind: "ServiceAccount", name, namespace: NS });
const binding = (kind: string, name: string, role: string, subject: object, ns?: string): KObject => ({
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: ns ? { name, namespace: ns } : { name },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: role },
    subjects: [subject],
});
const stack = (name: string, account: string): KObject => ({
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name, namespace: NS },
    spec: {
        serviceAccountName: account,
        stack: `o/p/${name}`,
        projectRepo: "https://github.com/acme/app",
        commit: "0".repeat(40),
    },
});
const workspace = (name: string, account: string): KObject => ({
    apiVersion: "auto.pulumi.com/v1alpha1",
    kind: "Workspace",
    metadata: { name, namespace: NS },
    spec: { serviceAccountName: account, git: { url: "https://github.com/acme/app", ref: "0".repeat(40) } },
});
const program = (name: string, value: string): KObject => ({
    apiVersion: "pulumi.com/v1",
    kind: "Program",
    metadata: { name, namespace: NS },
    program: { outputs: { o: value } },
});
const user = (i: number) => ({ apiGroup: RBAC, kind: "User", name: `u-${pad(i)}` });

/** Each kind's crowd: N harmless objects, then the last by name, which matters. */
function crowd(): KObject[] {
    const out: KObject[] = [];
    for (let i = 0; i < N; i++) {
        out.push(binding("ClusterRoleBinding", `crb-${pad(i)}`, "view", user(i)));
        out.push(binding("RoleBinding", `rb-${pad(i)}`, "view", user(i), NS));
        out.push({
            apiVersion: `${RBAC}/v1`,
            kind: "ClusterRole",
            metadata: { name: `cr-${pad(i)}` },
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
        });
        out.push(workspace(`ws-${pad(i)}`, `ws-sa-${pad(i)}`));
        out.push(program(`prog-${pad(i)}`, "fine"));
    }
    out.push(
        binding("ClusterRoleBinding", "crb-zzzz", "cluster-admin", sa("by-crb")),
        binding("RoleBinding", "rb-zzzz", "cluster-admin", sa("by-rb"), NS),
        { apiVersion: `${RBAC}/v1`, kind: "ClusterRole", metadata: { name: "cr-zzzz" }, rules: [wildcard] },
        binding("RoleBinding", "to-cr-zzzz", "cr-zzzz", sa("by-cr"), NS),
        workspace("ws-zzzz", "ws-last"),
        program("prog-zzzz", TOKEN),
    );
    return out;
}
const wildcard = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };

describe("every kind the door reads past two pages, on a real API server", function () {
    this.timeout(900_000);
    const config = packConfig();
    let server: ApiServer;
    let kc: k8s.KubeConfig;
    let cache: ClusterCache | undefined;

    before(async function () {
        requireCluster(this);
        server = await startApiServer();
        await installPkoCrds(server);
        await server.apply(namespaceYaml(NS));
        kc = loadKubeConfig(server.kubeconfig);
        const { api, close } = objectClient(kc, 16);
        try {
            const objects = crowd() as k8s.KubernetesObject[];
            let next = 0;
            const worker = async () => {
                while (next < objects.length) await api.create(objects[next++]);
            };
            await Promise.all(Array.from({ length: 16 }, worker));
        } finally {
            close();
        }
    });
    afterEach(() => cache?.stop());
    after(async () => server?.stop());

    const denied = (d: { allowed: boolean; message?: string }, what: RegExp) => {
        assert.strictEqual(d.allowed, false, "admitted");
        assert.match(d.message!, what);
    };

    it("fresh reads alone (an empty cache) find the third page's binding, namespaced binding and role", async () => {
        cache = new ClusterCache(kc);
        for (const k of WATCHED_KINDS) cache.seed(k.kind, []);
        assert.strictEqual((await cache.listFresh("RoleBinding", NS)).length, N + 2);
        assert.strictEqual((await cache.listFresh("ClusterRoleBinding")).length >= N + 1, true);
        const fresh = (kind: string, ns?: string, name?: string) => cache!.listFresh(kind, ns, name);
        const judge = (s: KObject) =>
            judgeAdmissionFresh({ operation: "CREATE", object: s }, cache!, { config, warnOnly: false }, fresh);
        denied(await judge(stack("s-crb", "by-crb")), /ClusterRoleBinding\/crb-zzzz/);
        denied(await judge(stack("s-rb", "by-rb")), /RoleBinding\/crowd\/rb-zzzz/);
        denied(await judge(stack("s-cr", "by-cr")), /RoleBinding\/crowd\/to-cr-zzzz/);
    });

    it("the cache lists every page of every kind: the third page's Workspace account is judged", async () => {
        cache = new ClusterCache(kc);
        cache.start();
        await cache.waitForSync(300_000);
        for (const kind of ["Workspace", "Program"]) assert.strictEqual(cache.size(kind), N + 1, kind);
        assert.strictEqual(cache.list("RoleBinding", NS).length, N + 2);
        const d = judgeAdmission(
            { operation: "CREATE", object: binding("ClusterRoleBinding", "ws-admin", "cluster-admin", sa("ws-last")) },
            cache,
            { config, warnOnly: false },
        );
        denied(d, /Workspace\/crowd\/ws-zzzz|ws-last/);
    });

    it("audit counts every object of each kind and reports the third page's", async () => {
        const r = await runAudit({ kubeconfig: server.kubeconfig, failOnAdvisory: false, timeoutMs: 300_000 });
        for (const kind of ["Workspace", "Program"])
            assert.deepStrictEqual(r.counts[kind], { read: N + 1, judged: N + 1 }, kind);
        assert.ok(r.counts.ClusterRoleBinding.read >= N + 1 && r.counts.ClusterRole.read >= N + 1);
        assert.ok(r.counts.RoleBinding.read >= N + 2);
        const at = (policy: string, resource: RegExp) =>
            r.subject.findings.some((f) => f.policy === policy && resource.test(`${f.resource} ${f.message}`));
        assert.ok(at("pko-workspace-program-objects", /prog-zzzz/), "the third page's Program");
        assert.strictEqual(r.subject.outcome, "fail");
    });
});
