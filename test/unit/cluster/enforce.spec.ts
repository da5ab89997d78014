/**
 * The enforce loop (cluster/enforce.ts) over a cache holding what two replicas admitted at once: a young binding
 * giving a Stack's account cluster-admin is deleted (the very object judged: its uid and resourceVersion go with
 * the delete); an old one, one giving cluster-admin to an account no Stack runs as, a `view` binding to every
 * account, and a waived one are left alone; a delete that met a changed binding is tried again on the next pass.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { packConfig } from "../../../evaluation/pack-config";
import { Enforcer, Removal } from "../../../cluster/enforce";
import { KObject } from "../../../cluster/kinds";
import { Doc, guideDocs } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";

const NOW = Date.parse("2030-01-01T12:00:00Z");
const FILE = "manifests/production/stack.yaml";

function stamped(d: Doc, at: number, uid: string): Doc {
    return {
        ...d,
        metadata: { ...d.metadata, creationTimestamp: new Date(at).toISOString(), uid, resourceVersion: "7" },
    };
}

/** A tenant's governed Stack and what it needs, and a binding giving its account cluster-admin created at `at`. */
function tenant(ns: string, at: number, withStack = true): Doc[] {
    const governed = guideDocs("gitops-guide-governed", FILE, ns);
    const example = guideDocs("gitops-guide-example", FILE, ns);
    const admin = example.find((d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name))!;
    return [...governed.filter((d) => withStack || d.kind !== "Stack"), stamped(admin, at, `uid-${ns}`)];
}

const CLUSTER_ADMIN = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "cluster-admin" },
    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
};
const VIEW = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "view" },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }],
};
const viewToEveryone = stamped(
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "readers", namespace: "race" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts" }],
    },
    NOW - 1000,
    "uid-readers",
);

describe("cluster/enforce: the loop that closes the window across replicas", function () {
    this.timeout(60_000);

    function setUp(config = packConfig(), answers: Removal[] = []) {
        const cache = seededCache([
            ...tenant("race", NOW - 2000),
            ...tenant("old", NOW - 3_600_000),
            ...tenant("nostack", NOW - 2000, false),
            viewToEveryone,
            CLUSTER_ADMIN,
            VIEW,
        ] as KObject[]);
        const removed: KObject[] = [];
        const enforcer = new Enforcer({
            cache,
            config,
            now: () => NOW,
            remove: async (b) => {
                removed.push(b);
                return answers.shift() ?? "removed";
            },
        });
        return { cache, enforcer, removed };
    }

    it("deletes the young binding that gives a Stack's account cluster-admin, and only it", async () => {
        const { enforcer, removed } = setUp();
        await enforcer.pass();
        assert.deepStrictEqual(
            removed.map((b) => [b.kind, b.metadata?.name, b.metadata?.uid, b.metadata?.resourceVersion]),
            [["ClusterRoleBinding", "race-webapp:cluster-admin", "uid-race", "7"]],
        );
        assert.strictEqual(enforcer.removed, 1);
    });

    it("a binding changed since it was judged is judged again on the next pass", async () => {
        const { enforcer, removed } = setUp(packConfig(), ["changed"]);
        await enforcer.pass();
        await enforcer.pass();
        assert.strictEqual(removed.length, 2);
        assert.strictEqual(enforcer.removed, 1);
    });

    it("nothing changed in the cache: a pass does nothing", async () => {
        const { enforcer, removed } = setUp();
        await enforcer.pass();
        await enforcer.pass();
        assert.strictEqual(removed.length, 1);
    });

    it("a waived binding is left alone", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "enforce-spec-"));
        try {
            const file = path.join(dir, "config.json");
            const waiver = { resource: "ClusterRoleBinding//race-*", reason: "spec" };
            fs.writeFileSync(file, JSON.stringify({ "pko-stack-no-cluster-admin": { waivers: [waiver] } }));
            const { enforcer, removed } = setUp(packConfig(file));
            await enforcer.pass();
            assert.deepStrictEqual(removed, []);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
