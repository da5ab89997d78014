/**
 * `pko-guard webhook` and `pko-guard audit` against a real API server built from source, as a user runs
 * them (the CLI from bin/, started from a folder outside the repository): the webhook registered through
 * the repository's own ValidatingWebhookConfiguration (deploy/webhook/, pointed at the local server with
 * its CA bundle), `kubectl apply` of the guide's manifests denied for the cluster-admin binding and the
 * moving production branch and the corrected ones admitted, the cross-object rule in both orders,
 * kube-system judged like any namespace, a ClusterRole judged by the role it feeds by aggregation, PKO's
 * Workspace and Program objects judged (and audited), advisory findings as kubectl warnings, what was
 * admitted before the webhook existed found by audit, and the configured failurePolicy when the webhook is
 * down (door.spec.ts shows what it leaves free). Waits are on conditions only.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { Spawned, makeTempDir, spawnTracked } from "../../../support/process";
import { ApiServer, installApplicationCrd, installPkoCrds, startApiServer } from "../../../harness/apiserver";
import { freePort } from "../../../harness/ports";
import { CertPair, issueCert } from "../../../harness/certs";
import { Doc, guideDocs, namespaceYaml, namespacesOf, requireCluster, until, yaml } from "../../support/cluster";

const CLI = CLI_ENTRY;
const CANARY = "canary-9d4e2b7a61";

function get(port: number, p: string, ca: Buffer): Promise<{ status: number; body: string }> {
    return new Promise((resolve) => {
        https
            .get({ host: "127.0.0.1", port, path: p, ca, timeout: 10_000 }, (res) => {
                let body = "";
                res.on("data", (d) => (body += d));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on("error", () => resolve({ status: 0, body: "" }));
    });
}

/** The repository's webhook configuration, pointed at a URL with a CA bundle instead of the in-cluster Service. */
function webhookConfiguration(url: string, caBundle: string, failurePolicy?: string): string {
    const doc = jsyaml.load(
        fs.readFileSync(path.join(REPO_ROOT, "deploy", "webhook", "validatingwebhookconfiguration.yaml"), "utf8"),
    ) as Doc;
    for (const w of doc.webhooks) {
        w.clientConfig = { url: `${url}/validate`, caBundle };
        if (failurePolicy) w.failurePolicy = failurePolicy;
    }
    return jsyaml.dump(doc);
}

describe("pko-guard webhook and audit against a real API server", function () {
    this.timeout(900_000);
    let server: ApiServer;
    let work: string;
    let tls: CertPair;
    let port: number;
    let hook: Spawned | undefined;
    let logs = "";
    let caPem: Buffer;

    const startWebhook = async () => {
        port = await freePort();
        logs = "";
        hook = spawnTracked(
            process.execPath,
            [
                CLI,
                "webhook",
                "--cert",
                tls.cert,
                "--key",
                tls.key,
                "--port",
                String(port),
                "--kubeconfig",
                server.kubeconfig,
            ],
            {
                cwd: work,
                stdio: ["ignore", "pipe", "pipe"],
            },
        );
        hook.child.stdout!.on("data", (d) => (logs += d));
        hook.child.stderr!.on("data", (d) => (logs += d));
        await until("the webhook's /readyz", async () => {
            if (hook!.child.exitCode !== null) throw new Error(`the webhook exited: ${logs}`);
            return (await get(port, "/readyz", caPem)).status === 200;
        });
    };
    const register = (failurePolicy?: string) =>
        server.apply(webhookConfiguration(`https://127.0.0.1:${port}`, caPem.toString("base64"), failurePolicy));
    const apply = async (docs: Doc[]) => {
        const namespaces = namespacesOf(docs);
        if (namespaces.length > 0) await server.apply(yaml(namespaces));
        return server.kubectl(["apply", "-f", "-"], yaml(docs));
    };
    const exists = async (kind: string, ns: string, name: string) =>
        (await server.kubectl(["get", kind, name, ...(ns ? ["-n", ns] : [])])).code === 0;
    const audit = (args: string[]) => {
        const r = require("child_process").spawnSync(
            process.execPath,
            [CLI, "audit", "--kubeconfig", server.kubeconfig, ...args],
            { cwd: work, encoding: "utf8", timeout: 300_000 },
        );
        return { code: r.status as number | null, stdout: r.stdout as string, stderr: r.stderr as string };
    };

    before(async function () {
        requireCluster(this);
        server = await startApiServer();
        await installPkoCrds(server);
        await installApplicationCrd(server);
        work = makeTempDir("webhook-test");
        tls = issueCert(server.ca, "webhook", { ips: ["127.0.0.1"], dns: ["localhost"] });
        caPem = fs.readFileSync(server.ca.cert);
        for (const ns of ["legacy", "guide", "governed", "xa", "xb", "creds", "down"])
            await server.apply(namespaceYaml(ns));
        // Admitted before any webhook exists: the guide's production setup, as it is (cluster-admin, branch).
        const legacy = await apply(guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "legacy"));
        assert.strictEqual(legacy.code, 0, legacy.stderr);
        await startWebhook();
        await register();
    });
    after(async () => {
        hook?.kill();
        await hook?.exited;
        await server?.stop();
    });

    it("audit finds what was admitted before the webhook existed (check's table, exit code, JSON and PolicyReport reports)", () => {
        const report = path.join(work, "audit.json");
        const policyReport = path.join(work, "audit-policyreport.yaml");
        const r = audit(["--report", `json=${report}`, "--report", `policyreport=${policyReport}`]);
        assert.strictEqual(r.code, 1, r.stderr + r.stdout);
        assert.match(r.stdout, /pko-stack-no-cluster-admin/);
        assert.match(r.stdout, /FAIL/);
        const json = JSON.parse(fs.readFileSync(report, "utf8"));
        const findings = JSON.stringify(json);
        assert.match(findings, /ClusterRoleBinding\/legacy-webapp:cluster-admin/);
        assert.match(findings, /Stack\/legacy\/webapp-production/);
        assert.match(findings, /pko-stack-prod-pinned-commit/);
        const pr = fs.readFileSync(policyReport, "utf8");
        assert.match(pr, /apiVersion: "wgpolicyk8s\.io\/v1alpha2"/);
        assert.match(pr, /pko-stack-no-cluster-admin/);
    });

    it("audit exits 2 with one line for an unreadable kubeconfig or an unknown context", () => {
        const missing = audit(["--kubeconfig", path.join(work, "nope")]);
        assert.strictEqual(missing.code, 2);
        const ctx = audit(["--context", "nope"]);
        assert.strictEqual(ctx.code, 2);
        assert.strictEqual(ctx.stderr.trim().split("\n").length, 1, ctx.stderr);
    });

    it("denies the guide's production Stack (cluster-admin, moving branch) naming each rule, the field and the fix; the binding alone is a warning", async () => {
        const r = await apply(guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "guide"));
        assert.notStrictEqual(r.code, 0, r.stdout);
        assert.match(r.stderr, /denied the request/);
        assert.match(
            r.stderr,
            /pko-stack-no-cluster-admin: .*grants cluster-admin to ServiceAccount guide\/webapp.*Fix: /,
        );
        assert.match(r.stderr, /pko-stack-prod-pinned-commit: .*\(field spec\.branch\) Fix: Set spec\.commit/);
        // The binding came first, when no Stack ran as the account: admitted, with the advisory rule's warning.
        assert.match(r.stderr, /Warning: rbac-no-cluster-admin-serviceaccount/);
        assert.ok(!(await exists("stack", "guide", "webapp-production")), "the Stack was not stored");
    });

    it("admits the corrected manifests", async () => {
        const r = await apply(guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "governed"));
        assert.strictEqual(r.code, 0, r.stderr);
        assert.ok(await exists("stack", "governed", "webapp-production"));
    });

    it("cross-object, Stack first: a binding that would give the Stack's account cluster-admin is denied", async () => {
        const r1 = await apply(guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "xa"));
        assert.strictEqual(r1.code, 0, r1.stderr);
        // No wait for the webhook's cache: the bindings and Stacks around a reviewed object are read fresh.
        const admin = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "xa").filter(
            (d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name),
        );
        const r2 = await apply(admin);
        assert.notStrictEqual(r2.code, 0, r2.stdout);
        assert.match(
            r2.stderr,
            /pko-stack-no-cluster-admin: ClusterRoleBinding "ClusterRoleBinding\/xa-webapp:cluster-admin" grants cluster-admin to ServiceAccount xa\/webapp, which Stack "Stack\/xa\/webapp-production"/,
        );
        assert.ok(!(await exists("clusterrolebinding", "", "xa-webapp:cluster-admin")));
    });

    it("cross-object, binding first: a Stack whose account already has cluster-admin is denied", async () => {
        const docs = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "xb");
        const admin = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "xb").filter(
            (d) => d.kind === "ClusterRoleBinding" && /cluster-admin/.test(d.metadata.name),
        );
        const r1 = await apply([...docs.filter((d) => d.kind !== "Stack"), ...admin]);
        assert.strictEqual(r1.code, 0, r1.stderr);
        assert.match(r1.stderr, /Warning: rbac-no-cluster-admin-serviceaccount/);
        const r2 = await apply(docs.filter((d) => d.kind === "Stack"));
        assert.notStrictEqual(r2.code, 0, r2.stdout);
        assert.match(r2.stderr, /Stack\/xb\/webapp-production: 1 mandatory violation/);
        assert.match(r2.stderr, /pko-stack-no-cluster-admin: .*which Stack "Stack\/xb\/webapp-production"/);
        assert.ok(!(await exists("stack", "xb", "webapp-production")));
    });

    it("judges kube-system like any namespace: a cluster-admin RoleBinding there to a Stack's account, a Stack there", async () => {
        // The Stack of namespace governed (admitted above) runs as governed/webapp.
        const binding = await server.kubectl([
            "create",
            "rolebinding",
            "webapp-admin",
            "-n",
            "kube-system",
            "--clusterrole=cluster-admin",
            "--serviceaccount=governed:webapp",
        ]);
        assert.notStrictEqual(binding.code, 0, binding.stdout);
        assert.match(
            binding.stderr,
            /pko-stack-no-cluster-admin: RoleBinding "RoleBinding\/kube-system\/webapp-admin" grants cluster-admin to ServiceAccount governed\/webapp, which Stack "Stack\/governed\/webapp-production"/,
        );
        assert.ok(!(await exists("rolebinding", "kube-system", "webapp-admin")));
        const stack = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "kube-system").filter(
            (d) => d.kind === "Stack",
        );
        const r = await server.kubectl(["apply", "-f", "-"], yaml(stack));
        assert.notStrictEqual(r.code, 0, r.stdout);
        assert.match(r.stderr, /pko-guard denied Stack\/kube-system\/webapp-production/);
        assert.match(r.stderr, /pko-stack-prod-pinned-commit: /);
    });

    it("judges a ClusterRole by the role it feeds: labelled to aggregate into admin, bound to a Stack's account", async () => {
        const bound = await server.kubectl([
            "create",
            "rolebinding",
            "webapp-admin",
            "-n",
            "governed",
            "--clusterrole=admin",
            "--serviceaccount=governed:webapp",
        ]);
        assert.strictEqual(bound.code, 0, bound.stderr);
        const feeding = {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "feeds-admin", labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } },
            rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
        };
        const r = await server.kubectl(["apply", "-f", "-"], yaml([feeding]));
        assert.notStrictEqual(r.code, 0, r.stdout);
        assert.match(
            r.stderr,
            /pko-guard denied ClusterRole\/feeds-admin: 1 mandatory violation.*\n- pko-stack-no-cluster-admin: RoleBinding "RoleBinding\/governed\/webapp-admin" grants ClusterRole "admin" \(wildcard by aggregation: it aggregates ClusterRole "feeds-admin"/,
        );
        assert.ok(!(await exists("clusterrole", "", "feeds-admin")));
        // The same rules without the label feed nothing bound: admitted.
        const plain = await server.kubectl(
            ["apply", "-f", "-"],
            yaml([{ ...feeding, metadata: { name: "feeds-admin" } }]),
        );
        assert.strictEqual(plain.code, 0, plain.stderr);
    });

    it("judges PKO's Workspace and Program objects: a privileged one is denied, a hardened one admitted and audited", async () => {
        const workspace = (name: string, podSpec: Doc) => ({
            apiVersion: "auto.pulumi.com/v1alpha1",
            kind: "Workspace",
            metadata: { name, namespace: "creds" },
            spec: {
                serviceAccountName: "default",
                git: { url: "https://github.com/acme/app", ref: "0123456789abcdef0123456789abcdef01234567" },
                podTemplate: { spec: { containers: [{ name: "pulumi" }], ...podSpec } },
            },
        });
        const bad = await apply([workspace("loose", { hostNetwork: true })]);
        assert.notStrictEqual(bad.code, 0, bad.stdout);
        assert.match(bad.stderr, /pko-workspace-program-objects: .*spec\.podTemplate\.spec\.hostNetwork/);
        const program = {
            apiVersion: "pulumi.com/v1",
            kind: "Program",
            metadata: { name: "conn", namespace: "creds" },
            program: { variables: { conn: `mysql://root:${CANARY}@db/app` } },
        };
        const p = await apply([program]);
        assert.notStrictEqual(p.code, 0, p.stdout);
        assert.match(p.stderr, /pko-workspace-program-objects: program\.variables\.conn/);
        assert.ok(!p.stderr.includes(CANARY));
        const good = await apply([workspace("hardened", {})]);
        assert.strictEqual(good.code, 0, good.stderr);
        const r = audit([]);
        assert.match(r.stdout, /1 Workspace read, 1 judged/);
    });

    it("never logs or echoes a Secret value or a literal credential", async () => {
        const secret = {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "pulumi-token", namespace: "creds" },
            stringData: { accessToken: CANARY },
        };
        const stack = {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name: "literal", namespace: "creds" },
            spec: {
                stack: "myorg/app/dev",
                projectRepo: "https://github.com/myorg/app.git",
                branch: "main",
                envRefs: { PULUMI_ACCESS_TOKEN: { type: "Literal", literal: { value: CANARY } } },
            },
        };
        const r = await apply([secret, stack]);
        assert.notStrictEqual(r.code, 0);
        assert.match(r.stderr, /pko-stack-credentials-from-secrets/);
        assert.ok(!r.stderr.includes(CANARY) && !r.stdout.includes(CANARY), "kubectl's output never holds the value");
        await until("the webhook logged the decision", () => /"name":"literal"/.test(logs));
        assert.ok(!logs.includes(CANARY), "the webhook's logs never hold the value");
        for (const line of logs.split("\n").filter(Boolean)) JSON.parse(line);
    });

    it("serves Prometheus metrics: requests, denials by rule, a latency histogram, cache sync state", async () => {
        const m = (await get(port, "/metrics", caPem)).body;
        assert.match(
            m,
            /pko_guard_admission_requests_total\{kind="Stack",operation="CREATE",decision="denied"\} [1-9]/,
        );
        assert.match(m, /pko_guard_admission_denials_total\{policy="pko-stack-no-cluster-admin"\} [1-9]/);
        assert.match(m, /pko_guard_admission_duration_seconds_bucket\{le="0.1"\} [1-9]/);
        assert.match(m, /pko_guard_cache_synced 1/);
        assert.strictEqual((await get(port, "/healthz", caPem)).status, 200);
    });

    it("--warn-only admits what it would deny, with the denials as warnings; bad requests get 400", async () => {
        const warnPort = await freePort();
        let out = "";
        const w = spawnTracked(
            process.execPath,
            [
                CLI,
                "webhook",
                "--cert",
                tls.cert,
                "--key",
                tls.key,
                "--port",
                String(warnPort),
                "--kubeconfig",
                server.kubeconfig,
                "--warn-only",
            ],
            {
                cwd: work,
                stdio: ["ignore", "pipe", "pipe"],
            },
        );
        w.child.stdout!.on("data", (d) => (out += d));
        try {
            await until(
                "the warn-only webhook's /readyz",
                async () => (await get(warnPort, "/readyz", caPem)).status === 200,
            );
            const stack = guideDocs("gitops-guide-example", "manifests/production/stack.yaml", "guide").find(
                (d) => d.kind === "Stack",
            )!;
            const post = (body: string) =>
                new Promise<{ status: number; body: string }>((resolve, reject) => {
                    const req = https.request(
                        {
                            host: "127.0.0.1",
                            port: warnPort,
                            path: "/validate",
                            method: "POST",
                            ca: caPem,
                            headers: { "Content-Type": "application/json" },
                        },
                        (res) => {
                            let b = "";
                            res.on("data", (d) => (b += d));
                            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: b }));
                        },
                    );
                    req.on("error", reject);
                    req.end(body);
                });
            const review = {
                apiVersion: "admission.k8s.io/v1",
                kind: "AdmissionReview",
                request: {
                    uid: "u-1",
                    kind: { group: "pulumi.com", version: "v1", kind: "Stack" },
                    operation: "CREATE",
                    namespace: "guide",
                    name: stack.metadata.name,
                    object: stack,
                },
            };
            const r = await post(JSON.stringify(review));
            assert.strictEqual(r.status, 200);
            const response = JSON.parse(r.body).response;
            assert.strictEqual(response.uid, "u-1");
            assert.strictEqual(response.allowed, true);
            assert.ok(
                response.warnings.some((x: string) => /^would deny: pko-stack-prod-pinned-commit: /.test(x)),
                r.body,
            );
            assert.strictEqual((await post("{not json")).status, 400);
            assert.strictEqual(
                (await post(JSON.stringify({ apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview" })))
                    .status,
                400,
            );
            assert.strictEqual((await get(warnPort, "/nope", caPem)).status, 404);
            assert.match(out, /"decision":"warn-only"/);
        } finally {
            w.kill();
            await w.exited;
        }
    });

    it("reloads its certificate and key when the files change", async () => {
        const peerCn = () =>
            new Promise<string>((resolve) => {
                const req = https.get({ host: "127.0.0.1", port, path: "/healthz", ca: caPem, agent: false }, (res) => {
                    const cert = (res.socket as import("tls").TLSSocket).getPeerCertificate();
                    res.resume();
                    resolve(String(cert.subject?.CN ?? ""));
                });
                req.on("error", () => resolve(""));
            });
        assert.strictEqual(await peerCn(), "webhook");
        const next = issueCert(server.ca, "webhook-renewed", { ips: ["127.0.0.1"] });
        fs.copyFileSync(next.key, tls.key);
        fs.copyFileSync(next.cert, tls.cert);
        await until("the renewed certificate to be served", async () => (await peerCn()) === "webhook-renewed");
        assert.match(logs, /"event":"tls.reloaded"/);
    });

    it("a webhook that is down: failurePolicy Fail refuses, Ignore admits", async () => {
        hook!.kill();
        await hook!.exited;
        const stack = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "down");
        const refused = await apply(stack);
        assert.notStrictEqual(refused.code, 0, refused.stdout);
        assert.match(refused.stderr, /failed calling webhook "validate\.pko-guard\.dev"/);
        assert.ok(!(await exists("stack", "down", "webapp-production")));
        await register("Ignore");
        const admitted = await apply(stack);
        assert.strictEqual(admitted.code, 0, admitted.stderr);
        assert.ok(await exists("stack", "down", "webapp-production"));
    });
});
