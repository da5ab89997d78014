/**
 * Probes of issue 45's classes 1, 2 and 4 (production is sticky and belongs to the Pulumi stack, deletes are
 * judged where they destroy, updates keep the rules) by a real tenant: a client-certificate user whose only
 * rights are `*` on `*` in its own namespace (a RoleBinding to such a Role, the usual PKO team set-up), on a real
 * etcd + kube-apiserver with the door as shipped (test/support/shipped-door.ts), the webhook configuration's DELETE
 * rule and match conditions included. Objects a tenant could not have made past the door (a Stack whose account
 * is cluster-admin, a production Stack with destroyOnFinalize, a second Stack object of a production stack) are
 * made by the admin before the webhook is registered, as they would be while it was down. Each probe asserts the
 * verdict and the exact rules a denial names. Before the commit that added this spec, each denial here was
 * admitted, and the deletions were never sent.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ExecResult, Spawned, exec, removeTempDir } from "../../../support/process";
import { TOOLCHAIN_BIN } from "../../../support/toolchain";
import { ApiServer, CONTROL_PLANE_CONTROLLERS } from "../../../harness/apiserver";
import { issueCert } from "../../../harness/certs";
import { Doc, requireCluster, until, yaml } from "../../support/cluster";
import { startDoor, startShippedWebhook } from "../../support/shipped-door";

const RBAC = "rbac.authorization.k8s.io";
const SHA = "0123456789abcdef0123456789abcdef01234567";
const PRODUCTION = "pko-guard-production";
const DESTROY = "pko-stack-destroy-on-finalize-nonprod";
const PINNED = "pko-stack-prod-pinned-commit";
const NO_ADMIN = "pko-stack-no-cluster-admin";

/** A Stack in `ns`, production by its label unless `labels` says otherwise. */
function stack(name: string, ns: string, spec: Doc = {}, labels: Doc | undefined = { environment: "production" }): Doc {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
        spec: {
            stack: "acme/payments/live",
            projectRepo: "https://github.com/acme/payments",
            commit: SHA,
            refresh: true,
            envRefs: {
                PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "pulumi-access-token", key: "accessToken" } },
            },
            ...spec,
        },
    };
}

/** The rules a denial names (its `- rule: ...` lines), sorted; fails when the request was admitted. */
function deniedBy(r: ExecResult): string[] {
    assert.notStrictEqual(r.code, 0, `admitted: ${r.stdout}${r.stderr}`);
    assert.match(
        r.stderr,
        /admission webhook "validate\.pko-guard\.dev" denied the request: pko-guard denied/,
        r.stderr,
    );
    return [...new Set([...r.stderr.matchAll(/^- ([a-z0-9-]+): /gm)].map((m) => m[1]))].sort();
}

const admitted = (r: ExecResult) => assert.strictEqual(r.code, 0, r.stderr);

describe("a namespace tenant against the door's change and delete judging, on a real API server", function () {
    this.timeout(900_000);
    let dir: string;
    let server: ApiServer;
    let hook: Spawned | undefined;
    let logs = "";
    let tenantConfig = "";

    /** kubectl as the tenant (its client certificate). */
    const tenant = (args: string[], input?: string) =>
        exec(path.join(TOOLCHAIN_BIN, "kubectl"), ["--kubeconfig", tenantConfig, ...args], {
            cwd: dir,
            env: { ...process.env, KUBECONFIG: tenantConfig },
            input,
            timeoutMs: 120_000,
        });
    const patch = (name: string, type: "json" | "merge", p: unknown) =>
        tenant(["patch", "stack", name, "-n", "team-a", `--type=${type}`, "-p", JSON.stringify(p)]);
    const exists = async (name: string, ns = "team-a") =>
        (await server.kubectl(["get", "stack", name, "-n", ns])).code === 0;

    before(async function () {
        requireCluster(this);
        // With kube-controller-manager as a cluster runs it: the namespace controller deletes a namespace's Stacks.
        const door = await startDoor("door-change", ["team-a", "platform", "retired"], CONTROL_PLANE_CONTROLLERS);
        ({ dir, server } = door);
        // The tenant: alice, by a client certificate of the API server's client CA, `*` on `*` in team-a only.
        const cert = issueCert(server.ca, "alice", { dns: ["alice"] });
        tenantConfig = path.join(dir, "alice.kubeconfig");
        fs.writeFileSync(
            tenantConfig,
            yaml([
                {
                    apiVersion: "v1",
                    kind: "Config",
                    clusters: [
                        {
                            name: "door",
                            cluster: {
                                server: server.url,
                                "certificate-authority-data": door.caPem.toString("base64"),
                            },
                        },
                    ],
                    users: [{ name: "alice", user: { "client-certificate": cert.cert, "client-key": cert.key } }],
                    contexts: [{ name: "door", context: { cluster: "door", user: "alice", namespace: "team-a" } }],
                    "current-context": "door",
                },
            ]),
            { mode: 0o600 },
        );
        // Before the webhook is registered (as while it was down): the tenant's rights, and what no tenant could
        // have made past the door.
        await server.apply(
            yaml([
                {
                    apiVersion: `${RBAC}/v1`,
                    kind: "Role",
                    metadata: { name: "everything", namespace: "team-a" },
                    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
                },
                {
                    apiVersion: `${RBAC}/v1`,
                    kind: "RoleBinding",
                    metadata: { name: "alice", namespace: "team-a" },
                    roleRef: { apiGroup: RBAC, kind: "Role", name: "everything" },
                    subjects: [{ apiGroup: RBAC, kind: "User", name: "alice" }],
                },
                { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "legacy", namespace: "team-a" } },
                {
                    apiVersion: `${RBAC}/v1`,
                    kind: "ClusterRoleBinding",
                    metadata: { name: "legacy-admin" },
                    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "cluster-admin" },
                    subjects: [{ kind: "ServiceAccount", name: "legacy", namespace: "team-a" }],
                },
                stack("legacy", "team-a", { stack: "acme/legacy/dev", serviceAccountName: "legacy" }, {}),
                stack("payments", "team-a"),
                stack("doomed", "team-a", { stack: "acme/doomed/live", destroyOnFinalize: true }),
                stack("ledger", "platform", { stack: "acme/ledger/live" }),
                stack("ledger-twin", "team-a", { stack: "acme/ledger/live", destroyOnFinalize: true }, {}),
                stack("vault", "retired", { stack: "acme/vault/live", destroyOnFinalize: true }),
                stack("scratch", "retired", { stack: "acme/vault-scratch/dev", destroyOnFinalize: true }, {}),
            ]),
        );
        hook = await startShippedWebhook(door, server.kubeconfig, [], (d) => (logs += d));
        // The tenant's own rights hold, and are all it has.
        admitted(await tenant(["get", "stacks", "-n", "team-a"]));
        assert.match((await tenant(["get", "stacks", "-n", "platform"])).stderr, /forbidden/);
    });
    after(async () => {
        hook?.kill();
        await hook?.exited;
        await server?.stop();
        if (dir) removeTempDir(dir);
    });

    describe("class 1: production is sticky and belongs to the stack", () => {
        it("one JSON patch removing the production label and adding destroyOnFinalize", async () => {
            const r = await patch("payments", "json", [
                { op: "remove", path: "/metadata/labels/environment" },
                { op: "add", path: "/spec/destroyOnFinalize", value: true },
            ]);
            assert.deepStrictEqual(deniedBy(r), [PRODUCTION, DESTROY]);
        });

        it("the same in two steps: the label first, then destroyOnFinalize", async () => {
            const label = await patch("payments", "json", [{ op: "remove", path: "/metadata/labels/environment" }]);
            assert.deepStrictEqual(deniedBy(label), [PRODUCTION]);
            const destroy = await patch("payments", "merge", { spec: { destroyOnFinalize: true } });
            assert.deepStrictEqual(deniedBy(destroy), [DESTROY]);
        });

        it("environment: Production, PRODUCTION and staging, each with destroyOnFinalize", async () => {
            for (const value of ["Production", "PRODUCTION"]) {
                const r = await patch("payments", "merge", {
                    metadata: { labels: { environment: value } },
                    spec: { destroyOnFinalize: true },
                });
                assert.deepStrictEqual(deniedBy(r), [DESTROY], value);
            }
            const staging = await patch("payments", "merge", {
                metadata: { labels: { environment: "staging" } },
                spec: { destroyOnFinalize: true },
            });
            assert.deepStrictEqual(deniedBy(staging), [PRODUCTION, DESTROY]);
        });

        it("the label off and branch: main instead of the commit", async () => {
            const r = await patch("payments", "json", [
                { op: "remove", path: "/metadata/labels/environment" },
                { op: "remove", path: "/spec/commit" },
                { op: "add", path: "/spec/branch", value: "main" },
            ]);
            assert.deepStrictEqual(deniedBy(r), [PRODUCTION, PINNED]);
        });

        it("a second Stack object of a production stack, unlabelled, with destroyOnFinalize and a branch", async () => {
            const twin = stack("twin", "team-a", { destroyOnFinalize: true, branch: "main", commit: undefined }, {});
            delete (twin.spec as Doc).commit;
            const r = await tenant(["create", "-f", "-"], yaml([twin]));
            assert.deepStrictEqual(deniedBy(r), [PRODUCTION, DESTROY, PINNED]);
            // The production Stack of another namespace makes its stack production too.
            const ledger = stack("ledger-2", "team-a", { stack: "ACME/ledger/live", destroyOnFinalize: true }, {});
            assert.deepStrictEqual(deniedBy(await tenant(["create", "-f", "-"], yaml([ledger]))), [
                PRODUCTION,
                DESTROY,
            ]);
            assert.ok(!(await exists("twin")) && !(await exists("ledger-2")));
        });

        it("the production Stack is unchanged", async () => {
            const r = await server.kubectl(["get", "stack", "payments", "-n", "team-a", "-o", "json"]);
            const o = JSON.parse(r.stdout) as Doc;
            assert.strictEqual(o.metadata.labels.environment, "production");
            assert.strictEqual(o.spec.destroyOnFinalize, undefined);
            assert.strictEqual(o.spec.commit, SHA);
        });
    });

    describe("class 2: deletes are judged where they destroy", () => {
        it("kubectl delete of a production Stack with destroyOnFinalize", async () => {
            assert.deepStrictEqual(deniedBy(await tenant(["delete", "stack", "doomed", "-n", "team-a"])), [DESTROY]);
            assert.ok(await exists("doomed"));
        });

        it("the delete of a second Stack object of a production stack (in another namespace), with destroyOnFinalize", async () => {
            const r = await tenant(["delete", "stack", "ledger-twin", "-n", "team-a"]);
            assert.deepStrictEqual(deniedBy(r), [DESTROY]);
            assert.match(r.stderr, /is the stack "Stack\/platform\/ledger" deploys/);
            assert.ok(await exists("ledger-twin"));
        });

        it("a Stack admitted as non-production, made production by a later production Stack of its stack", async () => {
            const early = stack("early", "team-a", { stack: "acme/shop/live", destroyOnFinalize: true }, {});
            admitted(await tenant(["create", "-f", "-"], yaml([early])));
            admitted(
                await server.kubectl(
                    ["create", "-f", "-"],
                    yaml([stack("shop", "platform", { stack: "acme/shop/live" })]),
                ),
            );
            // The webhook reads other namespaces' Stacks from its cache: wait until it has this one (a server-side
            // dry run of a second Stack of the stack is denied once it has), so the delete below meets it.
            const probe = stack("probe", "team-a", { stack: "acme/shop/live" }, {});
            await until("the webhook's cache to hold Stack platform/shop", async () =>
                /pko-guard-production/.test(
                    (await tenant(["create", "--dry-run=server", "-f", "-"], yaml([probe]))).stderr,
                ),
            );
            assert.deepStrictEqual(deniedBy(await tenant(["delete", "stack", "early", "-n", "team-a"])), [DESTROY]);
            assert.ok(await exists("early"));
        });

        it("an Update that destroys the stack a production Stack of another namespace deploys", async () => {
            const update = {
                apiVersion: "auto.pulumi.com/v1alpha1",
                kind: "Update",
                metadata: { name: "teardown", namespace: "team-a" },
                spec: { workspaceName: "ledger-twin", stackName: "acme/ledger/live", type: "destroy" },
            };
            const r = await tenant(["create", "-f", "-"], yaml([update]));
            assert.deepStrictEqual(deniedBy(r), ["pko-update-prod-approved-path"]);
        });

        it("deletes that destroy nothing pko-guard guards go through", async () => {
            const scratch = stack("scratch", "team-a", { stack: "acme/scratch/dev", destroyOnFinalize: true }, {});
            admitted(await tenant(["create", "-f", "-"], yaml([scratch])));
            admitted(await tenant(["delete", "stack", "scratch", "-n", "team-a"]));
            admitted(await tenant(["create", "-f", "-"], yaml([stack("kept", "team-a", { stack: "acme/kept/live" })])));
            admitted(await tenant(["delete", "stack", "kept", "-n", "team-a"]));
        });
    });

    describe("a namespace deleted with a production Stack with destroyOnFinalize in it", () => {
        it("is kept Terminating, the namespace controller's delete of that Stack denied by the rule", async () => {
            admitted(await server.kubectl(["delete", "namespace", "retired", "--wait=false"]));
            await until("the namespace controller to report the denied deletion", async () => {
                const r = await server.kubectl(["get", "namespace", "retired", "-o", "json"]);
                const conditions = ((JSON.parse(r.stdout) as Doc).status?.conditions ?? []) as Doc[];
                return conditions.some(
                    (c) =>
                        c.type === "NamespaceDeletionContentFailure" &&
                        c.status === "True" &&
                        /denied the request: pko-guard denied the deletion of Stack\/retired\/vault/.test(
                            String(c.message),
                        ),
                );
            });
            assert.ok(await exists("vault", "retired"));
            // What destroys nothing a rule guards went (its deletion judged and admitted).
            await until(
                "the non-production Stack of the namespace to be deleted",
                async () => !(await exists("scratch", "retired")),
            );
        });
    });

    describe("class 4: updates keep the rules", () => {
        it("a new commit of a Stack whose account is already cluster-admin", async () => {
            const r = await patch("legacy", "merge", { spec: { commit: "f".repeat(40) } });
            assert.deepStrictEqual(deniedBy(r), [NO_ADMIN]);
        });

        it("a label on it, and an annotation a rule reads", async () => {
            assert.deepStrictEqual(deniedBy(await tenant(["label", "stack", "legacy", "-n", "team-a", "team=a"])), [
                NO_ADMIN,
            ]);
            const wave = await tenant([
                "annotate",
                "stack",
                "legacy",
                "-n",
                "team-a",
                "argocd.argoproj.io/sync-wave=3",
            ]);
            assert.deepStrictEqual(deniedBy(wave), [NO_ADMIN]);
        });

        it("an annotation no rule reads is admitted", async () => {
            admitted(await tenant(["annotate", "stack", "legacy", "-n", "team-a", "example.com/owner=team-a"]));
        });
    });

    describe("a collection delete", () => {
        // The API server sends each item's DELETE for review and stops a worker at its first refusal, so which other
        // Stacks go is its business; no production Stack with destroyOnFinalize does.
        it("keeps every production Stack with destroyOnFinalize", async () => {
            const r = await tenant(["delete", "--raw", "/apis/pulumi.com/v1/namespaces/team-a/stacks"]);
            assert.notStrictEqual(r.code, 0, r.stdout);
            assert.match(r.stderr, /denied the request/);
            for (const name of ["doomed", "ledger-twin", "early"]) assert.ok(await exists(name), name);
        });
    });
});
