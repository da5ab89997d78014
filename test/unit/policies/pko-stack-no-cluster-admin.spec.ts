import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-no-cluster-admin";
import { rule as saAdmin } from "../../../policies/rbac-no-cluster-admin-serviceaccount";
import {
    ExpectedFinding,
    TestResource,
    UNKNOWN_WIRE,
    assertFindings,
    goodSpec,
    runStackPolicy,
    stackResource,
} from "../../support/helpers";

const CRB = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding";
const RB = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding";
const CR = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole";
const ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role";

function binding(
    type: string,
    name: string,
    role: { kind: string; name: unknown },
    subjects: unknown,
    namespace?: string,
): TestResource {
    return {
        type,
        name,
        props: {
            metadata: { name, ...(namespace ? { namespace } : {}) },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", ...role },
            subjects,
        },
    };
}
const sa = (name: unknown, namespace: unknown = "pulumi") => ({ kind: "ServiceAccount", name, namespace });
const admin = { kind: "ClusterRole", name: "cluster-admin" };
const stack = (spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
    stackResource("app", goodSpec({ serviceAccountName: "deployer", ...spec }), metadata);

function check(resources: TestResource[]) {
    return runStackPolicy(policy, resources);
}
/** The one finding a program should produce, on `resource`. */
const one = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource, message },
];

describe("pko-stack-no-cluster-admin", () => {
    it("passes the auth-delegator binding and least-privilege roles", () => {
        assert.deepStrictEqual(
            check([
                stack(),
                binding(CRB, "delegator", { kind: "ClusterRole", name: "system:auth-delegator" }, [sa("deployer")]),
            ]),
            [],
        );
    });

    it("flags cluster-admin bound to the Stack's account, on the binding, naming the Stack", () => {
        const r = check([stack(), binding(CRB, "admin", admin, [sa("deployer")])]);
        assertFindings(r, one("admin", /grants cluster-admin to ServiceAccount pulumi\/deployer, which Stack "app"/));
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB + "::admin");
    });

    it("ignores cluster-admin on other accounts and other namespaces", () => {
        assert.deepStrictEqual(check([stack(), binding(CRB, "a", admin, [sa("other")])]), []);
        assert.deepStrictEqual(check([stack(), binding(CRB, "a", admin, [sa("deployer", "elsewhere")])]), []);
    });

    it("uses the implicit default account and the workspace template's account", () => {
        const noSa = stackResource("app", goodSpec());
        assertFindings(
            check([noSa, binding(CRB, "a", admin, [sa("default")])]),
            one("a", /grants cluster-admin to ServiceAccount pulumi\/default/),
        );
        const ws = stack({ workspaceTemplate: { spec: { serviceAccountName: "ws" } } });
        assertFindings(check([ws, binding(CRB, "a", admin, [sa("ws")])]), one("a", /ServiceAccount pulumi\/ws/));
        assert.strictEqual(check([ws, binding(CRB, "a", admin, [sa("deployer")])]).length, 0);
    });

    it("follows PKO's merge order: the workspace pod template's serviceAccountName is merged last and wins", () => {
        const pod = (podSpec: unknown) =>
            stack({ workspaceTemplate: { spec: { serviceAccountName: "ws", podTemplate: { spec: podSpec } } } });
        const r = check([pod({ serviceAccountName: "root-sa" }), binding(CRB, "a", admin, [sa("root-sa")])]);
        assertFindings(r, one("a", /runs as \(spec\.workspaceTemplate\.spec\.podTemplate\.spec\.serviceAccountName\)/));
        assert.strictEqual(
            check([pod({ serviceAccountName: "root-sa" }), binding(CRB, "a", admin, [sa("ws")])]).length,
            0,
        );
        assert.strictEqual(
            check([pod({ serviceAccountName: "root-sa" }), binding(CRB, "a", admin, [sa("deployer")])]).length,
            0,
        );
        // The deprecated serviceAccount alias never wins over serviceAccountName (always set: the Workspace CRD defaults it).
        assert.strictEqual(
            check([pod({ serviceAccount: "root-sa" }), binding(CRB, "a", admin, [sa("root-sa")])]).length,
            0,
        );
        assertFindings(
            check([pod({ serviceAccount: "root-sa" }), binding(CRB, "a", admin, [sa("ws")])]),
            one("a", /ServiceAccount pulumi\/ws/),
        );
        // Unknown during preview where it decides: fail closed.
        assertFindings(
            check([pod({ serviceAccountName: UNKNOWN_WIRE }), binding(CRB, "a", admin, [sa("other")])]),
            one("a", /may grant/),
        );
        assertFindings(check([pod(UNKNOWN_WIRE), binding(CRB, "a", admin, [sa("other")])]), one("a", /may grant/));
    });

    it("uses the default namespace for a Stack without one", () => {
        const r = stackResource("app", goodSpec(), { namespace: undefined });
        assertFindings(
            check([r, binding(CRB, "a", admin, [sa("default", "default")])]),
            one("a", /ServiceAccount default\/default/),
        );
    });

    it("counts groups and the service-account user form", () => {
        for (const subject of [
            { kind: "Group", name: "system:serviceaccounts" },
            { kind: "Group", name: "system:serviceaccounts:pulumi" },
            { kind: "Group", name: "system:authenticated" },
            { kind: "User", name: "system:serviceaccount:pulumi:deployer" },
        ]) {
            assertFindings(check([stack(), binding(CRB, "a", admin, [subject])]), one("a", /grants cluster-admin/));
        }
        assert.strictEqual(
            check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: "system:serviceaccounts:other" }])])
                .length,
            0,
        );
        assert.strictEqual(
            check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: "system:unauthenticated" }])]).length,
            0,
        );
        // No service account is ever a member of system:masters: binding it grants the Stack nothing.
        assert.strictEqual(
            check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: "system:masters" }])]).length,
            0,
        );
    });

    it("counts a program's wildcard ClusterRole and Role, not narrower ones", () => {
        const wild = {
            type: CR,
            name: "all",
            props: { metadata: { name: "all" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] },
        };
        const narrow = {
            type: CR,
            name: "some",
            props: {
                metadata: { name: "some" },
                rules: [
                    { apiGroups: ["*"], resources: ["pods", "configmaps"], verbs: ["get", "list", "watch", "delete"] },
                ],
            },
        };
        assertFindings(
            check([stack(), wild, binding(CRB, "a", { kind: "ClusterRole", name: "all" }, [sa("deployer")])]),
            one("a", /grants ClusterRole "all" \(wildcard/),
        );
        assert.strictEqual(
            check([stack(), narrow, binding(CRB, "a", { kind: "ClusterRole", name: "some" }, [sa("deployer")])]).length,
            0,
        );
        const role = {
            type: ROLE,
            name: "r",
            props: { metadata: { name: "r", namespace: "pulumi" }, rules: [{ resources: ["*"], verbs: ["*"] }] },
        };
        assertFindings(
            check([
                stack(),
                role,
                binding(RB, "b", { kind: "Role", name: "r" }, [{ kind: "ServiceAccount", name: "deployer" }], "pulumi"),
            ]),
            one("b", /grants Role "r"/),
        );
        assert.strictEqual(
            check([stack(), role, binding(RB, "b", { kind: "Role", name: "r" }, [sa("deployer")], "other")]).length,
            0,
        );
    });

    it("reports once per Stack a binding covers", () => {
        const s2 = stackResource("app2", goodSpec({ serviceAccountName: "deployer2" }));
        assertFindings(
            check([stack(), s2, binding(CRB, "a", admin, [{ kind: "Group", name: "system:serviceaccounts" }])]),
            [...one("a", /which Stack "app"/), ...one("a", /which Stack "app2"/)],
        );
    });

    it("fails closed on unknown role, subjects or service account", () => {
        assertFindings(
            check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: UNKNOWN_WIRE }, [sa("deployer")])]),
            one("a", /may grant.*fails closed/),
        );
        assertFindings(check([stack(), binding(CRB, "a", admin, UNKNOWN_WIRE)]), one("a", /fails closed/));
        assertFindings(check([stack(), binding(CRB, "a", admin, [sa(UNKNOWN_WIRE)])]), one("a", /fails closed/));
        assertFindings(
            check([stack({ serviceAccountName: UNKNOWN_WIRE }), binding(CRB, "a", admin, [sa("x")])]),
            one("a", /fails closed/),
        );
        // Unknown but certainly not admin: nothing to report.
        assert.strictEqual(
            check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: "view" }, UNKNOWN_WIRE)]).length,
            0,
        );
    });
});

const CRB_PATCH = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBindingPatch";
const RB_PATCH = "kubernetes:rbac.authorization.k8s.io/v1:RoleBindingPatch";
const CR_PATCH = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch";
const WILD = [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];
const NARROW = [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] }];

function clusterRole(
    name: string,
    opts: { labels?: unknown; rules?: unknown; selectors?: unknown; type?: string } = {},
): TestResource {
    return {
        type: opts.type ?? CR,
        name,
        props: {
            metadata: { name, ...(opts.labels !== undefined ? { labels: opts.labels } : {}) },
            ...(opts.rules !== undefined ? { rules: opts.rules } : {}),
            ...(opts.selectors !== undefined ? { aggregationRule: { clusterRoleSelectors: opts.selectors } } : {}),
        },
    };
}
const bindAgg = (role = "agg") => binding(CRB, "agg-binding", { kind: "ClusterRole", name: role }, [sa("deployer")]);
const AGG_LABEL = { "acme.io/aggregate-to-agg": "true" };

describe("pko-stack-no-cluster-admin: aggregated ClusterRoles", () => {
    // Known good: the aggregated role picks a narrow role only.
    const good = () => [
        stack(),
        clusterRole("agg", { selectors: [{ matchLabels: AGG_LABEL }] }),
        clusterRole("part", { labels: AGG_LABEL, rules: NARROW }),
        bindAgg(),
    ];

    it("passes an aggregation of narrow roles", () => {
        assert.deepStrictEqual(check(good()), []);
    });

    it("flags an aggregation that picks a wildcard role, naming it", () => {
        const r = check([...good(), clusterRole("all", { labels: AGG_LABEL, rules: WILD })]);
        assertFindings(
            r,
            one("agg-binding", /grants ClusterRole "agg" \(wildcard by aggregation: it aggregates ClusterRole "all"/),
        );
    });

    it("does not pick a wildcard role whose labels do not match", () => {
        assert.deepStrictEqual(
            check([...good(), clusterRole("all", { labels: { "acme.io/aggregate-to-agg": "false" }, rules: WILD })]),
            [],
        );
        assert.deepStrictEqual(check([...good(), clusterRole("all", { rules: WILD })]), []);
    });

    it("ANDs matchLabels and matchExpressions, and ORs selectors", () => {
        const wild = clusterRole("all", { labels: { tier: "ops", team: "a" }, rules: WILD });
        const agg = (selectors: unknown) => [stack(), clusterRole("agg", { selectors }), wild, bindAgg()];
        const n = (selectors: unknown) => check(agg(selectors)).length;
        assert.strictEqual(
            n([
                {
                    matchLabels: { tier: "ops" },
                    matchExpressions: [{ key: "team", operator: "In", values: ["a", "b"] }],
                },
            ]),
            1,
        );
        assert.strictEqual(
            n([{ matchLabels: { tier: "ops" }, matchExpressions: [{ key: "team", operator: "In", values: ["b"] }] }]),
            0,
        );
        assert.strictEqual(n([{ matchExpressions: [{ key: "team", operator: "NotIn", values: ["b"] }] }]), 1);
        assert.strictEqual(
            n([
                { matchLabels: { tier: "dev" } },
                { matchLabels: { tier: "ops" }, matchExpressions: [{ key: "team", operator: "NotIn", values: ["a"] }] },
            ]),
            0,
        );
        // NotIn also selects roles without the label, the built-in cluster-admin among them.
        assertFindings(
            check(agg([{ matchExpressions: [{ key: "team", operator: "NotIn", values: ["a"] }] }])),
            one("agg-binding", /aggregates ClusterRole "cluster-admin"/),
        );
        assert.strictEqual(
            n([{ matchLabels: { tier: "dev" } }, { matchExpressions: [{ key: "tier", operator: "Exists" }] }]),
            1,
        );
        assert.strictEqual(
            n([{ matchLabels: { tier: "ops" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }]),
            0,
        );
    });

    it("reaches the built-in cluster-admin: an empty selector, or one that only excludes, selects every role", () => {
        // cluster-admin is a ClusterRole of every cluster, labelled kubernetes.io/bootstrapping=rbac-defaults.
        for (const selectors of [
            [{}],
            [{ matchExpressions: [{ key: "acme.io/team", operator: "DoesNotExist" }] }],
            [{ matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } }],
        ]) {
            const r = check([stack(), clusterRole("agg", { selectors }), bindAgg()]);
            assertFindings(r, one("agg-binding", /aggregates ClusterRole "cluster-admin"/));
        }
    });

    it("resolves built-in admin/edit/view: a wildcard role labelled aggregate-to-view makes all three wildcard", () => {
        const wild = clusterRole("crd-everything", {
            labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" },
            rules: WILD,
        });
        for (const role of ["view", "edit", "admin"]) {
            assertFindings(
                check([stack(), wild, bindAgg(role)]),
                one("agg-binding", /aggregates ClusterRole "crd-everything"/),
            );
            // Bound cluster-wide, edit and admin create pods and impersonate accounts in kube-system (an escalation path).
            assertFindings(
                check([stack(), bindAgg(role)]),
                role === "view"
                    ? []
                    : one(
                          "agg-binding",
                          /equivalent to cluster-admin: it can create pods and impersonate service accounts/,
                      ),
            );
            assertFindings(
                check([
                    stack(),
                    wild,
                    binding(RB, "b", { kind: "ClusterRole", name: role }, [sa("deployer")], "pulumi"),
                ]),
                one("b", /aggregates ClusterRole "crd-everything"/),
            );
            assert.strictEqual(
                check([stack(), binding(RB, "b", { kind: "ClusterRole", name: role }, [sa("deployer")], "pulumi")])
                    .length,
                0,
                role,
            );
        }
        // A program role named edit replaces the built-in one.
        assert.strictEqual(check([stack(), wild, clusterRole("edit", { rules: NARROW }), bindAgg("edit")]).length, 0);
    });

    it("follows a program selector on the built-in aggregate-to-admin label through edit and view", () => {
        const agg = clusterRole("agg", {
            selectors: [{ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } }],
        });
        // Aggregating built-in edit (labelled aggregate-to-admin) bound cluster-wide: edit's pods and impersonation are an escalation.
        assertFindings(
            check([stack(), agg, bindAgg()]),
            one(
                "agg-binding",
                /equivalent to cluster-admin: it can create pods and impersonate service accounts cluster-wide through ClusterRole "edit"/,
            ),
        );
        assert.deepStrictEqual(
            check([stack(), agg, binding(RB, "b", { kind: "ClusterRole", name: "agg" }, [sa("deployer")], "pulumi")]),
            [],
        );
        const wild = clusterRole("crd-all", {
            labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" },
            rules: WILD,
        });
        assertFindings(check([stack(), agg, wild, bindAgg()]), one("agg-binding", /aggregates ClusterRole "crd-all"/));
    });

    it("fails closed on a selector the controller cannot use (unknown operator)", () => {
        const agg = clusterRole("agg", {
            selectors: [{ matchExpressions: [{ key: "tier", operator: "Matches", values: ["x"] }] }],
        });
        assertFindings(
            check([stack(), agg, clusterRole("all", { labels: { tier: "x" }, rules: WILD }), bindAgg()]),
            one("agg-binding", /fails closed/),
        );
    });

    it("resolves transitively and survives cycles", () => {
        const top = clusterRole("agg", {
            labels: { "acme.io/aggregate-to-mid": "true" },
            selectors: [{ matchLabels: { "acme.io/aggregate-to-agg": "true" } }],
        });
        const mid = clusterRole("mid", {
            labels: AGG_LABEL,
            selectors: [{ matchLabels: { "acme.io/aggregate-to-mid": "true" } }],
        });
        assert.deepStrictEqual(check([stack(), top, mid, bindAgg()]), []);
        const leaf = clusterRole("leaf", { labels: { "acme.io/aggregate-to-mid": "true" }, rules: WILD });
        const r = check([stack(), top, mid, leaf, bindAgg()]);
        assertFindings(r, one("agg-binding", /aggregates ClusterRole "leaf"/));
    });

    it("skips the aggregating role's own name, as the controller does, but keeps its own rules", () => {
        // Rules the controller has not yet replaced still apply: counted.
        assertFindings(
            check([
                stack(),
                clusterRole("agg", { labels: AGG_LABEL, selectors: [{ matchLabels: AGG_LABEL }], rules: WILD }),
                bindAgg(),
            ]),
            one("agg-binding", /grants ClusterRole "agg" \(wildcard/),
        );
    });

    it("fails closed on unknown selectors or labels, and not when the unknown cannot matter", () => {
        const wild = clusterRole("all", { labels: AGG_LABEL, rules: WILD });
        const fc = (rs: TestResource[]) => {
            const r = check(rs);
            assertFindings(
                r,
                one(
                    "agg-binding",
                    /may grant ClusterRole "agg" .*fails closed: its role's rules, labels or aggregation selectors are unknown/,
                ),
            );
        };
        fc([stack(), clusterRole("agg", { selectors: UNKNOWN_WIRE }), wild, bindAgg()]);
        fc([stack(), clusterRole("agg", { selectors: [UNKNOWN_WIRE] }), wild, bindAgg()]);
        fc([
            stack(),
            clusterRole("agg", { selectors: [{ matchLabels: { "acme.io/aggregate-to-agg": UNKNOWN_WIRE } }] }),
            wild,
            bindAgg(),
        ]);
        fc([
            stack(),
            clusterRole("agg", {
                selectors: [{ matchExpressions: [{ key: "tier", operator: "In", values: UNKNOWN_WIRE }] }],
            }),
            clusterRole("all", { labels: { tier: "x" }, rules: WILD }),
            bindAgg(),
        ]);
        fc([
            stack(),
            clusterRole("agg", { selectors: [{ matchLabels: AGG_LABEL }] }),
            clusterRole("all", { labels: UNKNOWN_WIRE, rules: WILD }),
            bindAgg(),
        ]);
        fc([
            stack(),
            clusterRole("agg", { selectors: [{ matchLabels: AGG_LABEL }] }),
            clusterRole("all", { labels: { "acme.io/aggregate-to-agg": UNKNOWN_WIRE }, rules: WILD }),
            bindAgg(),
        ]);
        // An unknown label on a narrow role cannot make the aggregation wildcard.
        assert.deepStrictEqual(
            check([
                stack(),
                clusterRole("agg", { selectors: [{ matchLabels: AGG_LABEL }] }),
                clusterRole("part", { labels: UNKNOWN_WIRE, rules: NARROW }),
                bindAgg(),
            ]),
            [],
        );
    });
});

describe("pko-stack-no-cluster-admin: names that come from other resources", () => {
    it("fails closed on a subject whose name is missing or unknown, saying it could not be resolved", () => {
        for (const subject of [
            { kind: "ServiceAccount", namespace: "pulumi" },
            sa(UNKNOWN_WIRE),
            { kind: "ServiceAccount", name: "", namespace: "pulumi" },
        ]) {
            const r = check([stack(), binding(CRB, "a", admin, [subject])]);
            assertFindings(
                r,
                one(
                    "a",
                    /fails closed: its subject .* could not be resolved \(its name, kind or namespace is missing, or unknown during preview\)/,
                ),
            );
        }
    });

    it("speaks of a preview only in one: check's manifests and the cluster's objects say missing and set", () => {
        // The run is told by the URN: a program's (a preview), check's manifests, the cluster's (admission, audit).
        const nameless = binding(CRB, "a", admin, [{ kind: "ServiceAccount", namespace: "pulumi" }]);
        const program = check([stack(), nameless]);
        assert.strictEqual(program.length, 1);
        assert.match(
            program[0].message,
            /is missing, or unknown during preview\)\. Make them known at preview time or/,
        );
        for (const prefix of ["urn:pulumi:check::manifests::", "urn:pulumi:cluster::live::"]) {
            const r = check([
                { ...stack(), urn: `${prefix}kubernetes:pulumi.com/v1:Stack::Stack/pulumi/app` },
                { ...nameless, urn: `${prefix}${CRB}::ClusterRoleBinding/a` },
            ]);
            assert.strictEqual(r.length, 1, prefix);
            assert.match(r[0].message, /namespace is missing\)\. Set them or bind a least-privilege role\.$/);
            assert.doesNotMatch(r[0].message, /preview/);
        }
    });

    it("never lets a Stack with a missing subject name 'run as default' unnoticed", () => {
        const noSa = stackResource("app", goodSpec());
        assertFindings(
            check([noSa, binding(CRB, "a", admin, [{ kind: "ServiceAccount", namespace: "pulumi" }])]),
            one("a", /fails closed/),
        );
    });

    it("fails closed on a ClusterRoleBinding ServiceAccount subject whose namespace is unknown, when the name could be the Stack's", () => {
        // One with no namespace at all is invalid (the API server rejects it): it grants nothing, and
        // rbac-no-cluster-admin-serviceaccount reports it as invalid, not as a possible grant.
        const rejected = [stack(), binding(CRB, "a", admin, [{ kind: "ServiceAccount", name: "deployer" }])];
        assert.deepStrictEqual(check(rejected), []);
        assertFindings(runStackPolicy(saAdmin, rejected), [
            {
                policy: saAdmin.name,
                level: "advisory",
                resource: "a",
                message:
                    /^ClusterRoleBinding "a" is invalid: its subject ServiceAccount deployer \(subjects\[0\]\) is a ServiceAccount with no namespace, which the API server rejects in a ClusterRoleBinding, so the binding is never applied and grants cluster-admin to nobody; set subjects\[0\]\.namespace/,
            },
        ]);
        assert.ok(!runStackPolicy(saAdmin, rejected)[0].message.includes("preview"));
        assertFindings(
            check([stack(), binding(CRB, "a", admin, [sa("deployer", UNKNOWN_WIRE)])]),
            one("a", /fails closed/),
        );
        assert.strictEqual(
            check([stack(), binding(CRB, "a", admin, [{ kind: "ServiceAccount", name: "other" }])]).length,
            0,
        );
    });

    it("fails closed on a missing subject kind or a Group with an unknown name", () => {
        assertFindings(
            check([stack(), binding(CRB, "a", admin, [{ name: "deployer", namespace: "pulumi" }])]),
            one("a", /fails closed/),
        );
        assertFindings(
            check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: UNKNOWN_WIRE }])]),
            one("a", /fails closed/),
        );
    });

    it("does not report an unresolved subject another namespace rules out, or bound to a least-privilege role", () => {
        assert.deepStrictEqual(check([stack(), binding(CRB, "a", admin, [sa(UNKNOWN_WIRE, "kube-system")])]), []);
        assert.deepStrictEqual(
            check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: "view" }, [sa(UNKNOWN_WIRE)])]),
            [],
        );
        assert.deepStrictEqual(
            check([
                stack(),
                binding(CRB, "a", { kind: "ClusterRole", name: "view" }, [
                    { kind: "ServiceAccount", namespace: "pulumi" },
                ]),
            ]),
            [],
        );
    });

    it("does not report a Stack whose account is unknown when no admin binding exists", () => {
        assert.deepStrictEqual(
            check([
                stack({ serviceAccountName: UNKNOWN_WIRE }),
                binding(CRB, "a", { kind: "ClusterRole", name: "view" }, [sa("x")]),
            ]),
            [],
        );
    });

    it("fails closed when both sides are unknown (the same output cannot be linked), naming the Stack's account", () => {
        const r = check([stack({ serviceAccountName: UNKNOWN_WIRE }), binding(CRB, "a", admin, [sa(UNKNOWN_WIRE)])]);
        assertFindings(r, one("a", /ServiceAccount pulumi\/<unknown>/));
    });

    it("links by name once the name is known (a real preview assigns autonamed accounts' names)", () => {
        const s = stack({ serviceAccountName: "deployer-1a2b3c4d" });
        const r = check([s, binding(CRB, "a", admin, [sa("deployer-1a2b3c4d")])]);
        assertFindings(r, one("a", /grants cluster-admin to ServiceAccount pulumi\/deployer-1a2b3c4d/));
        assert.deepStrictEqual(check([s, binding(CRB, "a", admin, [sa("deployer-9z8y7x6w")])]), []);
    });

    it("fails closed on a role reference whose name is missing (an autonamed role under mocks), and on a role with a missing name", () => {
        assertFindings(
            check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: undefined }, [sa("deployer")])]),
            one("a", /fails closed/),
        );
        const nameless = { type: CR, name: "wild", props: { metadata: {}, rules: WILD } };
        assertFindings(
            check([stack(), nameless, binding(CRB, "a", { kind: "ClusterRole", name: "anything" }, [sa("deployer")])]),
            one("a", /fails closed/),
        );
    });
});

describe("pko-stack-no-cluster-admin: server-side-apply patches", () => {
    const viewers = () => binding(CRB, "viewers", { kind: "ClusterRole", name: "view" }, [sa("deployer")]);
    const patch = (type: string, name: string, props: Record<string, unknown>): TestResource => ({ type, name, props });

    it("passes a patch that only labels a least-privilege binding", () => {
        assert.deepStrictEqual(
            check([
                stack(),
                viewers(),
                patch(CRB_PATCH, "p", { metadata: { name: "viewers", labels: { team: "ops" } } }),
            ]),
            [],
        );
    });

    it("flags a patch that adds the Stack's account to a declared cluster-admin binding, on the patch", () => {
        const ops = binding(CRB, "ops", admin, [{ kind: "User", name: "alice" }]);
        const r = check([
            stack(),
            ops,
            patch(CRB_PATCH, "p", {
                metadata: { name: "ops" },
                subjects: [{ kind: "User", name: "alice" }, sa("deployer")],
            }),
        ]);
        assertFindings(
            r,
            one(
                "p",
                /ClusterRoleBindingPatch "p" \(patching ClusterRoleBinding "ops" of this program\) grants cluster-admin/,
            ),
        );
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB_PATCH + "::p");
    });

    it("judges subjects as an atomic list: a patch that replaces them removes what the target listed", () => {
        const ops = binding(CRB, "ops", admin, [{ kind: "User", name: "alice" }]);
        // The target does not cover the Stack; neither does the patched object.
        assert.deepStrictEqual(
            check([
                stack(),
                ops,
                patch(CRB_PATCH, "p", { metadata: { name: "ops" }, subjects: [{ kind: "User", name: "bob" }] }),
            ]),
            [],
        );
    });

    it("does not report twice what the target already grants", () => {
        const ops = binding(CRB, "ops", admin, [sa("deployer")]);
        const r = check([stack(), ops, patch(CRB_PATCH, "p", { metadata: { name: "ops", labels: { a: "b" } } })]);
        assertFindings(r, one("ops", /grants cluster-admin/));
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB + "::ops");
    });

    it("judges a patch of a binding the program does not declare as it stands", () => {
        assertFindings(
            check([
                stack(),
                patch(CRB_PATCH, "p", { metadata: { name: "legacy" }, roleRef: admin, subjects: [sa("deployer")] }),
            ]),
            one("p", /grants cluster-admin/),
        );
        assert.deepStrictEqual(
            check([
                stack(),
                patch(CRB_PATCH, "p", {
                    metadata: { name: "legacy" },
                    roleRef: { kind: "ClusterRole", name: "view" },
                    subjects: [sa("deployer")],
                }),
            ]),
            [],
        );
        // Subjects not set: the patch grants nobody anything new.
        assert.deepStrictEqual(
            check([
                stack(),
                patch(CRB_PATCH, "p", { metadata: { name: "legacy", labels: { a: "b" } }, roleRef: admin }),
            ]),
            [],
        );
    });

    it("fails closed on a patch that adds subjects to an undeclared binding without its roleRef", () => {
        const r = check([
            stack(),
            patch(RB_PATCH, "p", { metadata: { name: "team", namespace: "pulumi" }, subjects: [sa("deployer")] }),
        ]);
        assertFindings(
            r,
            one(
                "p",
                /RoleBindingPatch "p" \(patching RoleBinding "team", which this program does not declare\) may grant .*fails closed: it sets subjects of a binding this program does not declare without its roleRef/,
            ),
        );
    });

    it("joins a RoleBinding patch by namespace too", () => {
        const rb = binding(RB, "team", admin, [{ kind: "User", name: "alice" }], "pulumi");
        const p = (namespace: string) =>
            patch(RB_PATCH, "p", { metadata: { name: "team", namespace }, subjects: [sa("deployer")] });
        assertFindings(check([stack(), rb, p("pulumi")]), one("p", /grants cluster-admin/));
        // Another namespace: an undeclared binding, whose role the program cannot see.
        assertFindings(check([stack(), rb, p("other")]), one("p", /fails closed/));
    });

    it("judges a role as patched: rules made wildcard count, reported on the binding, naming the patch", () => {
        const role = clusterRole("deploy", { rules: NARROW });
        const b = binding(CRB, "deploy-binding", { kind: "ClusterRole", name: "deploy" }, [sa("deployer")]);
        assert.deepStrictEqual(check([stack(), role, b]), []);
        const r = check([stack(), role, b, clusterRole("deploy", { type: CR_PATCH, rules: WILD })]);
        assertFindings(r, one("deploy-binding", /as patched by "deploy"/));
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB + "::deploy-binding");
        // A patch of a role the program does not declare, with wildcard rules.
        assertFindings(
            check([stack(), b, clusterRole("deploy", { type: CR_PATCH, rules: WILD })]),
            one("deploy-binding", /grants ClusterRole "deploy" \(wildcard/),
        );
        // A patch of an undeclared role that sets no rules adds none the program knows of.
        assert.deepStrictEqual(check([stack(), b, clusterRole("deploy", { type: CR_PATCH, labels: { a: "b" } })]), []);
    });

    it("lets a patch's labels bring a role into an aggregation, and its selectors pick roles", () => {
        const agg = clusterRole("agg", { selectors: [{ matchLabels: AGG_LABEL }] });
        const wild = clusterRole("all", { rules: WILD });
        assert.deepStrictEqual(check([stack(), agg, wild, bindAgg()]), []);
        assertFindings(
            check([stack(), agg, wild, bindAgg(), clusterRole("all", { type: CR_PATCH, labels: AGG_LABEL })]),
            one("agg-binding", /aggregates ClusterRole "all"/),
        );
        const plain = clusterRole("agg", { rules: NARROW });
        assertFindings(
            check([
                stack(),
                plain,
                clusterRole("all", { labels: AGG_LABEL, rules: WILD }),
                bindAgg(),
                clusterRole("agg", { type: CR_PATCH, selectors: [{ matchLabels: AGG_LABEL }] }),
            ]),
            one("agg-binding", /aggregates ClusterRole "all"/),
        );
    });

    it("treats the other labels of an undeclared patched role as unknown when a selector reads them", () => {
        const agg = clusterRole("agg", {
            selectors: [
                {
                    matchExpressions: [
                        { key: "team", operator: "DoesNotExist" },
                        { key: "tier", operator: "In", values: ["x"] },
                    ],
                },
            ],
        });
        const r = check([
            stack(),
            agg,
            bindAgg(),
            clusterRole("ext", { type: CR_PATCH, labels: { tier: "x" }, rules: WILD }),
        ]);
        assertFindings(r, one("agg-binding", /fails closed/));
    });

    it("fails closed on a patch whose merged subjects are unknown", () => {
        const ops = binding(CRB, "ops", admin, [{ kind: "User", name: "alice" }]);
        assertFindings(
            check([stack(), ops, patch(CRB_PATCH, "p", { metadata: { name: "ops" }, subjects: UNKNOWN_WIRE })]),
            one("p", /fails closed: its subjects are unknown/),
        );
    });
});

describe("pko-stack-no-cluster-admin: effective permissions", () => {
    const role = (name: string, rules: unknown, type = CR, namespace?: string): TestResource => ({
        type,
        name,
        props: { metadata: { name, ...(namespace ? { namespace } : {}) }, rules },
    });
    const bind = (name: string, kind = CRB, namespace?: string) =>
        binding(
            kind,
            `${name}-binding`,
            { kind: kind === CRB || name.startsWith("c") ? "ClusterRole" : "Role", name },
            [sa("deployer")],
            namespace,
        );
    const n = (rules: unknown, kind = CRB, namespace?: string) =>
        check([stack(), role("c", rules, kind === CRB ? CR : CR), bind("c", kind, namespace)]);

    it("every verb listed on * resources is *, also spread over rules", () => {
        const every = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
        assertFindings(
            n([{ apiGroups: ["*"], resources: ["*"], verbs: every }]),
            one("c-binding", /grants ClusterRole "c" \(wildcard: \* verbs on \* resources\)/),
        );
        assertFindings(
            n([
                { apiGroups: ["*"], resources: ["*"], verbs: every.slice(0, 4) },
                { apiGroups: ["*"], resources: ["*"], verbs: every.slice(4) },
            ]),
            one("c-binding", /grants ClusterRole "c" \(wildcard: \* verbs on \* resources\)/),
        );
        // Reading every resource of a group is not every verb (reading every group includes Secrets: an escalation path).
        assert.strictEqual(
            n([{ apiGroups: ["apps", "batch"], resources: ["*"], verbs: ["get", "list", "watch"] }]).length,
            0,
        );
        // Named objects only: never every object.
        assert.strictEqual(n([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"], resourceNames: ["x"] }]).length, 0);
    });

    const CSR_RULES = [
        { apiGroups: ["certificates.k8s.io"], resources: ["certificatesigningrequests"], verbs: ["create", "get"] },
        { apiGroups: ["certificates.k8s.io"], resources: ["certificatesigningrequests/approval"], verbs: ["update"] },
        {
            apiGroups: ["certificates.k8s.io"],
            resources: ["signers"],
            verbs: ["approve"],
            resourceNames: ["kubernetes.io/kube-apiserver-client"],
        },
    ];

    it("escalation paths held cluster-wide are cluster-admin", () => {
        const cases: [unknown, RegExp][] = [
            [
                [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["escalate"] }],
                /escalate or bind roles cluster-wide/,
            ],
            [
                [
                    {
                        apiGroups: ["rbac.authorization.k8s.io"],
                        resources: ["roles", "rolebindings"],
                        verbs: ["bind", "create"],
                    },
                ],
                /escalate or bind roles/,
            ],
            [
                [{ apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] }],
                /impersonate users, groups or service accounts/,
            ],
            [[{ apiGroups: ["*"], resources: ["serviceaccounts"], verbs: ["impersonate"] }], /impersonate/],
            [
                [{ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }],
                /create service account tokens/,
            ],
            [[{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }], /create pods/],
            [[{ apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["patch"] }], /workloads/],
            [
                [
                    {
                        apiGroups: ["rbac.authorization.k8s.io"],
                        resources: ["clusterroles"],
                        verbs: ["bind"],
                        resourceNames: ["cluster-admin"],
                    },
                ],
                /bind roles/,
            ],
            [
                [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }],
                /read Secrets \(service account tokens among them\)/,
            ],
            [[{ apiGroups: ["*"], resources: ["*"], verbs: ["get", "list", "watch"] }], /read Secrets/],
            [
                [{ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] }],
                /reach the kubelet API through nodes\/proxy/,
            ],
            [[{ apiGroups: [""], resources: ["*/proxy"], verbs: ["create"] }], /kubelet API/],
            [
                [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }],
                /run commands in or attach to other pods/,
            ],
            [
                [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }],
                /run commands in or attach to other pods/,
            ],
            [
                [
                    {
                        apiGroups: ["admissionregistration.k8s.io"],
                        resources: ["mutatingwebhookconfigurations"],
                        verbs: ["create"],
                    },
                ],
                /change admission webhooks/,
            ],
            // CSR approval: three permissions, over several rules.
            [CSR_RULES, /approve certificate signing requests/],
            [
                [
                    ...CSR_RULES.slice(0, 2),
                    {
                        apiGroups: ["certificates.k8s.io"],
                        resources: ["signers"],
                        verbs: ["approve"],
                        resourceNames: ["kubernetes.io/*"],
                    },
                ],
                /approve certificate signing requests/,
            ],
        ];
        for (const [rules, why] of cases) {
            const r = n(rules);
            assertFindings(r, one("c-binding", new RegExp(`equivalent to cluster-admin.*${why.source}`)));
        }
    });

    it("near misses stay clean: narrow verbs, named objects, and escalation paths in the Stack's own namespace", () => {
        for (const rules of [
            [
                {
                    apiGroups: ["rbac.authorization.k8s.io"],
                    resources: ["clusterroles", "roles"],
                    verbs: ["get", "list", "create"],
                },
            ],
            [
                {
                    apiGroups: ["rbac.authorization.k8s.io"],
                    resources: ["clusterroles"],
                    verbs: ["bind"],
                    resourceNames: ["view"],
                },
            ],
            [{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["jane"] }],
            [{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get", "create"] }],
            [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "delete"] }],
            [{ apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["patch"] }],
            [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["app-config"] }],
            [{ apiGroups: [""], resources: ["secrets"], verbs: ["create", "update", "patch", "delete"] }],
            [{ apiGroups: [""], resources: ["services/proxy", "pods/log", "nodes"], verbs: ["get", "create"] }],
            [
                {
                    apiGroups: ["admissionregistration.k8s.io"],
                    resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
                    verbs: ["get", "list", "watch"],
                },
            ],
            // CSR approval without one of its three parts, or for another signer.
            CSR_RULES.slice(0, 2),
            CSR_RULES.slice(1),
            [CSR_RULES[0], CSR_RULES[2]],
            [
                ...CSR_RULES.slice(0, 2),
                {
                    apiGroups: ["certificates.k8s.io"],
                    resources: ["signers"],
                    verbs: ["approve"],
                    resourceNames: ["example.com/serving"],
                },
            ],
        ]) {
            assert.strictEqual(n(rules).length, 0, JSON.stringify(rules));
        }
        const podsAndTokens = [
            {
                apiGroups: ["", "apps"],
                resources: ["pods", "serviceaccounts/token", "deployments", "secrets", "pods/exec"],
                verbs: ["*"],
            },
        ];
        assert.strictEqual(n(podsAndTokens, RB, "pulumi").length, 0);
        assertFindings(n(podsAndTokens, RB, "kube-system"), one("c-binding", /equivalent to cluster-admin/));
        // A binding namespace unknown during preview may be kube-system: fail closed.
        assertFindings(n(podsAndTokens, RB, UNKNOWN_WIRE as unknown as string), one("c-binding", /may grant/));
    });
});

describe("pko-stack-no-cluster-admin: explain", () => {
    it("quotes PKO's migration-guide advice, refuses it, and its least-privilege Role passes the rule", () => {
        const { explainRule } = require("../../../cli/explain") as typeof import("../../../cli/explain");
        const YAML = require("yaml") as typeof import("yaml");
        const text = explainRule("pko-stack-no-cluster-admin");
        assert.match(
            text,
            /migration guide \(docs\/migration\.md, "here's how to assign\s+the `cluster-admin` role"\)/,
        );
        assert.match(text, /exactly what this rule refuses/);
        const block = text.slice(
            text.indexOf("  apiVersion: rbac.authorization.k8s.io/v1"),
            text.indexOf("\n\nAggregated"),
        );
        const docs = YAML.parseAllDocuments(block.replace(/^ {2}/gm, "")).map((d) => d.toJS());
        assert.deepStrictEqual(
            docs.map((d) => d.kind),
            ["Role", "RoleBinding"],
        );
        const resources = docs.map((d) => ({
            type: `kubernetes:rbac.authorization.k8s.io/v1:${d.kind}`,
            name: d.metadata.name,
            props: d,
        }));
        const myStack = stackResource("my-stack", goodSpec({ serviceAccountName: "my-stack" }), {
            namespace: "default",
        });
        assert.deepStrictEqual(check([myStack, ...resources]), []);
        // The guide's own binding, for contrast.
        assertFindings(
            check([myStack, binding(CRB, "my-stack:cluster-admin", admin, [sa("my-stack", "default")])]),
            one("my-stack:cluster-admin", /grants cluster-admin to ServiceAccount default\/my-stack/),
        );
    });
});
