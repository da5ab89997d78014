/**
 * End to end: every fixture without mandatory violations, and the governed Argo CD + PKO example, goes
 * through preview with the pack -> `pulumi up` against the run's test API server (objects created for
 * real) -> validation of every PKO object as sent against the PKO v2.9.0 CRD schemas and of Secrets,
 * service accounts and RBAC against the Kubernetes OpenAPI schema (undeclared fields) -> `pulumi destroy`
 * -> an empty stack and none of the objects left in the cluster. The validator itself is shown to reject
 * invalid manifests.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ManifestValidator } from "../../../harness/schema-validation";
import { REPO_ROOT } from "../../../support/paths";
import { loadFixtures, runFixtures } from "../../../harness/runner";
import { requireToolchain } from "../../support/helpers";

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
            spec: {
                stack: "acme/app/dev",
                projectRepo: "https://github.com/acme/app",
                branch: "main",
                destroyOnFinalize: true,
                envRefs: { PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "t", key: "k" } } },
            },
        };
        assert.strictEqual(validator.validate("s.yaml", stack).status, "valid");
        const { stack: _required, ...withoutStack } = stack.spec;
        const bad = { ...stack, spec: { ...withoutStack, destroyOnFinalize: "yes", resyncFrequencySeconds: "often" } };
        const r = validator.validate("s.yaml", bad);
        assert.strictEqual(r.status, "invalid");
        assert.deepStrictEqual(r.errors.sort(), [
            "/spec must have required property 'stack'",
            "/spec/destroyOnFinalize must be boolean",
            "/spec/resyncFrequencySeconds must be integer",
        ]);
        const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "t" }, stringData: { k: "v" } };
        assert.strictEqual(validator.validate("t.yaml", secret).status, "valid");
        assert.strictEqual(validator.validate("t.yaml", { ...secret, stringData: { k: 1 } }).status, "invalid");
        const crb = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "b" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
            subjects: [{ kind: "ServiceAccount", name: "a", namespace: "n" }],
        };
        assert.strictEqual(validator.validate("b.yaml", crb).status, "valid");
        assert.strictEqual(
            validator.validate("b.yaml", { ...crb, roleRef: { kind: "ClusterRole" } }).status,
            "invalid",
        );
        // Argo CD's Application against Argo CD's own CRD: required fields, types, undeclared fields.
        const app = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name: "a", namespace: "argocd", finalizers: ["resources-finalizer.argocd.argoproj.io"] },
            spec: {
                project: "default",
                source: { repoURL: "https://github.com/acme/m.git", path: "p" },
                destination: { server: "https://kubernetes.default.svc", namespace: "pulumi" },
            },
        };
        assert.strictEqual(
            validator.validate("a.yaml", app).status,
            "valid",
            validator.validate("a.yaml", app).errors.join("; "),
        );
        assert.deepStrictEqual(
            validator
                .validate("a.yaml", {
                    ...app,
                    spec: { ...app.spec, project: 1, syncPolicy: { automated: { prun: true } } },
                })
                .errors.sort(),
            [
                "/spec/project must be string",
                "spec.syncPolicy.automated.prun: unknown field (the API server prunes it, or rejects it under strict field validation)",
            ],
        );
        assert.strictEqual(
            validator.validate("d.yaml", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } }).status,
            "unvalidated",
        );
    });

    it("checks PKO v2 fields against the v2.9.0 schema and rejects fields the schemas do not declare", () => {
        const stack = {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: "s", namespace: "pulumi" },
            spec: {
                stack: "acme/app/dev",
                projectRepo: "https://github.com/acme/app",
                commit: "a".repeat(40),
                serviceAccountName: "pko",
                configRef: { region: { name: "c", key: "k" } },
                gitAuth: {
                    githubApp: {
                        appID: { type: "Literal", literal: { value: "1" } },
                        installationID: { type: "Literal", literal: { value: "2" } },
                        privateKey: { type: "Secret", secret: { name: "g", key: "pem" } },
                    },
                },
                workspaceTemplate: {
                    metadata: { labels: { a: "b" } },
                    spec: {
                        image: "x",
                        podTemplate: {
                            metadata: { annotations: { a: "b" } },
                            spec: { serviceAccountName: "other", containers: [{ name: "pulumi" }] },
                        },
                    },
                },
            },
        };
        const ok = validator.validate("s.yaml", stack);
        assert.strictEqual(ok.status, "valid", ok.errors.join("; "));
        const badV2 = validator.validate("s.yaml", {
            ...stack,
            spec: {
                ...stack.spec,
                workspaceReclaimPolicy: "Sometimes",
                workspaceTemplate: { spec: { podTemplate: { spec: { serviceAccount: 1, contianers: [] } } } },
            },
        });
        // The pod template is a PodSpec: containers is required (so the typo leaves it missing).
        assert.deepStrictEqual(badV2.errors.map((e) => e.split(" ")[0]).sort(), [
            "/spec/workspaceReclaimPolicy",
            "/spec/workspaceTemplate/spec/podTemplate/spec",
            "/spec/workspaceTemplate/spec/podTemplate/spec/serviceAccount",
            "spec.workspaceTemplate.spec.podTemplate.spec.contianers:",
        ]);
        const program = {
            apiVersion: "pulumi.com/v1",
            kind: "Program",
            metadata: { name: "p" },
            program: {
                resources: { r: { type: "kubernetes:core/v1:ConfigMap" } },
                variables: { v: { "fn::secret": "x" } },
            },
        };
        assert.strictEqual(
            validator.validate("p.yaml", program).status,
            "valid",
            validator.validate("p.yaml", program).errors.join("; "),
        );
        const workspace = {
            apiVersion: "auto.pulumi.com/v1alpha1",
            kind: "Workspace",
            metadata: { name: "w" },
            spec: {
                serviceAccountName: "w",
                git: { url: "https://github.com/acme/app", ref: "main" },
                stacks: [{ name: "dev" }],
            },
        };
        assert.strictEqual(
            validator.validate("w.yaml", workspace).status,
            "valid",
            validator.validate("w.yaml", workspace).errors.join("; "),
        );
        assert.strictEqual(
            validator.validate("w.yaml", { ...workspace, spec: { ...workspace.spec, privileged: true } }).status,
            "invalid",
        );
        const typo = validator.validate("s.yaml", {
            ...stack,
            metadata: { name: "s", lables: {} },
            spec: {
                ...stack.spec,
                destroyOnFinalise: true,
                envRefs: { T: { type: "Secret", secret: { name: "t", key: "k", value: "x" } } },
            },
        });
        assert.strictEqual(typo.status, "invalid");
        assert.deepStrictEqual(typo.errors.map((e) => e.split(":")[0]).sort(), [
            "metadata.lables",
            "spec.destroyOnFinalise",
            "spec.envRefs.T.secret.value",
        ]);
        const secret = validator.validate("t.yaml", {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "t" },
            strinData: { k: "v" },
        });
        assert.strictEqual(secret.status, "invalid");
        assert.match(secret.errors[0], /^strinData: unknown field/);
        const sa = validator.validate("sa.yaml", {
            apiVersion: "v1",
            kind: "ServiceAccount",
            metadata: { name: "a", labels: { x: "y" } },
            automountServiceAccountToken: false,
        });
        assert.strictEqual(sa.status, "valid");
    });

    it("a PKO object without a schema and a broken YAML document are failures, not skipped", () => {
        const r = validator.validate("s.yaml", {
            apiVersion: "pulumi.com/v2",
            kind: "Stack",
            metadata: { name: "s" },
            spec: {},
        });
        assert.deepStrictEqual(
            [r.status, r.errors],
            ["invalid", ["no schema for pulumi.com/v2/Stack in the PKO v2.9.0 CRDs"]],
        );
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-manifests-"));
        try {
            fs.mkdirSync(path.join(dir, "1-manifest"));
            fs.writeFileSync(
                path.join(dir, "1-manifest", "a.yaml"),
                "apiVersion: v1\nkind: Secret\nmetadata: {name: t\n",
            );
            fs.writeFileSync(
                path.join(dir, "1-manifest", "b.yaml"),
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
            );
            const results = validator.validateDirectory(dir);
            assert.deepStrictEqual(
                results.map((m) => [m.kind, m.status]),
                [
                    ["(YAML)", "invalid"],
                    ["apps/v1/Deployment", "unvalidated"],
                ],
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("deploys, validates and destroys every clean fixture and the governed example", async () => {
        const fixtures = loadFixtures([
            path.join(REPO_ROOT, "fixtures"),
            path.join(REPO_ROOT, "examples", "argocd-pko"),
        ]);
        const verdicts = await runFixtures(fixtures, { leg: "deploy", timeoutMs: 300000 });
        const deployed = verdicts.filter((v) => v.legs[0].status === "ran");
        const failures = verdicts.flatMap((v) =>
            v.checks.filter((c) => c.outcome === "mismatch" || c.outcome === "error"),
        );
        assert.deepStrictEqual(failures, []);
        const names = deployed.map((v) => v.fixture);
        for (const must of ["argocd-pko", "multi-stack-governed", "governed-oidc-esc", "pko-guide-token-secret"])
            assert.ok(names.includes(must), `${must} was not deployed`);
        for (const v of deployed) {
            const stacks = v.checks.filter((c) => c.check?.startsWith("schema pulumi.com/"));
            assert.ok(stacks.length > 0, `${v.fixture}: no Stack manifest validated`);
            assert.ok(
                v.checks.some((c) => c.check === "destroy" && c.outcome === "match"),
                `${v.fixture}: not destroyed`,
            );
            // Created for real in the test API server, and gone from it after destroy.
            const created = v.checks.filter((c) => c.check === "created");
            const deleted = v.checks.filter((c) => c.check === "deleted from the cluster");
            assert.ok(
                created.length > 0 && created.every((c) => c.outcome === "match"),
                `${v.fixture}: not created in the cluster`,
            );
            assert.deepStrictEqual(
                deleted.map((c) => c.resource).sort(),
                created.map((c) => c.resource).sort(),
                `${v.fixture}: not every created object checked after destroy`,
            );
        }
        // Every rendered Stack, v2 fields included, is checked against the PKO v2.9.0 schema.
        const governed = verdicts.find((v) => v.fixture === "multi-stack-governed")!;
        const stackChecks = governed.checks.filter((c) => c.check === "schema pulumi.com/v1/Stack");
        assert.strictEqual(stackChecks.length, 2);
        for (const c of stackChecks)
            assert.deepStrictEqual([c.outcome, c.note], ["match", "against the PKO v2.9.0 CRD schema"]);
        // The example's Applications, with Argo CD's finalizer, are validated against Argo CD's CRD, created
        // and, with the harness standing in for Argo CD's controller, deleted.
        const argo = verdicts.find((v) => v.fixture === "argocd-pko")!;
        const apps = argo.checks.filter((c) => c.check === "schema argoproj.io/v1alpha1/Application");
        assert.deepStrictEqual(
            apps.map((c) => [c.resource, c.outcome, c.note]).sort(),
            ["webapp-dev", "webapp-prod"].map((n) => [n, "match", "against Argo CD v3.6.1's Application CRD"]),
        );
        for (const check of ["created", "deleted from the cluster"]) {
            assert.deepStrictEqual(
                argo.checks
                    .filter((c) => c.check === check && c.resource.startsWith("Application/"))
                    .map((c) => [c.resource, c.outcome])
                    .sort(),
                [
                    ["Application/webapp-dev", "match"],
                    ["Application/webapp-prod", "match"],
                ],
            );
        }
        // A fixture with mandatory violations is stopped by the gate, shown as skipped, never as deployed.
        const stopped = verdicts.find((v) => v.fixture === "creds-literal-token")!;
        const leg = stopped.legs[0];
        assert.match(leg.status === "skipped" ? leg.reason : "", /mandatory violations/);
    });
});
