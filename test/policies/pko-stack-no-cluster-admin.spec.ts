import * as assert from "assert";
import { policy } from "../../policies/pko-stack-no-cluster-admin";
import { TestResource, UNKNOWN_WIRE, goodSpec, runStackPolicy, stackResource } from "../helpers";

const CRB = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding";
const RB = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding";
const CR = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole";
const ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role";

function binding(type: string, name: string, role: { kind: string; name: unknown }, subjects: unknown, namespace?: string): TestResource {
    return {
        type,
        name,
        props: { metadata: { name, ...(namespace ? { namespace } : {}) }, roleRef: { apiGroup: "rbac.authorization.k8s.io", ...role }, subjects },
    };
}
const sa = (name: unknown, namespace: unknown = "pulumi") => ({ kind: "ServiceAccount", name, namespace });
const admin = { kind: "ClusterRole", name: "cluster-admin" };
const stack = (spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
    stackResource("app", goodSpec({ serviceAccountName: "deployer", ...spec }), metadata);

function check(resources: TestResource[]) {
    return runStackPolicy(policy, resources);
}

describe("pko-stack-no-cluster-admin", () => {
    it("passes the auth-delegator binding and least-privilege roles", () => {
        assert.deepStrictEqual(
            check([stack(), binding(CRB, "delegator", { kind: "ClusterRole", name: "system:auth-delegator" }, [sa("deployer")])]),
            [],
        );
    });

    it("flags cluster-admin bound to the Stack's account, on the binding, naming the Stack", () => {
        const r = check([stack(), binding(CRB, "admin", admin, [sa("deployer")])]);
        assert.strictEqual(r.length, 1);
        assert.strictEqual(r[0].urn, "urn:pulumi:dev::test::" + CRB + "::admin");
        assert.match(r[0].message, /grants cluster-admin to ServiceAccount pulumi\/deployer, which Stack "app"/);
    });

    it("ignores cluster-admin on other accounts and other namespaces", () => {
        assert.deepStrictEqual(check([stack(), binding(CRB, "a", admin, [sa("other")])]), []);
        assert.deepStrictEqual(check([stack(), binding(CRB, "a", admin, [sa("deployer", "elsewhere")])]), []);
    });

    it("uses the implicit default account and the workspace template's account", () => {
        const noSa = stackResource("app", goodSpec());
        assert.strictEqual(check([noSa, binding(CRB, "a", admin, [sa("default")])]).length, 1);
        const ws = stack({ workspaceTemplate: { spec: { serviceAccountName: "ws" } } });
        assert.strictEqual(check([ws, binding(CRB, "a", admin, [sa("ws")])]).length, 1);
        assert.strictEqual(check([ws, binding(CRB, "a", admin, [sa("deployer")])]).length, 0);
    });

    it("uses the default namespace for a Stack without one", () => {
        const r = stackResource("app", goodSpec(), { namespace: undefined });
        assert.strictEqual(check([r, binding(CRB, "a", admin, [sa("default", "default")])]).length, 1);
    });

    it("counts groups and the service-account user form", () => {
        for (const subject of [
            { kind: "Group", name: "system:serviceaccounts" },
            { kind: "Group", name: "system:serviceaccounts:pulumi" },
            { kind: "Group", name: "system:masters" },
            { kind: "Group", name: "system:authenticated" },
            { kind: "User", name: "system:serviceaccount:pulumi:deployer" },
        ]) {
            assert.strictEqual(check([stack(), binding(CRB, "a", admin, [subject])]).length, 1, subject.name);
        }
        assert.strictEqual(check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: "system:serviceaccounts:other" }])]).length, 0);
        assert.strictEqual(check([stack(), binding(CRB, "a", admin, [{ kind: "Group", name: "system:unauthenticated" }])]).length, 0);
    });

    it("counts a program's wildcard ClusterRole and Role, not narrower ones", () => {
        const wild = { type: CR, name: "all", props: { metadata: { name: "all" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] } };
        const narrow = { type: CR, name: "some", props: { metadata: { name: "some" }, rules: [{ apiGroups: ["*"], resources: ["pods"], verbs: ["*"] }] } };
        assert.strictEqual(check([stack(), wild, binding(CRB, "a", { kind: "ClusterRole", name: "all" }, [sa("deployer")])]).length, 1);
        assert.strictEqual(check([stack(), narrow, binding(CRB, "a", { kind: "ClusterRole", name: "some" }, [sa("deployer")])]).length, 0);
        const role = { type: ROLE, name: "r", props: { metadata: { name: "r", namespace: "pulumi" }, rules: [{ resources: ["*"], verbs: ["*"] }] } };
        assert.strictEqual(check([stack(), role, binding(RB, "b", { kind: "Role", name: "r" }, [{ kind: "ServiceAccount", name: "deployer" }], "pulumi")]).length, 1);
        assert.strictEqual(check([stack(), role, binding(RB, "b", { kind: "Role", name: "r" }, [sa("deployer")], "other")]).length, 0);
    });

    it("reports once per Stack a binding covers", () => {
        const s2 = stackResource("app2", goodSpec({ serviceAccountName: "deployer2" }));
        assert.strictEqual(check([stack(), s2, binding(CRB, "a", admin, [{ kind: "Group", name: "system:serviceaccounts" }])]).length, 2);
    });

    it("fails closed on unknown role, subjects or service account", () => {
        assert.match(check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: UNKNOWN_WIRE }, [sa("deployer")])])[0].message, /may grant.*fails closed/);
        assert.strictEqual(check([stack(), binding(CRB, "a", admin, UNKNOWN_WIRE)]).length, 1);
        assert.strictEqual(check([stack(), binding(CRB, "a", admin, [sa(UNKNOWN_WIRE)])]).length, 1);
        assert.strictEqual(check([stack({ serviceAccountName: UNKNOWN_WIRE }), binding(CRB, "a", admin, [sa("x")])]).length, 1);
        // Unknown but certainly not admin: nothing to report.
        assert.strictEqual(check([stack(), binding(CRB, "a", { kind: "ClusterRole", name: "view" }, UNKNOWN_WIRE)]).length, 0);
    });
});
