/**
 * The shipped webhook configuration (deploy/webhook/validatingwebhookconfiguration.yaml) with the webhook
 * down, on a real API server and kube-controller-manager run as a cluster runs it (its own identity, one
 * account a controller): no namespace is left out (a user's write in kube-system is sent to the webhook, so
 * refused under `failurePolicy: Fail`), yet the cluster itself is never blocked: the API server starts (its
 * bootstrap RBAC re-created), the service-account and ClusterRole aggregation controllers do their work, and a
 * namespace is deleted whole, an object's last finalizer dropped by an update the configuration leaves free, and
 * the garbage collector orphans an object. A namespace holding a production Stack with destroyOnFinalize is the one
 * kept: that Stack's deletion would run `pulumi destroy`, so it is sent (and refused while the webhook is down).
 * Fixed by ee9bcaa (no namespace left out; matchConditions free the control plane's identities) and fb5e2ed;
 * before them, kube-system was never sent to the webhook.
 * Waits are on conditions only.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { REPO_ROOT } from "../../../support/paths";
import { ApiServer, CONTROL_PLANE_CONTROLLERS, installPkoCrds, startApiServer } from "../../../harness/apiserver";
import { freePort } from "../../../harness/ports";
import { Doc, namespaceYaml, requireCluster, until, yaml } from "../../support/cluster";

const REFUSED = /failed calling webhook "validate\.pko-guard\.dev"/;

/** The shipped configuration as it is, pointed at `url` (nothing listens there) with a CA bundle. */
function shippedConfiguration(url: string, caBundle: string): string {
    const doc = jsyaml.load(
        fs.readFileSync(path.join(REPO_ROOT, "deploy", "webhook", "validatingwebhookconfiguration.yaml"), "utf8"),
    ) as Doc;
    for (const w of doc.webhooks) w.clientConfig = { url: `${url}/validate`, caBundle };
    return jsyaml.dump(doc);
}

const clusterRole = (name: string, extra: Doc): Doc => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    ...extra,
});

describe("the shipped webhook configuration with the webhook down, on a real API server", function () {
    this.timeout(900_000);
    let server: ApiServer;
    const kubectl = (...args: string[]) => server.kubectl(args);
    const exists = async (...args: string[]) => (await kubectl("get", ...args)).code === 0;

    before(async function () {
        requireCluster(this);
        server = await startApiServer({ controllers: CONTROL_PLANE_CONTROLLERS });
        await installPkoCrds(server);
        // Before the webhook is registered: a namespace to delete later, its Stack held by a finalizer as
        // PKO holds one, and an aggregating ClusterRole with the role it selects.
        await server.apply(namespaceYaml("leaving"));
        await server.apply(namespaceYaml("keeping"));
        await server.apply(
            yaml([
                {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: "app", namespace: "leaving", finalizers: ["example.com/hold"] },
                    spec: { stack: "acme/app/dev", projectRepo: "https://github.com/acme/app", branch: "main" },
                },
                {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: "prod", namespace: "keeping", labels: { environment: "production" } },
                    spec: {
                        stack: "acme/app/live",
                        projectRepo: "https://github.com/acme/app",
                        commit: "0123456789abcdef0123456789abcdef01234567",
                        destroyOnFinalize: true,
                    },
                },
                {
                    apiVersion: "v1",
                    kind: "Secret",
                    metadata: { name: "s", namespace: "leaving" },
                    stringData: { k: "v" },
                },
                clusterRole("door-agg", {
                    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "pko-guard.test/agg": "true" } }] },
                }),
                clusterRole("door-member", {
                    metadata: { name: "door-member", labels: { "pko-guard.test/agg": "true" } },
                    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
                }),
            ]),
        );
        // A Secret owned by a ConfigMap (an owner the webhook does not judge), for the garbage collector to orphan.
        await server.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owner, namespace: default}\n");
        const uid = (await kubectl("get", "configmap", "owner", "-n", "default", "-o", "jsonpath={.metadata.uid}"))
            .stdout;
        await server.apply(
            yaml([
                {
                    apiVersion: "v1",
                    kind: "Secret",
                    metadata: {
                        name: "owned",
                        namespace: "default",
                        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid }],
                    },
                },
            ]),
        );
        const aggregated = async () =>
            (await kubectl("get", "clusterrole", "door-agg", "-o", "jsonpath={.rules}")).stdout;
        await until("the aggregation controller to copy door-member's rules", async () =>
            /configmaps/.test(await aggregated()),
        );
        const ca = fs.readFileSync(server.ca.cert).toString("base64");
        await server.apply(shippedConfiguration(`https://127.0.0.1:${await freePort()}`, ca));
        // Registered once a write the webhook judges is refused (the API server's informer has it).
        await until("the webhook configuration to take effect", async () =>
            REFUSED.test((await server.kubectl(["create", "serviceaccount", "probe", "-n", "default"])).stderr),
        );
    });
    after(async () => server?.stop());

    it("sends a user's writes in kube-system: a RoleBinding and a Stack there are refused while it is down", async () => {
        const binding = await kubectl(
            "create",
            "rolebinding",
            "stack-admin",
            "-n",
            "kube-system",
            "--clusterrole=cluster-admin",
            "--serviceaccount=leaving:default",
        );
        assert.notStrictEqual(binding.code, 0, binding.stdout);
        assert.match(binding.stderr, REFUSED);
        const stack = await server.kubectl(
            ["apply", "-f", "-"],
            yaml([
                {
                    apiVersion: "pulumi.com/v1",
                    kind: "Stack",
                    metadata: { name: "app", namespace: "kube-system" },
                    spec: { stack: "acme/app/dev", projectRepo: "https://github.com/acme/app", branch: "main" },
                },
            ]),
        );
        assert.match(stack.stderr, REFUSED);
        assert.ok(!(await exists("rolebinding", "stack-admin", "-n", "kube-system")));
    });

    it("the service-account controller still gives a new namespace its default ServiceAccount", async () => {
        await server.apply(namespaceYaml("fresh"));
        await until("the default ServiceAccount of namespace fresh", () =>
            exists("serviceaccount", "default", "-n", "fresh"),
        );
    });

    it("the aggregation controller still updates an aggregating ClusterRole; a user's update of it is refused", async () => {
        const label = await kubectl("label", "clusterrole", "door-agg", "team=x");
        assert.match(label.stderr, REFUSED);
        const del = await kubectl("delete", "clusterrole", "door-member");
        assert.strictEqual(del.code, 0, del.stderr);
        await until("the aggregation controller to drop door-member's rules", async () => {
            const r = await kubectl("get", "clusterrole", "door-agg", "-o", "jsonpath={.rules}");
            return r.code === 0 && !/configmaps/.test(r.stdout);
        });
    });

    // Its identity is freed for that change alone (test/chaos/cluster/objects-probes.spec.ts: the same identity
    // changing a Workspace's pod template is judged).
    it("the garbage collector still drops the owner reference of an orphaned object", async () => {
        const del = await kubectl("delete", "configmap", "owner", "-n", "default", "--cascade=orphan");
        assert.strictEqual(del.code, 0, del.stderr);
        await until("the garbage collector to orphan Secret default/owned", async () => {
            const r = await kubectl(
                "get",
                "secret",
                "owned",
                "-n",
                "default",
                "-o",
                "jsonpath={.metadata.ownerReferences}",
            );
            return r.code === 0 && r.stdout.trim() === "";
        });
    });

    it("a namespace is deleted whole: the update that drops an object's last finalizer is left free, a change of its spec is not", async () => {
        const del = await kubectl("delete", "namespace", "leaving", "--wait=false");
        assert.strictEqual(del.code, 0, del.stderr);
        await until("the Stack to be marked for deletion", async () =>
            /\S/.test(
                (await kubectl("get", "stack", "app", "-n", "leaving", "-o", "jsonpath={.metadata.deletionTimestamp}"))
                    .stdout,
            ),
        );
        const change = await kubectl(
            "patch",
            "stack",
            "app",
            "-n",
            "leaving",
            "--type=merge",
            "-p",
            '{"spec":{"branch":"other"}}',
        );
        assert.match(change.stderr, REFUSED);
        const release = await kubectl(
            "patch",
            "stack",
            "app",
            "-n",
            "leaving",
            "--type=merge",
            "-p",
            '{"metadata":{"finalizers":null}}',
        );
        assert.strictEqual(release.code, 0, release.stderr);
        await until("namespace leaving to be gone", async () =>
            /NotFound/.test((await kubectl("get", "namespace", "leaving")).stderr),
        );
    });

    it("a namespace holding a Stack with destroyOnFinalize is kept: the Stack's deletion is sent, and refused", async () => {
        const del = await kubectl("delete", "namespace", "keeping", "--wait=false");
        assert.strictEqual(del.code, 0, del.stderr);
        await until("the namespace controller to report the refused deletion", async () => {
            const r = await kubectl("get", "namespace", "keeping", "-o", "json");
            const conditions = ((JSON.parse(r.stdout) as Doc).status?.conditions ?? []) as Doc[];
            return conditions.some(
                (c) => c.type === "NamespaceDeletionContentFailure" && c.status === "True" && REFUSED.test(c.message),
            );
        });
        const stack = await kubectl(
            "get",
            "stack",
            "prod",
            "-n",
            "keeping",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        );
        assert.strictEqual(stack.code, 0, stack.stderr);
        assert.strictEqual(stack.stdout.trim(), "", "the Stack is not being deleted");
    });

    it("the API server starts with it registered, re-creating the bootstrap RBAC it writes", async () => {
        const role = ["clusterrole", "system:aggregate-to-view"];
        const binding = ["rolebinding", "system::extension-apiserver-authentication-reader", "-n", "kube-system"];
        assert.ok((await exists(...role)) && (await exists(...binding)), "bootstrap objects exist");
        for (const what of [role, binding]) assert.strictEqual((await kubectl("delete", ...what)).code, 0);
        assert.ok(!(await exists(...role)) && !(await exists(...binding)));
        await server.restart();
        await until(
            "the bootstrap ClusterRole and kube-system RoleBinding to be re-created",
            async () => (await exists(...role)) && (await exists(...binding)),
        );
        // Still registered and still refusing a user's write.
        assert.match((await kubectl("create", "serviceaccount", "after-restart", "-n", "default")).stderr, REFUSED);
    });
});
