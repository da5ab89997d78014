/**
 * The webhook's deployment manifests (deploy/webhook/) are accepted by a real API server as they are
 * (`kubectl apply --dry-run=server`: schema, defaulting and admission checks of the server itself), and
 * the RBAC they grant is list and watch, the enforce loop's deletes and Leases in the webhook's own namespace
 * (asked of the server with `kubectl auth can-i`).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";
import { WATCHED_KINDS } from "../../../../cluster/kinds";
import {
    ApiServer,
    installApplicationCrd,
    installFluxCrds,
    installPkoCrds,
    startApiServer,
} from "../../../../harness/apiserver";
import { requireCluster } from "../../../support/cluster";

const DEPLOY = path.join(REPO_ROOT, "deploy", "webhook");

describe("deploy/webhook manifests against a real API server", function () {
    this.timeout(600_000);
    let server: ApiServer;
    before(async function () {
        requireCluster(this);
        server = await startApiServer();
        await installPkoCrds(server);
        await installApplicationCrd(server);
        // Flux's kinds, so `kubectl auth can-i` resolves them (schemas/flux, committed from Flux's controllers).
        await installFluxCrds(server);
    });
    after(async () => server?.stop());

    it("pass kubectl apply --dry-run=server, and the RBAC is applied for real", async () => {
        const files = fs.readdirSync(DEPLOY).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
        assert.deepStrictEqual(files.sort(), [
            "deployment.yaml",
            "namespace.yaml",
            "rbac.yaml",
            "validatingwebhookconfiguration.yaml",
        ]);
        // The namespace exists for real first: a dry run of namespaced objects needs it.
        const ns = await server.kubectl(["apply", "-f", path.join(DEPLOY, "namespace.yaml")]);
        assert.strictEqual(ns.code, 0, ns.stderr);
        const dry = await server.kubectl([
            "apply",
            "--dry-run=server",
            ...files.flatMap((f) => ["-f", path.join(DEPLOY, f)]),
        ]);
        assert.strictEqual(dry.code, 0, dry.stderr);
        for (const kind of [
            "deployment.apps/pko-guard-webhook",
            "poddisruptionbudget.policy/pko-guard-webhook",
            "service/pko-guard-webhook",
            "validatingwebhookconfiguration.admissionregistration.k8s.io/pko-guard",
        ]) {
            assert.match(dry.stdout, new RegExp(`${kind.replace(/[./]/g, "\\$&")} created \\(server dry run\\)`));
        }
        const rbac = await server.kubectl(["apply", "-f", path.join(DEPLOY, "rbac.yaml")]);
        assert.strictEqual(rbac.code, 0, rbac.stderr);
    });

    it("kubectl apply -k applies every file, the namespace first and the webhook configuration last", async () => {
        const built = await server.kubectl(["kustomize", DEPLOY]);
        assert.strictEqual(built.code, 0, built.stderr);
        const kinds = [...built.stdout.matchAll(/^kind: (\S+)$/gm)].map((m) => m[1]);
        assert.strictEqual(kinds[0], "Namespace");
        assert.strictEqual(kinds[kinds.length - 1], "ValidatingWebhookConfiguration");
        assert.deepStrictEqual([...new Set(kinds)].sort(), [
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "Namespace",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
        ]);
        const dry = await server.kubectl(["apply", "--dry-run=server", "-k", DEPLOY]);
        assert.strictEqual(dry.code, 0, dry.stderr);
    });

    it("the webhook's account may list and watch every watched kind, delete bindings, claim Leases in its namespace, and nothing more", async () => {
        const as = ["--as", "system:serviceaccount:pko-guard-system:pko-guard-webhook"];
        const resources: Record<string, string> = {
            ServiceAccount: "serviceaccounts",
            Secret: "secrets",
            Role: "roles.rbac.authorization.k8s.io",
            ClusterRole: "clusterroles.rbac.authorization.k8s.io",
            RoleBinding: "rolebindings.rbac.authorization.k8s.io",
            ClusterRoleBinding: "clusterrolebindings.rbac.authorization.k8s.io",
            Stack: "stacks.pulumi.com",
            Program: "programs.pulumi.com",
            Workspace: "workspaces.auto.pulumi.com",
            Update: "updates.auto.pulumi.com",
            Application: "applications.argoproj.io",
            GitRepository: "gitrepositories.source.toolkit.fluxcd.io",
            OCIRepository: "ocirepositories.source.toolkit.fluxcd.io",
            Bucket: "buckets.source.toolkit.fluxcd.io",
        };
        for (const k of WATCHED_KINDS) {
            const resource = resources[k.kind];
            assert.ok(resource, `a resource name for ${k.kind}`);
            for (const verb of ["list", "watch"]) {
                const r = await server.kubectl(["auth", "can-i", verb, resource, "-A", ...as]);
                assert.strictEqual(r.stdout.trim(), "yes", `${verb} ${resource}: ${r.stderr}`);
            }
            // The enforce loop's one write: deleting bindings (cluster/enforce.ts).
            const deletes = k.kind === "RoleBinding" || k.kind === "ClusterRoleBinding";
            for (const verb of ["get", "create", "update", "patch", "delete"]) {
                const r = await server.kubectl(["auth", "can-i", verb, resource, "-A", ...as]);
                const allowed = verb === "delete" && deletes;
                assert.strictEqual(r.stdout.trim(), allowed ? "yes" : "no", `${verb} ${resource}`);
            }
        }
        // The claims of interacting reviews (cluster/claims.ts): Leases in its own namespace, and nowhere else.
        const leases = "leases.coordination.k8s.io";
        for (const verb of ["get", "list", "create", "update", "delete", "patch", "watch", "deletecollection"]) {
            const own = await server.kubectl(["auth", "can-i", verb, leases, "-n", "pko-guard-system", ...as]);
            const allowed = ["get", "list", "create", "update", "delete"].includes(verb);
            assert.strictEqual(own.stdout.trim(), allowed ? "yes" : "no", `${verb} ${leases} in pko-guard-system`);
            for (const elsewhere of [["-n", "kube-system"], ["-n", "default"], ["-A"]]) {
                const r = await server.kubectl(["auth", "can-i", verb, leases, ...elsewhere, ...as]);
                assert.strictEqual(r.stdout.trim(), "no", `${verb} ${leases} ${elsewhere.join(" ")}`);
            }
        }
    });
});
