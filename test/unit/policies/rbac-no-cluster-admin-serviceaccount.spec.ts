import * as assert from "assert";
import { EvalResource, evaluatePack } from "../../../evaluation/evaluate";
import { packPolicies, reconcilePackConfig } from "../../../evaluation/pack-config";
import { rule as policy } from "../../../policies/rbac-no-cluster-admin-serviceaccount";
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
const crb = (name: string, role: string, subjects: unknown[]): TestResource => ({
    type: CRB,
    name,
    props: { metadata: { name }, roleRef: { kind: "ClusterRole", name: role }, subjects },
});
const stack = stackResource("app", goodSpec({ serviceAccountName: "deployer" }));
/** The one (advisory) finding a program should produce, on `resource`. */
const one = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource, message },
];

describe("rbac-no-cluster-admin-serviceaccount", () => {
    it("flags cluster-admin on an account no Stack uses", () => {
        const r = runStackPolicy(policy, [
            stack,
            crb("ci", "cluster-admin", [{ kind: "ServiceAccount", name: "ci", namespace: "ci" }]),
        ]);
        assertFindings(r, one("ci", /ServiceAccount ci\/ci, which no PKO Stack of this program runs as/));
        // In check's manifests, or at the cluster's door, it says so rather than "program".
        const manifests = runStackPolicy(policy, [
            stack,
            {
                ...crb("ci", "cluster-admin", [{ kind: "ServiceAccount", name: "ci", namespace: "ci" }]),
                urn: `urn:pulumi:check::manifests::${CRB}::ClusterRoleBinding/ci`,
            },
        ]);
        assert.match(manifests[0].message, /which no PKO Stack of the manifests checked runs as/);
    });

    it("leaves the Stack's own account to pko-stack-no-cluster-admin", () => {
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                crb("a", "cluster-admin", [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }]),
            ]),
            [],
        );
    });

    it("flags service-account groups when no Stack exists, and ignores users and other roles", () => {
        assertFindings(
            runStackPolicy(policy, [crb("g", "cluster-admin", [{ kind: "Group", name: "system:serviceaccounts" }])]),
            one("g", /Group system:serviceaccounts/),
        );
        assertFindings(
            runStackPolicy(policy, [crb("g", "cluster-admin", [{ kind: "Group", name: "system:authenticated" }])]),
            one("g", /Group system:authenticated/),
        );
        assert.strictEqual(
            runStackPolicy(policy, [crb("u", "cluster-admin", [{ kind: "User", name: "alice" }])]).length,
            0,
        );
        assert.strictEqual(
            runStackPolicy(policy, [crb("v", "view", [{ kind: "ServiceAccount", name: "ci", namespace: "ci" }])])
                .length,
            0,
        );
    });
});

const CR = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole";
const CRB_PATCH = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBindingPatch";
const WILD = [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];
const NARROW = [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] }];
const LABEL = { "acme.io/aggregate-to-agg": "true" };
const role = (name: string, props: Record<string, unknown>): TestResource => ({
    type: CR,
    name,
    props: { metadata: { name, ...(props.labels ? { labels: props.labels } : {}) }, ...props, labels: undefined },
});
const agg = role("agg", { aggregationRule: { clusterRoleSelectors: [{ matchLabels: LABEL }] } });
const ciSa = { kind: "ServiceAccount", name: "ci", namespace: "ci" };

describe("rbac-no-cluster-admin-serviceaccount: aggregation", () => {
    it("names the roles an aggregation was judged with as the run has them (no program in check)", () => {
        const narrow = role("part", { labels: LABEL, rules: NARROW });
        const prefix = "urn:pulumi:check::manifests::";
        const r = runStackPolicy(policy, [
            stack,
            agg,
            narrow,
            {
                ...crb("b", "agg", [ciSa]),
                urn: `${prefix}kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::b`,
            },
        ]);
        assert.strictEqual(r.length, 1);
        assert.match(
            r[0].message,
            /ClusterRoles not declared among the manifests checked with it .*only the roles among the manifests checked with it were judged/,
        );
        assert.doesNotMatch(r[0].message, /program|preview/);
    });
    it("flags a wildcard-by-aggregation role on an account no Stack uses", () => {
        const r = runStackPolicy(policy, [
            stack,
            agg,
            role("all", { labels: LABEL, rules: WILD }),
            crb("b", "agg", [ciSa]),
        ]);
        assertFindings(r, one("b", /ClusterRole "agg" \(wildcard by aggregation: it aggregates ClusterRole "all"/));
    });

    it("says when a program's selectors may match roles it does not declare, once per binding, Stack accounts included", () => {
        const narrow = role("part", { labels: LABEL, rules: NARROW });
        for (const subjects of [
            [ciSa],
            [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }],
            [ciSa, { kind: "Group", name: "system:serviceaccounts" }],
        ]) {
            const r = runStackPolicy(policy, [stack, agg, narrow, crb("b", "agg", subjects)]);
            assertFindings(
                r,
                one(
                    "b",
                    /aggregates through ClusterRole "agg", whose clusterRoleSelectors may match ClusterRoles not declared in this program/,
                ),
            );
        }
        // Through a chain: the bound role aggregates a program role that aggregates.
        const top = role("top", { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { tier: "top" } }] } });
        const mid = role("agg", {
            labels: { tier: "top" },
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: LABEL }] },
        });
        assertFindings(
            runStackPolicy(policy, [stack, top, mid, crb("b", "top", [ciSa])]),
            one("b", /ClusterRole "top", ClusterRole "agg"/),
        );
    });

    it("does not say so for a user subject, for built-in admin/edit/view bound as they are, or for an unaggregated role", () => {
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, agg, crb("b", "agg", [{ kind: "User", name: "alice" }])]),
            [],
        );
        assert.deepStrictEqual(runStackPolicy(policy, [stack, crb("b", "view", [ciSa])]), []);
        // Built-in admin and edit bound cluster-wide are escalation paths (pods and impersonation in kube-system).
        for (const r of ["admin", "edit"])
            assertFindings(
                runStackPolicy(policy, [stack, crb("b", r, [ciSa])]),
                one("b", /equivalent to cluster-admin/),
            );
        assert.deepStrictEqual(
            runStackPolicy(policy, [stack, role("plain", { rules: NARROW }), crb("b", "plain", [ciSa])]),
            [],
        );
    });

    it("says so for a built-in role a program aggregating role feeds", () => {
        const feeder = role("agg", {
            labels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" },
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: LABEL }] },
        });
        assertFindings(
            runStackPolicy(policy, [stack, feeder, crb("b", "edit", [ciSa])]),
            one("b", /ClusterRole "edit"/),
        );
    });

    it("leaves a Stack's account bound to a wildcard aggregation to the mandatory rule", () => {
        const all = role("all", { labels: LABEL, rules: WILD });
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                agg,
                all,
                crb("b", "agg", [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }]),
            ]),
            [],
        );
    });
});

describe("rbac-no-cluster-admin-serviceaccount: patches and unresolved names", () => {
    it("flags a patch that adds an account to a cluster-admin binding, on the patch, not twice", () => {
        const base = crb("ops", "cluster-admin", [{ kind: "User", name: "alice" }]);
        const p = {
            type: CRB_PATCH,
            name: "p",
            props: { metadata: { name: "ops" }, subjects: [{ kind: "User", name: "alice" }, ciSa] },
        };
        const r = runStackPolicy(policy, [stack, base, p]);
        assertFindings(r, one("p", /ServiceAccount ci\/ci/));
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB_PATCH + "::p");
        const same = crb("ops", "cluster-admin", [ciSa]);
        const relabel = { type: CRB_PATCH, name: "p", props: { metadata: { name: "ops", labels: { a: "b" } } } };
        const r2 = runStackPolicy(policy, [stack, same, relabel]);
        assertFindings(r2, one("ops", /ServiceAccount ci\/ci/));
        assert.strictEqual(r2[0].urn, "urn:pulumi:dev::test::" + CRB + "::ops");
    });

    it("flags an unknown-named account in a namespace no Stack uses, and leaves a possible Stack account to the mandatory rule", () => {
        const r = runStackPolicy(policy, [
            stack,
            crb("b", "cluster-admin", [{ kind: "ServiceAccount", name: UNKNOWN_WIRE, namespace: "kube-system" }]),
        ]);
        assertFindings(r, one("b", /ServiceAccount kube-system\/<unknown>/));
        assert.deepStrictEqual(
            runStackPolicy(policy, [
                stack,
                crb("b", "cluster-admin", [{ kind: "ServiceAccount", name: UNKNOWN_WIRE, namespace: "pulumi" }]),
            ]),
            [],
        );
    });
});

describe("rbac-no-cluster-admin-serviceaccount: in check, with objects in several scopes (clusters), each judged as its own program", () => {
    const PREFIX = "urn:pulumi:check::manifests::";
    /** A manifest object `check` sends to the scope `scope`, named for messages as `in cluster "<scope>"`. */
    const object = (
        kind: string,
        props: Record<string, unknown>,
        scope: string,
        scopeName = `in cluster ${JSON.stringify(scope)}`,
    ): EvalResource => {
        const meta = props.metadata as { name: string; namespace?: string };
        const type =
            kind === "Stack" ? "kubernetes:pulumi.com/v1:Stack" : `kubernetes:rbac.authorization.k8s.io/v1:${kind}`;
        const identity = `${kind}/${meta.namespace ?? ""}/${meta.name}`;
        return { type, name: identity, urn: `${PREFIX}${type}::${scope}/${identity}`, props, scope, scopeName };
    };
    const ledger = (scope: string, sa = "ledger") =>
        object(
            "Stack",
            {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "ledger", namespace: "pulumi" },
                spec: goodSpec({ serviceAccountName: sa }),
            },
            scope,
        );
    const admin = (scope: string, scopeName?: string) =>
        object(
            "ClusterRoleBinding",
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRoleBinding",
                metadata: { name: "ledger-admin" },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
                subjects: [{ kind: "ServiceAccount", name: "ledger", namespace: "pulumi" }],
            },
            scope,
            scopeName,
        );
    const judged = (resources: EvalResource[]) =>
        evaluatePack(resources, reconcilePackConfig(packPolicies(), {}, "test"))
            .filter((r) => r.policy === policy.name)
            .map((r) => r.message);

    it("names the scope judged and the other scope where a Stack runs as the account", () => {
        const [message, ...rest] = judged([ledger("https://a"), admin("https://b")]);
        assert.deepStrictEqual(rest, []);
        assert.match(
            message,
            /grants cluster-admin to ServiceAccount pulumi\/ledger, which no PKO Stack of the manifests checked in cluster "https:\/\/b" runs as \(a PKO Stack in cluster "https:\/\/a" runs as an account of that name, but this binding is not applied there\); bind a least-privilege role/,
        );
    });

    it("names the scope alone when no Stack of any scope runs as the account", () => {
        const [message, ...rest] = judged([ledger("https://a", "deployer"), admin("https://b")]);
        assert.deepStrictEqual(rest, []);
        assert.match(message, /which no PKO Stack of the manifests checked in cluster "https:\/\/b" runs as;/);
        assert.doesNotMatch(message, /runs as an account of that name/);
    });

    it("names at most two other scopes, and counts the rest", () => {
        const [message] = judged([ledger("https://a"), ledger("https://c"), ledger("https://d"), admin("https://b")]);
        assert.match(
            message,
            /\(a PKO Stack in cluster "https:\/\/a", in cluster "https:\/\/c" and 1 more scope\(s\) runs as/,
        );
    });

    it("does not report a binding in the Stack's own scope, and says nothing of scopes with one scope", () => {
        assert.deepStrictEqual(judged([ledger("https://a"), admin("https://a"), ledger("https://b")]), []);
        const [message] = judged([ledger("https://a", "deployer"), admin("https://a")]);
        assert.match(message, /which no PKO Stack of the manifests checked runs as;/);
    });

    it("keeps a scope name check quoted as it is, on one line", () => {
        const hostile = `in cluster ${JSON.stringify("https://b\n  evil")}`;
        const [message] = judged([ledger("https://a"), admin("https://b\n  evil", hostile)]);
        assert.ok(!message.includes("\n"), message);
        assert.ok(message.includes('in cluster "https://b\\n  evil" runs as'), message);
    });
});
