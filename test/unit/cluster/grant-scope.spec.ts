/**
 * Whether a binding can grant anything a rule forbids (cluster/grant-scope.ts), by the rules' own RBAC model:
 * `view`, a role of plain reads and `edit` in a RoleBinding cannot; cluster-admin, a wildcard role, an escalation
 * path held cluster-wide, and a role the cluster aggregates into one of those can. And the rules that read
 * bindings are exactly those grant-scope.ts reasons about: a new one fails here until it is reasoned about too.
 */
import * as assert from "assert";
import { policies } from "../../../policies/index";
import { mayGrantForbidden } from "../../../cluster/grant-scope";
import { KObject } from "../../../cluster/kinds";
import { seededCache } from "../../support/fake-cluster";

const RBAC = "rbac.authorization.k8s.io";
/** The rules whose verdicts a binding can change, each reasoned about in cluster/grant-scope.ts's comment. */
const BINDING_RULES = [
    "pko-stack-auth-delegator",
    "pko-stack-no-cluster-admin",
    "rbac-no-cluster-admin-serviceaccount",
];

function binding(kind: "RoleBinding" | "ClusterRoleBinding", role: string, roleKind = "ClusterRole"): KObject {
    return {
        apiVersion: `${RBAC}/v1`,
        kind,
        metadata: { name: "b", ...(kind === "RoleBinding" ? { namespace: "tenant" } : {}) },
        roleRef: { apiGroup: RBAC, kind: roleKind, name: role },
        subjects: [{ apiGroup: RBAC, kind: "Group", name: "system:serviceaccounts" }],
    };
}

function role(name: string, rules: unknown[], extra: Record<string, unknown> = {}): KObject {
    return { apiVersion: `${RBAC}/v1`, kind: "ClusterRole", metadata: { name, ...extra }, rules };
}

const READS = [{ apiGroups: [""], resources: ["pods", "configmaps"], verbs: ["get", "list", "watch"] }];

describe("cluster/grant-scope: can a binding grant what a rule forbids", () => {
    const empty = seededCache();

    it("the rules that read bindings are the ones reasoned about", () => {
        const reading = policies
            .filter((p) => p.about.reads.some((r) => /^rbac\.authorization\.k8s\.io\/(Cluster)?RoleBinding$/.test(r)))
            .map((p) => p.name)
            .sort();
        assert.deepStrictEqual(reading, [...BINDING_RULES].sort());
    });

    it("view and plain reads grant nothing forbidden, cluster-wide or not", () => {
        const view = role("view", READS);
        for (const kind of ["RoleBinding", "ClusterRoleBinding"] as const)
            assert.strictEqual(mayGrantForbidden(binding(kind, "view"), view, empty), false, kind);
    });

    it("cluster-admin (by name, whatever its rules) and a wildcard role do", () => {
        assert.strictEqual(mayGrantForbidden(binding("RoleBinding", "cluster-admin"), undefined, empty), true);
        const wild = role("anything", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
        assert.strictEqual(mayGrantForbidden(binding("RoleBinding", "anything"), wild, empty), true);
    });

    it("an escalation path counts cluster-wide, not in a tenant's RoleBinding", () => {
        const secrets = role("secret-reader", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]);
        assert.strictEqual(mayGrantForbidden(binding("ClusterRoleBinding", "secret-reader"), secrets, empty), true);
        assert.strictEqual(mayGrantForbidden(binding("RoleBinding", "secret-reader"), secrets, empty), false);
    });

    it("a role the cluster aggregates a wildcard role into does", () => {
        const aggregating = {
            ...role("team-view", []),
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "example.com/aggregate-to-team": "true" } }] },
        };
        const fed = role("feeds-team", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }], {
            labels: { "example.com/aggregate-to-team": "true" },
        });
        const cluster = seededCache([aggregating, fed]);
        assert.strictEqual(mayGrantForbidden(binding("RoleBinding", "team-view"), aggregating, cluster), true);
        assert.strictEqual(mayGrantForbidden(binding("RoleBinding", "team-view"), aggregating, empty), false);
    });
});
