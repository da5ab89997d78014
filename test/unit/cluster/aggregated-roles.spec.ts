/**
 * A ClusterRole judged by what it aggregates into (cluster/aggregated-roles.ts, over a seeded cache, no
 * server): a role labelled to feed a role bound to a Stack's account is denied as widening it, directly or
 * through another aggregating role, with the cluster's role or the bootstrap stand-in; an aggregating role
 * given selectors that pick a wildcard role is denied by what they pick, not by the rules the controller
 * copied last; and the cache keeps the roles the aggregating ones select as ClusterRoles change.
 */
import * as assert from "assert";
import { packConfig } from "../../../evaluation/pack-config";
import { judgeAdmission, namespacesOf } from "../../../cluster/admission";
import { aggregatorNames, selectedRoles } from "../../../cluster/aggregated-roles";
import { KObject } from "../../../cluster/kinds";
import { seededCache } from "../../support/fake-cluster";

const RBAC = "rbac.authorization.k8s.io/v1";
const AGG = "rbac.authorization.k8s.io/aggregate-to-";
const clusterRole = (name: string, extra: Record<string, unknown>): KObject => ({
    apiVersion: RBAC,
    kind: "ClusterRole",
    metadata: { name },
    ...extra,
});
/** The cluster's admin, edit and view as the API server bootstraps them (rules as the controller copied them). */
const bootstrap = [
    clusterRole("admin", {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${AGG}admin`]: "true" } }] },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    }),
    clusterRole("edit", {
        metadata: { name: "edit", labels: { [`${AGG}admin`]: "true" } },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${AGG}edit`]: "true" } }] },
        rules: [],
    }),
    clusterRole("view", {
        metadata: { name: "view", labels: { [`${AGG}edit`]: "true" } },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${AGG}view`]: "true" } }] },
        rules: [],
    }),
];
const WILDCARD = [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];
const feeding = (into: string) =>
    clusterRole("extra", { metadata: { name: "extra", labels: { [`${AGG}${into}`]: "true" } }, rules: WILDCARD });

const stack: KObject = {
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: { name: "app", namespace: "apps" },
    spec: {
        stack: "acme/app/dev",
        projectRepo: "https://github.com/acme/app",
        commit: "0123456789abcdef0123456789abcdef01234567",
        serviceAccountName: "deployer",
    },
};
const account: KObject = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "deployer", namespace: "apps" },
};
/** A RoleBinding of a ClusterRole to the Stack's account in its own namespace (admin there is no cluster-admin). */
const bound = (role: string): KObject => ({
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: { name: `deployer-${role}`, namespace: "apps" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: "apps" }],
});

describe("a ClusterRole judged by what it aggregates into", function () {
    this.timeout(60_000);
    const o = { config: packConfig(), warnOnly: false };
    const blocking = (d: ReturnType<typeof judgeAdmission>) =>
        d.findings.filter((f) => f.status === "blocking").map((f) => `${f.policy} ${f.resource}`);

    it("denies a role labelled to feed admin, bound to a Stack's account, as widening it (reported on the binding)", () => {
        const c = seededCache([...bootstrap, stack, account, bound("admin")]);
        const d = judgeAdmission({ operation: "CREATE", object: feeding("admin") }, c, o);
        assert.strictEqual(d.allowed, false);
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-admin"]);
        assert.match(
            d.message!,
            /ClusterRole "admin" \(wildcard by aggregation: it aggregates ClusterRole "extra", which has \* verbs on \* resources\)/,
        );
        assert.match(d.message!, /which Stack "Stack\/apps\/app"/);
        // Without the label it feeds nothing bound: admitted.
        const plain = clusterRole("extra", { rules: WILDCARD });
        assert.strictEqual(judgeAdmission({ operation: "CREATE", object: plain }, c, o).allowed, true);
    });

    it("follows aggregation through other aggregating roles (view feeds edit feeds admin)", () => {
        const c = seededCache([...bootstrap, stack, account, bound("admin")]);
        assert.deepStrictEqual(aggregatorNames(feeding("view"), c.aggregatingClusterRoles()).sort(), [
            "admin",
            "edit",
            "view",
        ]);
        assert.ok(namespacesOf(feeding("view"), c).has("apps"));
        const d = judgeAdmission({ operation: "CREATE", object: feeding("view") }, c, o);
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-admin"]);
    });

    it("with no admin in the cache, the bootstrap stand-in's selectors decide", () => {
        const d = judgeAdmission(
            { operation: "CREATE", object: feeding("admin") },
            seededCache([stack, account, bound("admin")]),
            o,
        );
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-admin"]);
    });

    it("an update that adds the label is judged as the create is", () => {
        const c = seededCache([
            ...bootstrap,
            stack,
            account,
            bound("admin"),
            clusterRole("extra", { rules: WILDCARD }),
        ]);
        const d = judgeAdmission(
            { operation: "UPDATE", object: feeding("admin"), oldObject: clusterRole("extra", { rules: WILDCARD }) },
            c,
            o,
        );
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-admin"]);
    });

    it("judges an aggregating role by what its selectors pick, not by the rules the controller copied last", () => {
        const wild = clusterRole("wild", { metadata: { name: "wild", labels: { team: "ops" } }, rules: WILDCARD });
        const mine = clusterRole("mine", {
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: "apps" } }] },
            rules: [],
        });
        const c = seededCache([stack, account, bound("mine"), mine, wild]);
        const widened = {
            ...mine,
            aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: "ops" } }] },
        };
        assert.deepStrictEqual(
            selectedRoles(c.list("ClusterRole"), widened).map((r) => r.metadata!.name),
            ["wild"],
        );
        const d = judgeAdmission({ operation: "UPDATE", object: widened, oldObject: mine }, c, o);
        assert.strictEqual(d.allowed, false);
        assert.deepStrictEqual(blocking(d), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-mine"]);
        // A binding of it made once the cache holds the widened role is denied too: the cache keeps what it selects.
        const after = seededCache([stack, account, widened, wild]);
        assert.deepStrictEqual(
            after.aggregatedClusterRoles().map((r) => r.metadata!.name),
            ["wild"],
        );
        const b = judgeAdmission({ operation: "CREATE", object: bound("mine") }, after, o);
        assert.deepStrictEqual(blocking(b), ["pko-stack-no-cluster-admin RoleBinding/apps/deployer-mine"]);
        // ... and follows the ClusterRoles as they change.
        after.seed("ClusterRole", [widened, { ...wild, metadata: { name: "wild" } }]);
        assert.deepStrictEqual(after.aggregatedClusterRoles(), []);
    });
});
