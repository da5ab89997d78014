import * as assert from "assert";
import { policy } from "../../policies/rbac-no-cluster-admin-serviceaccount";
import { TestResource, goodSpec, runStackPolicy, stackResource } from "../helpers";

const CRB = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding";
const crb = (name: string, role: string, subjects: unknown[]): TestResource => ({
    type: CRB,
    name,
    props: { metadata: { name }, roleRef: { kind: "ClusterRole", name: role }, subjects },
});
const stack = stackResource("app", goodSpec({ serviceAccountName: "deployer" }));

describe("rbac-no-cluster-admin-serviceaccount", () => {
    it("flags cluster-admin on an account no Stack uses", () => {
        const r = runStackPolicy(policy, [stack, crb("ci", "cluster-admin", [{ kind: "ServiceAccount", name: "ci", namespace: "ci" }])]);
        assert.strictEqual(r.length, 1);
        assert.match(r[0].message, /ServiceAccount ci\/ci, which no PKO Stack/);
    });

    it("leaves the Stack's own account to pko-stack-no-cluster-admin", () => {
        assert.deepStrictEqual(runStackPolicy(policy, [stack, crb("a", "cluster-admin", [{ kind: "ServiceAccount", name: "deployer", namespace: "pulumi" }])]), []);
    });

    it("flags service-account groups when no Stack exists, and ignores users and other roles", () => {
        assert.strictEqual(runStackPolicy(policy, [crb("g", "cluster-admin", [{ kind: "Group", name: "system:serviceaccounts" }])]).length, 1);
        assert.strictEqual(runStackPolicy(policy, [crb("g", "cluster-admin", [{ kind: "Group", name: "system:authenticated" }])]).length, 1);
        assert.strictEqual(runStackPolicy(policy, [crb("u", "cluster-admin", [{ kind: "User", name: "alice" }])]).length, 0);
        assert.strictEqual(runStackPolicy(policy, [crb("v", "view", [{ kind: "ServiceAccount", name: "ci", namespace: "ci" }])]).length, 0);
    });
});
