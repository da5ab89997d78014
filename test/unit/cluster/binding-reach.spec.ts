/**
 * The fail-closed scope of an unreadable Stack: its service account cannot be known, so it blocks the
 * bindings that could grant to an account of its namespace (a RoleBinding there; a binding to a service
 * account there, or to a group that covers it), and nothing else: a binding to another namespace's account
 * or to a group no account is in is judged as usual, from the cache and from fresh reads.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { ClusterCache, UnreadableObjectsError } from "../../../cluster/cache";
import { Decision, judgeAdmission, judgeAdmissionFresh } from "../../../cluster/admission";
import { EVERY_NAMESPACE, accountNamespaces } from "../../../cluster/binding-reach";
import { KObject, WATCHED_KINDS } from "../../../cluster/kinds";
import { deepJson, offlineKubeConfig } from "../../support/fake-cluster";

const STATE = "pko-guard-cluster-state";

function stack(name: string, ns: string, account: string): KObject {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: ns },
        spec: { serviceAccountName: account, stack: `org/app/${name}`, projectRepo: "https://github.com/org/app.git" },
    };
}

function binding(kind: "ClusterRoleBinding" | "RoleBinding", subject: Record<string, unknown>, ns?: string): KObject {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind,
        metadata: { name: `b-${String(subject.kind)}-${String(subject.name)}`, ...(ns ? { namespace: ns } : {}) },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [subject],
    };
}

const sa = (name: string, namespace: string) => ({ kind: "ServiceAccount", name, namespace });
const group = (name: string) => ({ kind: "Group", name, apiGroup: "rbac.authorization.k8s.io" });
const user = (name: string) => ({ kind: "User", name, apiGroup: "rbac.authorization.k8s.io" });

/** A cache with readable Stacks in `crowd` and `elsewhere` and a Stack of `crowd` nested too deep to read. */
function seeded(): ClusterCache {
    const cache = new ClusterCache(offlineKubeConfig());
    for (const k of WATCHED_KINDS) cache.seed(k.kind, []);
    const deep = JSON.parse(deepJson(stack("deep", "crowd", "hidden"), "config", 5000)) as KObject;
    cache.seed("Stack", [stack("a", "crowd", "sa-a"), stack("b", "elsewhere", "sa-b"), deep]);
    cache.seed("ClusterRole", [
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "view" },
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
        },
    ]);
    return cache;
}

const blockedByState = (d: Decision) => d.findings.some((f) => f.policy === STATE);

describe("the fail-closed scope of an object pko-guard cannot read", () => {
    const config = packConfig();
    const o = { config, warnOnly: false };
    const cache = seeded();
    const judge = (obj: KObject) => judgeAdmission({ operation: "CREATE", object: obj }, cache, o);

    it("reads the namespaces a binding's subjects can cover as the rules do", () => {
        assert.deepStrictEqual(accountNamespaces(binding("ClusterRoleBinding", sa("x", "crowd"))), ["crowd"]);
        assert.deepStrictEqual(accountNamespaces(binding("RoleBinding", { kind: "ServiceAccount", name: "x" }, "n")), [
            "n",
        ]);
        assert.deepStrictEqual(
            accountNamespaces(binding("ClusterRoleBinding", { kind: "ServiceAccount", name: "x" })),
            [],
        );
        for (const g of ["system:serviceaccounts", "system:authenticated"])
            assert.deepStrictEqual(accountNamespaces(binding("ClusterRoleBinding", group(g))), [EVERY_NAMESPACE], g);
        assert.deepStrictEqual(
            accountNamespaces(binding("ClusterRoleBinding", group("system:serviceaccounts:crowd"))),
            ["crowd"],
        );
        assert.deepStrictEqual(
            accountNamespaces(binding("ClusterRoleBinding", user("system:serviceaccount:crowd:x"))),
            ["crowd"],
        );
        for (const s of [group("team"), group("system:masters"), user("alice")])
            assert.deepStrictEqual(accountNamespaces(binding("ClusterRoleBinding", s)), [], s.name);
        for (const s of [{ kind: "Group" }, { kind: 7, name: "x" }, null])
            assert.deepStrictEqual(accountNamespaces({ kind: "ClusterRoleBinding", subjects: [s] }), [EVERY_NAMESPACE]);
    });

    it("blocks every binding that could grant to an account of the unread Stack's namespace", () => {
        const could = [
            binding("ClusterRoleBinding", sa("hidden", "crowd")),
            binding("ClusterRoleBinding", group("system:serviceaccounts:crowd")),
            binding("ClusterRoleBinding", group("system:serviceaccounts")),
            binding("ClusterRoleBinding", group("system:authenticated")),
            binding("ClusterRoleBinding", user("system:serviceaccount:crowd:hidden")),
            binding("ClusterRoleBinding", { kind: "Group" }),
            binding("RoleBinding", user("alice"), "crowd"),
            binding("RoleBinding", sa("hidden", "crowd"), "elsewhere"),
        ];
        for (const b of could) {
            const d = judge(b);
            assert.strictEqual(
                d.allowed,
                false,
                `admitted ${JSON.stringify(b.subjects)} in ${String(b.metadata!.namespace)}`,
            );
            assert.match(d.message!, /pko-guard-cluster-state: .*Stack\/crowd\/deep \(it nests deeper/);
        }
    });

    it("judges as usual the bindings that cannot concern it", () => {
        const cannot = [
            binding("ClusterRoleBinding", sa("sa-b", "elsewhere")),
            binding("ClusterRoleBinding", group("team")),
            binding("ClusterRoleBinding", group("system:serviceaccounts:elsewhere")),
            binding("ClusterRoleBinding", user("alice")),
            binding("ClusterRoleBinding", user("system:serviceaccount:elsewhere:sa-b")),
            binding("RoleBinding", group("team"), "elsewhere"),
        ];
        for (const b of cannot) {
            const d = judge(b);
            assert.strictEqual(d.allowed, true, `${JSON.stringify(b.subjects)}: ${d.message}`);
            assert.ok(!blockedByState(d), JSON.stringify(b.subjects));
        }
    });

    it("reads fresh only the Stacks of the namespaces a binding can reach", async () => {
        const read: string[] = [];
        const fresh = async (kind: string, ns?: string, name?: string) => {
            read.push(`${kind} ${ns ?? "*"}`);
            if (kind === "Stack" && (ns === undefined || ns === "crowd"))
                throw new UnreadableObjectsError(cache.unreadable("Stack"));
            return cache.list(kind, ns).filter((x) => name === undefined || x.metadata?.name === name);
        };
        const judgeFresh = (b: KObject) => judgeAdmissionFresh({ operation: "CREATE", object: b }, cache, o, fresh);
        const team = await judgeFresh(binding("ClusterRoleBinding", group("team")));
        assert.strictEqual(team.allowed, true, team.message);
        assert.ok(!read.some((r) => r.startsWith("Stack")), read.join(", "));
        const other = await judgeFresh(binding("ClusterRoleBinding", sa("sa-b", "elsewhere")));
        assert.strictEqual(other.allowed, true, other.message);
        const all = await judgeFresh(binding("ClusterRoleBinding", group("system:authenticated")));
        assert.strictEqual(all.allowed, false);
        assert.match(all.message!, /pko-guard-cluster-state: cluster state cannot be read \(Stack\/crowd\/deep/);
    });
});
