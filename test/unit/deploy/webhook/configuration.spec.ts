/**
 * The shipped webhook configuration (deploy/webhook/) and the kinds the rules read (cluster/kinds.ts
 * WATCHED_KINDS) are one list: every watched kind's creates and updates are sent to the webhook and its
 * ClusterRole lists and watches them, nothing else. No namespace is left out: the configuration has no
 * namespace or object selector, and its matchConditions free named control-plane identities, each for its own
 * kind of write, never a namespace's accounts as a whole.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../../../../support/paths";
import { WATCHED_KINDS, groupOf } from "../../../../cluster/kinds";

const DEPLOY = path.join(REPO_ROOT, "deploy", "webhook");
type Doc = Record<string, any>;

function docs(file: string): Doc[] {
    return YAML.parseAllDocuments(fs.readFileSync(path.join(DEPLOY, file), "utf8")).map((d) => d.toJS() as Doc);
}

/** `group/resource` of every watched kind ("" for the core group), from its list path. */
const watched = new Set(
    WATCHED_KINDS.map((k) => {
        const group = groupOf(k.apiVersion);
        return `${group === "core" ? "" : group}/${k.path.split("/").pop()}`;
    }),
);

function pairs(rules: Doc[]): Set<string> {
    return new Set(
        rules.flatMap((r) => r.apiGroups.flatMap((g: string) => r.resources.map((x: string) => `${g}/${x}`))),
    );
}

describe("deploy/webhook: the configuration and the watched kinds", () => {
    const [config] = docs("validatingwebhookconfiguration.yaml");
    const webhook = config.webhooks[0];

    it("sends the creates and updates of every watched kind, PKO's Program, Workspace and Update included, and nothing else", () => {
        assert.deepStrictEqual([...pairs(webhook.rules)].sort(), [...watched].sort());
        for (const x of ["pulumi.com/programs", "auto.pulumi.com/workspaces", "auto.pulumi.com/updates"])
            assert.ok(watched.has(x), x);
        for (const r of webhook.rules)
            assert.deepStrictEqual(
                r.operations,
                r.resources.includes("stacks") ? ["CREATE", "UPDATE", "DELETE"] : ["CREATE", "UPDATE"],
            );
    });

    it("sends the deletions of Stacks alone, and of those only the ones whose destroyOnFinalize is set", () => {
        const deleting = webhook.rules.filter((r: Doc) => r.operations.includes("DELETE"));
        assert.deepStrictEqual(
            deleting.map((r: Doc) => [r.apiGroups, r.resources]),
            [[["pulumi.com"], ["stacks"]]],
        );
        const only = webhook.matchConditions.find((m: Doc) => m.name === "only-deletes-that-destroy");
        assert.match(only.expression, /request\.operation != 'DELETE' \|\|/);
        assert.match(only.expression, /oldObject\.spec\.destroyOnFinalize == true/);
    });

    it("lets the webhook's account list and watch every watched kind, and nothing else", () => {
        const role = docs("rbac.yaml").find((d) => d.kind === "ClusterRole")!;
        assert.deepStrictEqual([...pairs(role.rules)].sort(), [...watched].sort());
        for (const r of role.rules) assert.deepStrictEqual(r.verbs, ["list", "watch"]);
    });

    it("the enforce loop's one write: deleting bindings, bound to the webhook's account, and turned on", () => {
        const all = docs("rbac.yaml");
        const role = all.find((d) => d.kind === "ClusterRole" && d.metadata.name === "pko-guard-webhook-enforce")!;
        assert.deepStrictEqual(role.rules, [
            {
                apiGroups: ["rbac.authorization.k8s.io"],
                resources: ["rolebindings", "clusterrolebindings"],
                verbs: ["delete"],
            },
        ]);
        const binding = all.find((d) => d.kind === "ClusterRoleBinding" && d.roleRef.name === role.metadata.name)!;
        assert.deepStrictEqual(binding.subjects, [
            { kind: "ServiceAccount", name: "pko-guard-webhook", namespace: "pko-guard-system" },
        ]);
        const deployment = docs("deployment.yaml").find((d) => d.kind === "Deployment")!;
        assert.ok(deployment.spec.template.spec.containers[0].args.includes("--enforce"));
    });

    it("leaves no namespace out: identities are freed by name, kube-system's other accounts are judged", () => {
        assert.strictEqual(webhook.namespaceSelector, undefined);
        assert.strictEqual(webhook.objectSelector, undefined);
        assert.strictEqual(webhook.failurePolicy, "Fail");
        const names = webhook.matchConditions.map((m: Doc) => m.name);
        assert.deepStrictEqual(names, [
            "not-the-control-plane",
            "not-a-finalizer-update-of-an-object-being-deleted",
            "only-deletes-that-destroy",
        ]);
        const identities = webhook.matchConditions[0].expression as string;
        for (const who of [
            "system:apiserver",
            "system:kube-controller-manager",
            "system:serviceaccount:kube-system:service-account-controller",
            "system:serviceaccount:kube-system:clusterrole-aggregation-controller",
            "system:serviceaccount:kube-system:generic-garbage-collector",
            "system:serviceaccount:kube-system:legacy-service-account-token-cleaner",
        ])
            assert.ok(identities.includes(`'${who}'`), who);
        // The webhook's own account writes nothing: freeing it would only free whoever holds its token.
        assert.doesNotMatch(identities, /pko-guard-webhook/);
        // Each controller is freed only with the kind of its one write (test/chaos/cluster/objects-probes.spec.ts).
        for (const kind of ["ServiceAccount", "Secret", "ClusterRole"])
            assert.ok(identities.includes(`request.kind.kind == '${kind}'`), kind);
        // Names compared whole: no prefix, namespace or group match that would free every account of kube-system.
        assert.doesNotMatch(identities, /startsWith|matches|groups|namespace/);
        assert.strictEqual(docs("namespace.yaml")[0].metadata.labels, undefined);
    });
});
