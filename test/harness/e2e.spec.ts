/**
 * End to end: every fixture without mandatory violations, and the governed Argo CD + PKO example, goes
 * through preview with the pack -> `pulumi up` rendering YAML -> validation of every rendered PKO Stack
 * against the CRD schema generated from the operator's API types and of Secrets, service accounts and
 * RBAC against the Kubernetes OpenAPI schema -> `pulumi destroy` -> an empty stack. The validator itself
 * is shown to reject invalid manifests.
 */
import * as assert from "assert";
import * as path from "path";
import { ManifestValidator } from "../../harness/manifests";
import { REPO_ROOT } from "../../harness/paths";
import { loadFixtures, runFixtures } from "../../harness/runner";
import { requireToolchain } from "../helpers";

describe("end to end (deploy leg)", function () {
    this.timeout(3600000);
    let validator: ManifestValidator;

    before(function () {
        requireToolchain(this);
        validator = new ManifestValidator();
    });

    it("the schemas reject invalid manifests and accept valid ones", () => {
        const stack = {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: "s", namespace: "pulumi" },
            spec: { stack: "acme/app/dev", projectRepo: "https://github.com/acme/app", branch: "main", destroyOnFinalize: true, envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "t", key: "k" } } } },
        };
        assert.strictEqual(validator.validate("s.yaml", stack).status, "valid");
        const bad = { ...stack, spec: { ...stack.spec, destroyOnFinalize: "yes", envRefs: { X: { type: "Vault" } } } };
        const r = validator.validate("s.yaml", bad);
        assert.strictEqual(r.status, "invalid");
        assert.ok(r.errors.length >= 2, r.errors.join("; "));
        const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "t" }, stringData: { k: "v" } };
        assert.strictEqual(validator.validate("t.yaml", secret).status, "valid");
        assert.strictEqual(validator.validate("t.yaml", { ...secret, stringData: { k: 1 } }).status, "invalid");
        const crb = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "b" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" }, subjects: [{ kind: "ServiceAccount", name: "a", namespace: "n" }] };
        assert.strictEqual(validator.validate("b.yaml", crb).status, "valid");
        assert.strictEqual(validator.validate("b.yaml", { ...crb, roleRef: { kind: "ClusterRole" } }).status, "invalid");
        assert.strictEqual(validator.validate("a.yaml", { apiVersion: "argoproj.io/v1alpha1", kind: "Application" }).status, "unvalidated");
    });

    it("deploys, validates and destroys every clean fixture and the governed example", async () => {
        const fixtures = loadFixtures([path.join(REPO_ROOT, "fixtures"), path.join(REPO_ROOT, "examples")]);
        const verdicts = await runFixtures(fixtures, { leg: "deploy", timeoutMs: 300000 });
        const deployed = verdicts.filter((v) => v.legs[0].checks !== undefined);
        const failures = verdicts.flatMap((v) => v.checks.filter((c) => c.outcome === "mismatch" || c.outcome === "error"));
        assert.deepStrictEqual(failures, []);
        const names = deployed.map((v) => v.fixture);
        for (const must of ["argocd-pko", "multi-stack-governed", "governed-oidc-esc", "pko-guide-token-secret"]) assert.ok(names.includes(must), `${must} was not deployed`);
        for (const v of deployed) {
            const stacks = v.checks.filter((c) => c.policy.startsWith("schema pulumi.com/"));
            assert.ok(stacks.length > 0, `${v.fixture}: no Stack manifest validated`);
            assert.ok(v.checks.some((c) => c.policy === "(destroy)" && c.outcome === "match"), `${v.fixture}: not destroyed`);
        }
        // A fixture with mandatory violations is stopped by the gate, shown as skipped, never as deployed.
        const stopped = verdicts.find((v) => v.fixture === "creds-literal-token")!;
        assert.match(stopped.legs[0].skipped ?? "", /mandatory violations/);
    });
});
