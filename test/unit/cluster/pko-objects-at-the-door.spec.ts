/**
 * PKO's Workspace, Program and Update objects at the door (cluster/kinds.ts, store.ts, admission.ts), over a
 * seeded cache, no server: each is judged by the same rules as `check` (a privileged Workspace, a Program
 * holding a credential, a Workspace's account given cluster-admin in either order), a group binding reaches a
 * namespace that holds only a Workspace, and an Update is carried to the rules with its namespace's objects.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { judgeAdmission, namespacesOf, relatedObjects } from "../../../cluster/admission";
import { KObject, isWatchedKind } from "../../../cluster/kinds";
import { seededCache } from "../../support/fake-cluster";

const SHA = "0123456789abcdef0123456789abcdef01234567";
const TOKEN = ["pul", "-", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0"].join("");

const workspace = (spec: Record<string, unknown> = {}): KObject => ({
    apiVersion: "auto.pulumi.com/v1alpha1",
    kind: "Workspace",
    metadata: { name: "ws", namespace: "team" },
    spec: { serviceAccountName: "runner", git: { url: "https://github.com/acme/app", ref: SHA }, ...spec },
});
const account: KObject = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "runner", namespace: "team" } };
const adminBinding = (subject: Record<string, unknown>): KObject => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "runner-admin" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [subject],
});
const toRunner = { kind: "ServiceAccount", name: "runner", namespace: "team" };

describe("PKO's Workspace, Program and Update objects at the door", function () {
    this.timeout(60_000);
    const config = packConfig();
    const o = { config, warnOnly: false };
    const blocking = (d: ReturnType<typeof judgeAdmission>) =>
        d.findings.filter((f) => f.status === "blocking").map((f) => `${f.policy} ${f.resource}`);

    it("every PKO kind is watched, so reviews of it are judged, not skipped", () => {
        for (const [apiVersion, kind] of [
            ["pulumi.com/v1", "Stack"],
            ["pulumi.com/v1", "Program"],
            ["auto.pulumi.com/v1alpha1", "Workspace"],
            ["auto.pulumi.com/v1alpha1", "Update"],
        ])
            assert.ok(isWatchedKind(apiVersion, kind), `${apiVersion} ${kind}`);
    });

    it("denies a privileged, host-network Workspace with a literal token (pko-workspace-program-objects)", () => {
        const d = judgeAdmission(
            {
                operation: "CREATE",
                object: workspace({
                    env: [{ name: "PULUMI_ACCESS_TOKEN", value: TOKEN }],
                    podTemplate: {
                        spec: {
                            hostNetwork: true,
                            containers: [{ name: "pulumi", securityContext: { privileged: true } }],
                        },
                    },
                }),
            },
            seededCache([account]),
            o,
        );
        assert.strictEqual(d.allowed, false);
        assert.deepStrictEqual(blocking(d), [
            "pko-workspace-program-objects Workspace/team/ws",
            "pko-workspace-program-objects Workspace/team/ws",
            "pko-workspace-program-objects Workspace/team/ws",
        ]);
        assert.match(d.message!, /spec\.env\[0\]/);
        assert.match(d.message!, /spec\.podTemplate\.spec\.hostNetwork/);
        assert.ok(!d.message!.includes(TOKEN), "the token is never echoed");
        // The same Workspace without them is admitted.
        assert.strictEqual(
            judgeAdmission({ operation: "CREATE", object: workspace() }, seededCache([account]), o).allowed,
            true,
        );
    });

    it("denies a Program holding a credential in its variables", () => {
        const program: KObject = {
            apiVersion: "pulumi.com/v1",
            kind: "Program",
            metadata: { name: "p", namespace: "team" },
            program: { variables: { conn: `mysql://root:${TOKEN}@db/app` } },
        };
        const d = judgeAdmission({ operation: "CREATE", object: program }, seededCache([]), o);
        assert.strictEqual(d.allowed, false);
        assert.deepStrictEqual(blocking(d), ["pko-workspace-program-objects Program/team/p"]);
        assert.match(d.message!, /program\.variables\.conn/);
    });

    it("a Workspace's account given cluster-admin is denied in both orders, naming the Workspace", () => {
        const first = judgeAdmission(
            { operation: "CREATE", object: adminBinding(toRunner) },
            seededCache([account, workspace()]),
            o,
        );
        assert.strictEqual(first.allowed, false);
        assert.deepStrictEqual(blocking(first), ["pko-stack-no-cluster-admin ClusterRoleBinding/runner-admin"]);
        assert.match(first.message!, /ServiceAccount team\/runner, which Workspace/);
        const second = judgeAdmission(
            { operation: "CREATE", object: workspace() },
            seededCache([account, adminBinding(toRunner)]),
            o,
        );
        assert.strictEqual(second.allowed, false);
        assert.deepStrictEqual(blocking(second), ["pko-stack-no-cluster-admin ClusterRoleBinding/runner-admin"]);
    });

    it("a group binding reaches a namespace that holds only a Workspace", () => {
        const group = adminBinding({
            kind: "Group",
            name: "system:serviceaccounts",
            apiGroup: "rbac.authorization.k8s.io",
        });
        const c = seededCache([account, workspace()]);
        assert.ok(namespacesOf(group, c).has("team"));
        const d = judgeAdmission({ operation: "CREATE", object: group }, c, o);
        assert.strictEqual(d.allowed, false);
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin ClusterRoleBinding/runner-admin"]);
    });

    it("carries an Update to the rules, and its namespace's Updates, Workspaces and Programs with a related object", () => {
        const update: KObject = {
            apiVersion: "auto.pulumi.com/v1alpha1",
            kind: "Update",
            metadata: { name: "u", namespace: "team" },
            spec: { workspaceName: "ws", stackName: "acme/app/production", type: "destroy" },
        };
        const program: KObject = {
            apiVersion: "pulumi.com/v1",
            kind: "Program",
            metadata: { name: "p", namespace: "team" },
        };
        const c = seededCache([account, workspace(), update, program]);
        const d = judgeAdmission({ operation: "CREATE", object: update }, c, o);
        assert.strictEqual(d.skipped, undefined, "an Update is judged");
        const related = relatedObjects(account, c).map((x) => `${x.kind}/${(x.metadata ?? {}).name}`);
        for (const x of ["Update/u", "Workspace/ws", "Program/p"])
            assert.ok(related.includes(x), JSON.stringify(related));
        assert.strictEqual(c.size("Update"), 1);
    });
});
