/**
 * Objects are identified by the cluster they land in plus kind, namespace and name (gitops/manifests/scopes.ts):
 * the same identity in two clusters is two objects, judged each; an identity defined twice in one cluster (or in
 * the files no Application syncs) is judged in each place and reported on each, never bad input; cross-object
 * rules see one cluster at a time. Directory sources only: nothing here runs a tool.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadManifests } from "../../../../gitops/manifests/load";
import { evaluateManifests } from "../../../../gitops/manifests/evaluate-manifests";
import { DUPLICATE_OBJECT } from "../../../../gitops/manifests/scopes";
import { destinationCluster } from "../../../../gitops/argocd/destinations";
import { packConfig } from "../../../../evaluation/pack-config";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

const stack = (name: string, extra = "") =>
    `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${name}\nspec:\n  stack: acme/${name}/prod\n  projectRepo: https://github.com/acme/app\n  branch: main\n  serviceAccountName: deployer\n${extra}`;
const governedStack = (name: string) => stack(name).replace("branch: main", `commit: ${SHA}`);
const adminBinding = (ns: string) =>
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: deployer-admin\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n  - {kind: ServiceAccount, name: deployer, namespace: ${ns}}\n`;
const app = (name: string, p: string, destination: string) =>
    `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ${name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/acme/manifests\n    path: ${p}\n  destination:\n    ${destination}\n    namespace: pulumi\n`;

describe("scopes: objects identified by the cluster they land in", () => {
    let root: string;
    const write = (rel: string, text: string) => {
        const f = path.join(root, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, text);
    };
    const run = () => {
        const load = loadManifests(["."], { repoRoot: root, cwd: root });
        const rows = evaluateManifests(load, packConfig());
        // What these cases are about: blocking findings and duplicates (the Stacks' advisory advice aside).
        return { load, rows: rows.filter((r) => r.level === "mandatory" || r.policy === DUPLICATE_OBJECT) };
    };
    beforeEach(() => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-scopes-")));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("keys a destination by server, or name (in-cluster is the server Argo CD gives it)", () => {
        const dest = (d: object) => destinationCluster({ spec: { destination: d } });
        assert.strictEqual(dest({ server: "https://a.example/" }), "https://a.example");
        assert.strictEqual(dest({ name: "prod" }), "name:prod");
        assert.strictEqual(dest({ name: "in-cluster" }), "https://kubernetes.default.svc");
        assert.strictEqual(dest({ server: "https://kubernetes.default.svc", name: "x" }), dest({ name: "in-cluster" }));
        assert.strictEqual(dest({ namespace: "x" }), "");
    });

    it("one folder sent to two clusters is two objects, each judged and attributed (risky)", () => {
        write("base/stack.yaml", stack("ledger"));
        write("apps/a.yaml", app("ledger-a", "base", "server: https://a.example"));
        write("apps/b.yaml", app("ledger-b", "base", "server: https://b.example"));
        const { load, rows } = run();
        const stacks = load.objects.filter((o) => o.kind === "Stack");
        assert.deepStrictEqual(
            stacks.map((o) => [o.identity, o.scope, o.syncedBy]),
            [
                ["Stack/pulumi/ledger", "https://a.example", "Application argocd/ledger-a"],
                ["Stack/pulumi/ledger", "https://b.example", "Application argocd/ledger-b"],
            ],
        );
        assert.strictEqual(new Set(stacks.map((o) => o.urn)).size, 2);
        assert.deepStrictEqual(load.duplicates, []);
        const pinned = rows.filter((r) => r.policy === "pko-stack-prod-pinned-commit");
        assert.deepStrictEqual(
            pinned.map((r) => [r.resource, r.file, r.syncedBy, r.level]),
            [
                ["Stack/pulumi/ledger", "base/stack.yaml", "Application argocd/ledger-a", "mandatory"],
                ["Stack/pulumi/ledger", "base/stack.yaml", "Application argocd/ledger-b", "mandatory"],
            ],
        );
        assert.ok(!rows.some((r) => r.policy === DUPLICATE_OBJECT));
    });

    it("one folder sent to two clusters, corrected: no finding at all", () => {
        write("base/stack.yaml", governedStack("ledger"));
        write("apps/a.yaml", app("ledger-a", "base", "server: https://a.example"));
        write("apps/b.yaml", app("ledger-b", "base", "name: b"));
        assert.deepStrictEqual(
            run().rows.map((r) => r.policy),
            [],
        );
    });

    it("cross-object rules look within one cluster: a cluster-admin binding empowers the Stack of its own cluster only", () => {
        write("prod/stack.yaml", governedStack("ledger"));
        write("tools/binding.yaml", adminBinding("pulumi"));
        write("apps/prod.yaml", app("prod", "prod", "server: https://prod.example"));
        write("apps/tools.yaml", app("tools", "tools", "server: https://tools.example"));
        assert.deepStrictEqual(
            run().rows.filter((r) => r.policy === "pko-stack-no-cluster-admin"),
            [],
        );
        // The same binding sent to the Stack's cluster grants it cluster-admin (risky).
        write("apps/tools.yaml", app("tools", "tools", "server: https://prod.example"));
        const admin = run().rows.filter((r) => r.policy === "pko-stack-no-cluster-admin");
        assert.ok(admin.length >= 1);
        assert.ok(admin.every((r) => r.resource === "ClusterRoleBinding/deployer-admin"));
    });

    it("an identity defined twice in the files no Application syncs: judged in each place, an advisory finding on both", () => {
        write("clusters/a/stack.yaml", stack("ledger").replace("metadata:\n", "metadata:\n  namespace: pulumi\n"));
        write("clusters/b/stack.yaml", stack("ledger").replace("metadata:\n", "metadata:\n  namespace: pulumi\n"));
        const { load, rows } = run();
        assert.deepStrictEqual(
            load.duplicates?.map((g) => g.map((o) => o.file)),
            [["clusters/a/stack.yaml", "clusters/b/stack.yaml"]],
        );
        const dup = rows.filter((r) => r.policy === DUPLICATE_OBJECT);
        assert.deepStrictEqual(
            dup.map((r) => [r.resource, r.file, r.line, r.level]),
            [
                ["Stack/pulumi/ledger", "clusters/a/stack.yaml", 1, "advisory"],
                ["Stack/pulumi/ledger", "clusters/b/stack.yaml", 1, "advisory"],
            ],
        );
        assert.match(
            dup[0].message,
            /is defined 2 times in the files no Application syncs: "clusters\/a\/stack\.yaml:1", "clusters\/b\/stack\.yaml:1"; /,
        );
        assert.strictEqual(dup[0].field, undefined);
        // Each definition judged by the rules.
        assert.deepStrictEqual(
            rows.filter((r) => r.policy === "pko-stack-prod-pinned-commit").map((r) => r.file),
            ["clusters/a/stack.yaml", "clusters/b/stack.yaml"],
        );
        assert.strictEqual(new Set(load.objects.map((o) => o.urn)).size, 2);
        assert.match(
            load.objects[1].urn,
            /^urn:pulumi:check::manifests::pko-guard:copy:2\$kubernetes:pulumi\.com\/v1:Stack::Stack\/pulumi\/ledger$/,
        );
    });

    it("two Applications sending two definitions to one cluster: the duplicate names the cluster and both Applications", () => {
        write("a/stack.yaml", governedStack("ledger"));
        write("b/stack.yaml", governedStack("ledger"));
        write("apps/a.yaml", app("a", "a", "name: in-cluster"));
        write("apps/b.yaml", app("b", "b", "server: https://kubernetes.default.svc"));
        const dup = run().rows.filter((r) => r.policy === DUPLICATE_OBJECT);
        assert.deepStrictEqual(
            dup.map((r) => [r.file, r.syncedBy]),
            [
                ["a/stack.yaml", "Application argocd/a"],
                ["b/stack.yaml", "Application argocd/b"],
            ],
        );
        assert.match(
            dup[0].message,
            /defined 2 times in cluster "https:\/\/kubernetes\.default\.svc": "a\/stack\.yaml:1" \(Application argocd\/a\), "b\/stack\.yaml:1" \(Application argocd\/b\); /,
        );
    });

    it("one folder synced twice into one cluster and namespace stays one object", () => {
        write("base/stack.yaml", governedStack("ledger"));
        write("apps/a.yaml", app("a", "base", "server: https://x.example"));
        write("apps/b.yaml", app("b", "base", "server: https://x.example"));
        const { load, rows } = run();
        assert.deepStrictEqual(
            load.objects.filter((o) => o.kind === "Stack").map((o) => o.syncedBy),
            ["Application argocd/b"],
        );
        assert.deepStrictEqual(rows, []);
    });
});
