/**
 * Red-team probes of issue 36's classes 2-4 (no object stops the door, every PKO object at the door, no excluded
 * namespace or identity a bypass): variants of the issue's own examples (test/chaos/cli/webhook-probes.spec.ts),
 * on a real API server with the door deployed as shipped (test/support/shipped-door.ts). docs/contributing/door-probes.md records what
 * each found. Two classes got through before their fix: a Windows host-process Workspace (fixed by 900c3cc), and
 * a write under a freed controller identity, impersonated or with its token, that is not that controller's own
 * write (a Workspace made host-network as the garbage collector, a wildcard role labelled into a bound role as
 * the aggregation controller, a cluster-admin binding as the webhook's own account; fixed by the commit that
 * added this spec: each identity freed only for its one write).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ExecResult, Spawned, exec, removeTempDir } from "../../../support/process";
import { CLI_ENTRY } from "../../../support/paths";
import { ApiServer } from "../../../harness/apiserver";
import { Doc, guideDocs, namespacesOf, requireCluster, until, yaml } from "../../support/cluster";
import { startDoor, startShippedWebhook } from "../../support/shipped-door";

const wildcard = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };
const TOKEN = "pul-" + "0123456789abcdef".repeat(2) + "01234567";
const RBAC = "rbac.authorization.k8s.io";

const denied = (r: ExecResult, rule?: RegExp) => {
    assert.notStrictEqual(r.code, 0, `admitted: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /denied the request/, r.stderr);
    if (rule) assert.match(r.stderr, rule, r.stderr);
};
const admitted = (r: ExecResult) => assert.strictEqual(r.code, 0, r.stderr);

const clusterRole = (name: string, extra: Doc): Doc => ({
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRole",
    metadata: { name, ...(extra.metadata ?? {}) },
    ...extra,
    ...(extra.metadata ? { metadata: { name, ...extra.metadata } } : {}),
});
const binding = (kind: string, name: string, ns: string | undefined, role: string, subject: Doc): Doc => ({
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: ns ? { name, namespace: ns } : { name },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: role },
    subjects: [subject],
});
const sa = (name: string, namespace: string) => ({ kind: "ServiceAccount", name, namespace });
const group = (name: string) => ({ apiGroup: RBAC, kind: "Group", name });
const user = (name: string) => ({ apiGroup: RBAC, kind: "User", name });
const workspace = (name: string, spec: Doc): Doc => ({
    apiVersion: "auto.pulumi.com/v1alpha1",
    kind: "Workspace",
    metadata: { name, namespace: "ws" },
    spec: { serviceAccountName: "runner", git: { url: "https://github.com/acme/app", ref: "0".repeat(40) }, ...spec },
});
const podTemplate = (container: Doc, pod: Doc = {}) => ({
    podTemplate: { spec: { containers: [{ name: "pulumi", ...container }], ...pod } },
});

describe("red-team probes of the door as shipped, on a real API server", function () {
    this.timeout(900_000);
    let dir: string;
    let server: ApiServer;
    let hook: Spawned | undefined;
    let logs = "";

    const kubectl = (...args: string[]) => server.kubectl(args);
    const apply = (docs: Doc[], ...extra: string[]) => server.kubectl(["apply", ...extra, "-f", "-"], yaml(docs));
    const create = (docs: Doc[]) => server.kubectl(["create", "-f", "-"], yaml(docs));

    before(async function () {
        requireCluster(this);
        const door = await startDoor("redteam-objects", ["ws", "attic", "pko-guard-system", "other"]);
        ({ dir, server } = door);
        hook = await startShippedWebhook(door, server.kubeconfig, [], (d) => (logs += d));
        const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "governed");
        await server.apply(yaml(namespacesOf(governed)));
        admitted(await apply(governed));
    });
    after(async () => {
        hook?.kill();
        await hook?.exited;
        await server?.stop();
        if (dir) removeTempDir(dir);
    });

    describe("class 4: excluded namespaces and identities", () => {
        it("a RoleBinding in the webhook's own namespace and in kube-public", async () => {
            for (const ns of ["pko-guard-system", "kube-public"])
                denied(
                    await create([binding("RoleBinding", "x", ns, "cluster-admin", sa("webapp", "governed"))]),
                    /pko-stack-no-cluster-admin/,
                );
        });
        it("a RoleBinding in a namespace created after the webhook started", async () => {
            await server.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: later}\n");
            denied(
                await create([binding("RoleBinding", "x", "later", "cluster-admin", sa("webapp", "governed"))]),
                /pko-stack-no-cluster-admin/,
            );
        });
        for (const [what, subject] of [
            ["Group system:serviceaccounts", group("system:serviceaccounts")],
            ["Group system:serviceaccounts:governed", group("system:serviceaccounts:governed")],
            ["Group system:authenticated", group("system:authenticated")],
            ["User system:serviceaccount:governed:webapp", user("system:serviceaccount:governed:webapp")],
        ] as const) {
            it(`a ClusterRoleBinding and a RoleBinding to ${what}`, async () => {
                const n = what.replace(/[^a-z]/gi, "-").toLowerCase();
                denied(await create([binding("ClusterRoleBinding", n, undefined, "cluster-admin", subject)]));
                denied(await create([binding("RoleBinding", n, "governed", "cluster-admin", subject)]));
            });
        }
        it("a user named like a control-plane identity, and impersonating one that is not exact", async () => {
            for (const as of [
                "system:kube-controller-manager:x",
                "system:apiserver ",
                "system:serviceaccount:kube-system:x",
            ])
                denied(
                    await server.kubectl(
                        ["create", "--as", as, "--as-group", "system:masters", "-f", "-"],
                        yaml([
                            binding("ClusterRoleBinding", "imp", undefined, "cluster-admin", sa("webapp", "governed")),
                        ]),
                    ),
                    /pko-stack-no-cluster-admin/,
                );
        });
        it("the garbage collector's identity makes a Workspace host-network and unpins a production Stack", async () => {
            const as = ["--as", "system:serviceaccount:kube-system:generic-garbage-collector"];
            admitted(
                await create([
                    { ...workspace("gc-ws", podTemplate({})), metadata: { name: "gc-ws", namespace: "governed" } },
                ]),
            );
            denied(
                await kubectl(
                    ...["patch", "workspace", "gc-ws", "-n", "governed", "--type=merge", ...as, "-p"],
                    JSON.stringify({ spec: { podTemplate: { spec: { hostNetwork: true } } } }),
                ),
                /pko-workspace-program-objects/,
            );
            denied(
                await kubectl(
                    ...["patch", "stack", "webapp-production", "-n", "governed", "--type=merge", ...as, "-p"],
                    JSON.stringify({ spec: { commit: null, branch: "main" } }),
                ),
                /pko-stack-prod-pinned-commit/,
            );
        });
        it("the aggregation controller's identity labels a wildcard role into a bound aggregating role", async () => {
            admitted(
                await create([
                    clusterRole("agg-top", {
                        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "probe/agg": "true" } }] },
                    }),
                    binding("RoleBinding", "agg-top", "governed", "agg-top", sa("webapp", "governed")),
                    clusterRole("agg-wild", { rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }),
                ]),
            );
            const r = await kubectl(
                ...["label", "clusterrole", "agg-wild", "probe/agg=true"],
                ...["--as", "system:serviceaccount:kube-system:clusterrole-aggregation-controller"],
            );
            denied(r, /pko-stack-no-cluster-admin/);
        });
        it("the webhook's own account, given cluster-admin, binds cluster-admin to a Stack's account", async () => {
            await server.apply(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: pko-guard-webhook, namespace: pko-guard-system}\n",
            );
            await create([
                binding(
                    "ClusterRoleBinding",
                    "hook-admin",
                    undefined,
                    "cluster-admin",
                    sa("pko-guard-webhook", "pko-guard-system"),
                ),
            ]);
            const r = await server.kubectl(
                ["create", "--as", "system:serviceaccount:pko-guard-system:pko-guard-webhook", "-f", "-"],
                yaml([binding("ClusterRoleBinding", "via-hook", undefined, "cluster-admin", sa("webapp", "governed"))]),
            );
            denied(r, /pko-stack-no-cluster-admin/);
        });
        it("an aggregation label added by label, JSON patch, merge patch and server-side apply", async () => {
            admitted(
                await create([
                    clusterRole("lbl-top", {
                        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "probe/lbl": "true" } }] },
                    }),
                    binding("RoleBinding", "lbl-top", "governed", "lbl-top", sa("webapp", "governed")),
                    clusterRole("lbl-wild", { rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }),
                ]),
            );
            const label = "probe/lbl";
            denied(await kubectl("label", "clusterrole", "lbl-wild", `${label}=true`), /pko-stack-no-cluster-admin/);
            denied(
                await kubectl(
                    ...["patch", "clusterrole", "lbl-wild", "--type=json", "-p"],
                    JSON.stringify([{ op: "add", path: "/metadata/labels", value: { [label]: "true" } }]),
                ),
            );
            denied(
                await kubectl(
                    ...["patch", "clusterrole", "lbl-wild", "--type=merge", "-p"],
                    JSON.stringify({ metadata: { labels: { [label]: "true" } } }),
                ),
            );
            denied(
                await apply(
                    [
                        clusterRole("lbl-wild", {
                            metadata: { labels: { [label]: "true" } },
                            rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
                        }),
                    ],
                    "--server-side",
                    "--force-conflicts",
                ),
            );
        });
        for (const [what, selector] of [
            ["an empty selector", {}],
            ["matchExpressions DoesNotExist", { matchExpressions: [{ key: "probe/none", operator: "DoesNotExist" }] }],
            ["matchExpressions NotIn", { matchExpressions: [{ key: "probe/none", operator: "NotIn", values: ["x"] }] }],
            ["an empty matchLabels", { matchLabels: {} }],
        ] as const)
            it(`an aggregating role with ${what} (it picks cluster-admin) bound to a Stack's account, either order`, async () => {
                const n = what.replace(/[^a-z]/gi, "-").toLowerCase();
                const agg = clusterRole(`sel-${n}`, { aggregationRule: { clusterRoleSelectors: [selector] } });
                const bound = binding("RoleBinding", `sel-${n}`, "governed", `sel-${n}`, sa("webapp", "governed"));
                const first = await create([bound]);
                if (first.code === 0) denied(await create([agg]), /pko-stack-no-cluster-admin/);
                else {
                    denied(first);
                    assert.fail(`the binding to a role not there yet was refused: ${first.stderr}`);
                }
                const agg2 = clusterRole(`sel2-${n}`, { aggregationRule: { clusterRoleSelectors: [selector] } });
                admitted(await create([agg2]));
                denied(
                    await create([
                        binding("RoleBinding", `sel2-${n}`, "governed", `sel2-${n}`, sa("webapp", "governed")),
                    ]),
                    /pko-stack-no-cluster-admin/,
                );
            });
        it("an aggregating role selecting by matchExpressions Exists/In, fed a wildcard role", async () => {
            admitted(
                await create([
                    clusterRole("expr-top", {
                        aggregationRule: {
                            clusterRoleSelectors: [
                                { matchExpressions: [{ key: "probe/exists", operator: "Exists" }] },
                                { matchExpressions: [{ key: "probe/in", operator: "In", values: ["a", "b"] }] },
                            ],
                        },
                    }),
                    binding("RoleBinding", "expr-top", "governed", "expr-top", sa("webapp", "governed")),
                ]),
            );
            for (const labels of [{ "probe/exists": "" }, { "probe/in": "b" }])
                denied(
                    await create([
                        clusterRole(`expr-${Object.keys(labels)[0].split("/")[1]}`, {
                            metadata: { labels },
                            rules: [wildcard],
                        }),
                    ]),
                    /pko-stack-no-cluster-admin/,
                );
        });
        it("an aggregation chain of the cluster's own roles: leaf -> mid -> top, top bound to a Stack's account", async () => {
            admitted(
                await create([
                    clusterRole("chain-top", {
                        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "probe/top": "true" } }] },
                    }),
                    clusterRole("chain-mid", {
                        metadata: { labels: { "probe/top": "true" } },
                        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "probe/mid": "true" } }] },
                    }),
                    binding("RoleBinding", "chain", "governed", "chain-top", sa("webapp", "governed")),
                ]),
            );
            denied(
                await create([
                    clusterRole("chain-leaf", {
                        metadata: { labels: { "probe/mid": "true" } },
                        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
                    }),
                ]),
                /pko-stack-no-cluster-admin/,
            );
            // A leaf already there, then the middle role's selector changed to pick it.
            admitted(
                await create([
                    clusterRole("chain-leaf2", {
                        metadata: { labels: { "probe/other": "true" } },
                        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
                    }),
                ]),
            );
            denied(
                await kubectl(
                    ...["patch", "clusterrole", "chain-mid", "--type=json", "-p"],
                    JSON.stringify([
                        {
                            op: "add",
                            path: "/aggregationRule/clusterRoleSelectors/-",
                            value: { matchLabels: { "probe/other": "true" } },
                        },
                    ]),
                ),
                /pko-stack-no-cluster-admin/,
            );
        });
    });

    describe("class 3: every PKO object", () => {
        before(async () => {
            await server.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner, namespace: ws}\n");
        });
        const wsCases: [string, Doc][] = [
            ["privileged", podTemplate({ securityContext: { privileged: true } })],
            ["hostNetwork", podTemplate({}, { hostNetwork: true })],
            ["hostPID", podTemplate({}, { hostPID: true })],
            [
                "an init container escalating",
                podTemplate(
                    {},
                    { initContainers: [{ name: "i", securityContext: { allowPrivilegeEscalation: true } }] },
                ),
            ],
            ["SYS_ADMIN", podTemplate({ securityContext: { capabilities: { add: ["SYS_ADMIN"] } } })],
            ["a hostPath volume", podTemplate({}, { volumes: [{ name: "h", hostPath: { path: "/" } }] })],
            [
                "a Windows hostProcess container",
                podTemplate({ securityContext: { windowsOptions: { hostProcess: true } } }),
            ],
            [
                "a Windows hostProcess pod",
                podTemplate({}, { hostNetwork: false, securityContext: { windowsOptions: { hostProcess: true } } }),
            ],
            ["a literal token in env", { env: [{ name: "PULUMI_ACCESS_TOKEN", value: TOKEN }] }],
            [
                "a literal token in a container's env",
                podTemplate({ env: [{ name: "PULUMI_ACCESS_TOKEN", value: TOKEN }] }),
            ],
            [
                "a literal token in an init container's env",
                podTemplate(
                    {},
                    { initContainers: [{ name: "i", env: [{ name: "AWS_SECRET_ACCESS_KEY", value: "abc" }] }] },
                ),
            ],
            [
                "a literal secret stack config",
                { stacks: [{ name: "o/p/s", config: [{ key: "p:dbPassword", value: "hunter2", secret: true }] }] },
            ],
            [
                "a token-shaped object config value",
                { stacks: [{ name: "o/p/s", config: [{ key: "p:x", value: { nested: [TOKEN] } }] }] },
            ],
            ["a token in a container's args", podTemplate({ args: ["--token", TOKEN] })],
            [
                "a token in a container's command",
                podTemplate({ command: ["sh", "-c", `PULUMI_ACCESS_TOKEN=${TOKEN} pulumi up`] }),
            ],
            [
                "a token in a stack's secrets provider URL",
                { stacks: [{ name: "o/p/s", secretsProvider: `hashivault://x?token=${TOKEN}` }] },
            ],
            ["a token in the git URL", { git: { url: `https://x:${TOKEN}@github.com/acme/app`, ref: "0".repeat(40) } }],
        ];
        for (const [what, spec] of wsCases) {
            it(`a Workspace created with ${what}`, async () => {
                const name = what
                    .replace(/[^a-z]/gi, "-")
                    .toLowerCase()
                    .slice(0, 40);
                denied(await create([workspace(name, spec)]), /pko-workspace-program-objects/);
            });
        }
        it("a benign Workspace, then patched to hostNetwork (JSON), a token (merge), privileged (apply)", async () => {
            admitted(await create([workspace("patched", podTemplate({}))]));
            denied(
                await kubectl(
                    ...["patch", "workspace", "patched", "-n", "ws", "--type=json", "-p"],
                    JSON.stringify([{ op: "add", path: "/spec/podTemplate/spec/hostNetwork", value: true }]),
                ),
            );
            denied(
                await kubectl(
                    ...["patch", "workspace", "patched", "-n", "ws", "--type=merge", "-p"],
                    JSON.stringify({ spec: { env: [{ name: "PULUMI_ACCESS_TOKEN", value: TOKEN }] } }),
                ),
            );
            denied(
                await apply(
                    [workspace("patched", podTemplate({ securityContext: { privileged: true } }))],
                    "--server-side",
                    "--force-conflicts",
                ),
            );
        });
        it("a Workspace whose account is cluster-admin, either order", async () => {
            admitted(await create([workspace("admin-ws", {})]));
            denied(
                await create([
                    binding("ClusterRoleBinding", "runner-admin", undefined, "cluster-admin", sa("runner", "ws")),
                ]),
            );
        });
        const programCases: [string, Doc][] = [
            [
                "a token in a resource property",
                { resources: { b: { type: "aws:s3:Bucket", properties: { tags: { t: TOKEN } } } } },
            ],
            [
                "a password literal",
                { resources: { db: { type: "aws:rds:Instance", properties: { password: "hunter2" } } } },
            ],
            ["a token in outputs", { outputs: { o: TOKEN } }],
            ["a token in a variable", { variables: { v: TOKEN } }],
            ["a secret config default", { configuration: { dbPassword: { type: "String", default: "x" } } }],
            [
                "a token in a provider option",
                { resources: { b: { type: "aws:s3:Bucket", options: { provider: { token: TOKEN } } } } },
            ],
        ];
        for (const [what, program] of programCases) {
            it(`a Program with ${what}`, async () => {
                const name = what
                    .replace(/[^a-z]/gi, "-")
                    .toLowerCase()
                    .slice(0, 40);
                denied(
                    await create([
                        { apiVersion: "pulumi.com/v1", kind: "Program", metadata: { name, namespace: "ws" }, program },
                    ]),
                    /pko-workspace-program-objects/,
                );
            });
        }
        const update = (name: string, type: string) => ({
            apiVersion: "auto.pulumi.com/v1alpha1",
            kind: "Update",
            metadata: { name, namespace: "ws" },
            spec: { workspaceName: "w", stackName: "acme/app/production", type },
        });
        it("an Update destroying a production stack, created, or patched from a preview", async () => {
            denied(await create([update("destroy-prod", "destroy")]), /pko-update-prod-approved-path/);
            admitted(await create([update("preview-prod", "preview")]));
            denied(
                await kubectl(
                    ...["patch", "update", "preview-prod", "-n", "ws", "--type=merge", "-p"],
                    JSON.stringify({ spec: { type: "destroy" } }),
                ),
                /pko-update-prod-approved-path/,
            );
        });
        const stackCases: [string, Doc][] = [
            ["envRefs Literal", { envRefs: { PULUMI_ACCESS_TOKEN: { type: "Literal", literal: { value: TOKEN } } } }],
            ["spec.secrets", { secrets: { dbPassword: "hunter2" } }],
            ["gitAuth literal", { gitAuth: { accessToken: { type: "Literal", literal: { value: TOKEN } } } }],
            ["a token in projectRepo", { projectRepo: `https://x:${TOKEN}@github.com/acme/app` }],
            [
                "a privileged workspace",
                { workspaceTemplate: { spec: podTemplate({ securityContext: { privileged: true } }) } },
            ],
            [
                "a workspace env literal",
                { workspaceTemplate: { spec: { env: [{ name: "PULUMI_ACCESS_TOKEN", value: TOKEN }] } } },
            ],
            [
                "basic auth literal",
                {
                    gitAuth: {
                        basicAuth: {
                            userName: { type: "Literal", literal: { value: "u" } },
                            password: { type: "Literal", literal: { value: "hunter2" } },
                        },
                    },
                },
            ],
            [
                "an SSH key literal",
                {
                    gitAuth: {
                        sshAuth: {
                            sshPrivateKey: {
                                type: "Literal",
                                literal: {
                                    value: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
                                },
                            },
                        },
                    },
                },
            ],
            ["secretsRef Literal", { secretsRef: { dbPassword: { type: "Literal", literal: { value: "hunter2" } } } }],
            [
                "a GitHub App key literal",
                {
                    gitAuth: {
                        githubApp: {
                            appID: { type: "Literal", literal: { value: "1" } },
                            installationID: { type: "Literal", literal: { value: "2" } },
                            privateKey: { type: "Literal", literal: { value: "x" } },
                        },
                    },
                },
            ],
            ["an FS ref", { envRefs: { PULUMI_ACCESS_TOKEN: { type: "FS", filesystem: { path: "/etc/token" } } } }],
            ["an Env ref", { envRefs: { PULUMI_ACCESS_TOKEN: { type: "Env", env: { name: "TOKEN" } } } }],
            ["a literal secret config key", { config: { "aws:secretKey": "abc123" } }],
            ["a token-shaped config value", { config: { "app:x": TOKEN } }],
            ["a token in the backend URL", { backend: `https://user:${TOKEN}@api.example.com` }],
            [
                "a token in a workspace container's args",
                { workspaceTemplate: { spec: podTemplate({ args: ["--token", TOKEN] }) } },
            ],
            [
                "an update template that destroys",
                { stack: "acme/app/production", updateTemplate: { spec: { type: "destroy" } } },
            ],
        ];
        for (const version of ["v1", "v1alpha1"])
            for (const [what, spec] of stackCases) {
                it(`a Stack ${version} with ${what}`, async () => {
                    const name = `${version}-${what.replace(/[^a-z]/gi, "-").toLowerCase()}`.slice(0, 40);
                    const stack = {
                        apiVersion: `pulumi.com/${version}`,
                        kind: "Stack",
                        metadata: { name, namespace: "ws" },
                        spec: {
                            stack: "o/p/s",
                            projectRepo: "https://github.com/acme/app",
                            commit: "0".repeat(40),
                            ...spec,
                        },
                    };
                    denied(await create([stack]));
                });
            }
    });

    describe("class 2: objects that could stop the door, after it started", () => {
        const DEEP = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;
        /** `doc` as JSON text with the value `"__deep__"` nested 5,000 levels deep, in a file (kubectl sends it as is). */
        const deepFile = (name: string, doc: Doc) => {
            const file = path.join(dir, `${name}.json`);
            fs.writeFileSync(file, JSON.stringify(doc).replace('"__deep__"', DEEP));
            return file;
        };
        const stack = (name: string, spec: Doc = {}) => ({
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name, namespace: "attic" },
            spec: { stack: "o/p/s", projectRepo: "https://github.com/acme/app", commit: "0".repeat(40), ...spec },
        });
        it("a deep Workspace config value and a deep Program output under review are refused, named", async () => {
            const ws = workspace("deep-ws", { stacks: [{ name: "o/p/s", config: [{ key: "k", value: "__deep__" }] }] });
            ws.metadata.namespace = "attic";
            const wsPath = "/apis/auto.pulumi.com/v1alpha1/namespaces/attic/workspaces";
            denied(
                await kubectl("create", "--raw", wsPath, "-f", deepFile("deep-ws", ws)),
                /Workspace\/attic\/deep-ws[^]*pko-guard-unreadable-object/,
            );
            const prog = {
                apiVersion: "pulumi.com/v1",
                kind: "Program",
                metadata: { name: "deep-prog", namespace: "attic" },
            };
            denied(
                await kubectl(
                    ...["create", "--raw", "/apis/pulumi.com/v1/namespaces/attic/programs", "-f"],
                    deepFile("deep-prog", { ...prog, program: { outputs: { o: "__deep__" } } }),
                ),
                /Program\/attic\/deep-prog[^]*pko-guard-unreadable-object/,
            );
        });
        it("10,000 config keys and a 350 KB value of control and bidi characters are judged", async () => {
            const keys = Object.fromEntries(Array.from({ length: 10000 }, (_, i) => [`k${i}`, { value: "v" }]));
            admitted(await server.kubectl(["create", "-f", "-"], JSON.stringify(stack("many", { config: keys }))));
            const odd = { k: { value: "\u202e\u0000\u001b[31m".repeat(20000) } };
            admitted(await server.kubectl(["create", "-f", "-"], JSON.stringify(stack("odd", { config: odd }))));
            assert.strictEqual(hook!.child.exitCode, null);
        });
        it("values of every JSON type where the CRDs keep unknown fields get an answer, never an error", async () => {
            const odd = [null, 0, -1.5e308, true, [], [[[]]], {}, { "": { "\u0000": [null] } }, "\ud800", "${x}"];
            const answers = [];
            for (const [i, value] of odd.entries()) {
                answers.push(
                    await create([
                        workspace(`odd-ws-${i}`, { stacks: [{ name: "o/p/s", config: [{ key: "k", value }] }] }),
                        {
                            apiVersion: "pulumi.com/v1",
                            kind: "Program",
                            metadata: { name: `odd-prog-${i}`, namespace: "ws" },
                            program: {
                                configuration: { c: { type: "String", default: value } },
                                resources: {
                                    r: { type: "x:y:Z", properties: { p: value }, options: { provider: value } },
                                },
                                outputs: { o: value },
                            },
                        },
                    ]),
                );
            }
            for (const a of answers)
                assert.doesNotMatch(a.stderr, /failed calling webhook|Internal error|500/, a.stderr);
            assert.strictEqual(hook!.child.exitCode, null);
        });
        for (const [i, name] of [
            "x,metadata.name=y",
            "a,b",
            "a=b",
            "a!=b",
            "a\\b",
            "esc\u001b[2Jx",
            "nl\nx",
            "bidi\u202ex",
            "Upper ü",
        ].entries())
            it(`a wildcard ClusterRole named ${JSON.stringify(name)} bound to a Stack's account`, async () => {
                const role = clusterRole(name, { rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] });
                const made = await server.kubectl(["create", "-f", "-"], JSON.stringify(role));
                assert.strictEqual(made.code, 0, made.stderr);
                const b = await server.kubectl(
                    ["create", "-f", "-"],
                    JSON.stringify(binding("RoleBinding", `to-odd-${i}`, "governed", name, sa("webapp", "governed"))),
                );
                denied(b, /pko-stack-no-cluster-admin/);
                assert.doesNotMatch(b.stderr, /\u001b|\u202e/);
            });
        it("audit's output and reports name an oddly named binding escaped", async () => {
            // Admitted with a warning (rbac-no-cluster-admin-serviceaccount is advisory): no Stack runs as other/x.
            const odd = "odd\u001b[2J\u202e\nname";
            const made = await server.kubectl(
                ["create", "-f", "-"],
                JSON.stringify(binding("ClusterRoleBinding", odd, undefined, "cluster-admin", sa("x", "other"))),
            );
            assert.strictEqual(made.code, 0, made.stderr);
            assert.match(made.stderr, /Warning: rbac-no-cluster-admin-serviceaccount: /);
            assert.doesNotMatch(made.stderr, /[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
            const report = path.join(dir, "audit.json");
            const r = await exec(
                process.execPath,
                [CLI_ENTRY, "audit", "--kubeconfig", server.kubeconfig, "--report", `json=${report}`],
                { cwd: dir, env: process.env, timeoutMs: 300_000 },
            );
            assert.ok(r.code === 0 || r.code === 1, r.stderr);
            assert.match(r.stdout, /rbac-no-cluster-admin-serviceaccount/);
            assert.match(r.stdout, /odd\\u001b\[2J/);
            assert.doesNotMatch(r.stdout + r.stderr, /[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
            assert.ok(JSON.parse(fs.readFileSync(report, "utf8")));
        });
        // The status subresource is never sent to the webhook, so a Stack 5,000 levels deep reaches its cache
        // by a watch event, after it started.
        it("a Stack whose status becomes 5,000 levels deep: skipped and named, its namespace's bindings refused", async () => {
            admitted(await create([stack("deep-status")]));
            const got = await kubectl("get", "stack", "deep-status", "-n", "attic", "-o", "json");
            const status = "/apis/pulumi.com/v1/namespaces/attic/stacks/deep-status/status";
            const file = deepFile("deep-status", { ...JSON.parse(got.stdout), status: { outputs: "__deep__" } });
            admitted(await kubectl("replace", "--raw", status, "-f", file));
            await until("the deep Stack logged", () =>
                /"event":"cache.unreadable","kind":"Stack","namespace":"attic","name":"deep-status"/.test(logs),
            );
            assert.strictEqual(hook!.child.exitCode, null);
            denied(
                await create([binding("RoleBinding", "attic-admin", "attic", "cluster-admin", sa("default", "attic"))]),
                /pko-guard-cluster-state: [^]*Stack\/attic\/deep-status/,
            );
            denied(
                await create([
                    binding("ClusterRoleBinding", "after-deep", undefined, "cluster-admin", sa("webapp", "governed")),
                ]),
                /pko-stack-no-cluster-admin/,
            );
            admitted(await server.kubectl(["create", "serviceaccount", "fine", "-n", "other"]));
        });
    });
});
