/**
 * `pko-guard check .` on the Argo CD repositories of test/data/argocd-trees/, each class risky and corrected, as a
 * user runs it (a copy in a temporary folder, the real kustomize, Helm and jsonnet): Application trees (a Helm
 * chart and a kustomization of Applications and ApplicationSets, a chart of Applications no Application renders,
 * a cycle), `.argocd-source*.yaml` overrides, Helm
 * parameters escaped as Argo CD escapes them, and Helm hooks as gitops-engine maps them (hooks never applied are
 * not judged; a hook-weight is a sync wave). Every finding of each run is expected: rule, status, object and
 * what synced it.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../../support/paths";
import { findTool } from "../../../../gitops/render/tools";

const DATA = path.join(REPO_ROOT, "test", "data", "argocd-trees");
/** The repository the data's Applications name (the temporary copies have no origin remote). */
const SAME_REPOSITORY = ["--repository", "https://example.com/platform.git"];

interface Run {
    code: number | null;
    err: string;
    /** [status, policy, resource, syncedBy], sorted. */
    findings: string[][];
    messages: string[];
}

describe("check on Argo CD Application trees and Argo CD's own inputs", function () {
    this.timeout(180000);
    let tmp: string;
    before(() => {
        for (const t of ["kustomize", "helm", "jsonnet"] as const)
            assert.ok(findTool(t), `${t} is missing: run npm run setup`);
    });
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-trees-"));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    const check = (fixture: string): Run => {
        const repo = path.join(tmp, fixture.replace(/\//g, "-"));
        fs.cpSync(path.join(DATA, fixture), repo, { recursive: true });
        const r = spawnSync(
            process.execPath,
            [CLI_ENTRY, "check", ".", "--repo-root", ".", ...SAME_REPOSITORY, "--report", "json=../r.json"],
            {
                cwd: repo,
                encoding: "utf8",
                timeout: 120000,
            },
        );
        const rows = fs.existsSync(path.join(tmp, "r.json"))
            ? (JSON.parse(fs.readFileSync(path.join(tmp, "r.json"), "utf8")).projects[0].findings as {
                  status: string;
                  policy: string;
                  resource: string;
                  syncedBy?: string;
                  message: string;
              }[])
            : [];
        return {
            code: r.status,
            err: r.stderr,
            findings: rows.map((f) => [f.status, f.policy, f.resource, f.syncedBy ?? ""]).sort(),
            messages: rows.map((f) => f.message),
        };
    };

    it("a Helm chart of Applications: each child is rendered, landed in its destination, judged, attributed", () => {
        const risky = check("helm-app-of-apps/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            ["blocking", "argocd-app-rendered", "Application/argocd/tools", "Application argocd/root"],
            [
                "blocking",
                "pko-stack-prod-pinned-commit",
                "Stack/pulumi/ledger-production",
                "Application argocd/ledger via Application argocd/root",
            ],
        ]);
        assert.ok(risky.messages.some((m) => /spec\.source\.plugin: a config management plugin/.test(m)));
        // The root renders its own manifest too (self-managed): one Application, not a cycle, not defined twice.
        const corrected = check("helm-app-of-apps/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
    });

    it("an app-of-apps chart no Application in the repository renders: its children are placed all the same", () => {
        // As argocd-example-apps' `apps`: the root Application is made outside the repository (`argocd app
        // create`). The plugin child's folder holds a kustomization that does not build: it is that Application's
        // input (failing closed), never rendered with defaults.
        const risky = check("unrooted-app-of-apps/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            ["blocking", "argocd-app-rendered", "Application/tools", ""],
            ["blocking", "pko-stack-prod-pinned-commit", "Stack/pulumi/ledger-production", "Application ledger"],
        ]);
        const corrected = check("unrooted-app-of-apps/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
    });

    it("a kustomization of an Application and an ApplicationSet: the generated Application's jsonnet is judged", () => {
        const risky = check("kustomize-app-of-apps/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            [
                "blocking",
                "pko-stack-prod-pinned-commit",
                "Stack/stacks-production/reports-production",
                "Application argocd/stacks-production via Application argocd/root",
            ],
        ]);
        // A jsonnet file that yields nothing is a notice, never a silent pass.
        const notice =
            "pko-guard: skipped stacks/production/none.jsonnet: yields no objects, so Application argocd/stacks-production via Application argocd/root applies none of it\n";
        assert.ok(risky.err.includes(notice), risky.err);
        const corrected = check("kustomize-app-of-apps/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
        assert.ok(corrected.err.includes(notice), corrected.err);
    });

    it("Applications that render each other in a cycle fail closed, naming the chain", () => {
        const risky = check("cycle/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            [
                "blocking",
                "argocd-app-rendered",
                "Application/argocd/b",
                "Application argocd/a via Application argocd/root",
            ],
        ]);
        assert.match(risky.messages[0], /cycle \("argocd\/root" -> "argocd\/a" -> "argocd\/b" -> "argocd\/a"\)/);
        const corrected = check("cycle/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
    });

    it("a jsonnet source whose output is not Kubernetes objects is refused, as Argo CD refuses it", () => {
        // kube-prometheus style: a mapping of objects by name, which Argo CD cannot decode (no kind).
        const repo = path.join(tmp, "jsonnet-map");
        fs.cpSync(path.join(DATA, "kustomize-app-of-apps", "corrected"), repo, { recursive: true });
        fs.writeFileSync(
            path.join(repo, "stacks", "production", "stack.jsonnet"),
            '{ stack: { apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: "s" } } }\n',
        );
        const r = spawnSync(process.execPath, [CLI_ENTRY, "check", ".", "--repo-root", ".", ...SAME_REPOSITORY], {
            cwd: repo,
            encoding: "utf8",
            timeout: 120000,
        });
        assert.deepStrictEqual(
            [r.status, r.stderr.split("\n").filter((l) => !l.startsWith("pko-guard: skipped"))],
            [
                2,
                [
                    "pko-guard: stacks/production/stack.jsonnet (jsonnet): its output is not a Kubernetes object (no kind), so Argo CD fails to render it; yield an object or a list of objects",
                    "",
                ],
            ],
        );
    });

    it(".argocd-source.yaml, then .argocd-source-<app>.yaml, are merged into the source before rendering", () => {
        // The app's own file replaces the repository-wide file's parameters (a merge patch replaces lists).
        const risky = check("source-overrides/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            ["blocking", "pko-stack-prod-pinned-commit", "Stack/pulumi/ledger-production", "Application argocd/ledger"],
        ]);
        assert.match(risky.messages[0], /tracks a branch/);
        // Only .argocd-source.yaml applies (another Application's file does not): the commit it pins wins over the
        // Application's own parameter.
        const corrected = check("source-overrides/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
    });

    it("Helm parameters are escaped as Argo CD escapes them: a crafted value sets nothing else", () => {
        const risky = check("helm-parameters/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            [
                "blocking",
                "pko-stack-destroy-on-finalize-nonprod",
                "Stack/pulumi/ledger-production",
                "Application argocd/ledger",
            ],
        ]);
        // `owner: a,destroyOnFinalize=true` is one string value: rendered (not refused), and destroys nothing.
        const corrected = check("helm-parameters/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
    });

    it("Helm hooks: only those Argo CD maps to a sync phase are judged; a hook-weight is the sync wave", () => {
        const risky = check("helm-hooks/risky");
        assert.strictEqual(risky.code, 1, risky.err);
        assert.deepStrictEqual(risky.findings, [
            ["advisory", "argocd-app-pko-sync-order", "Stack/pulumi/ledger-production", "Application argocd/ledger"],
            [
                "blocking",
                "pko-stack-no-cluster-admin",
                "ClusterRoleBinding/ledger-hook-admin",
                "Application argocd/ledger",
            ],
        ]);
        assert.ok(risky.messages.some((m) => /is in sync wave 2 but its ServiceAccount "ledger" is in wave 5/.test(m)));
        const corrected = check("helm-hooks/corrected");
        assert.deepStrictEqual([corrected.code, corrected.findings], [0, []], corrected.err);
        assert.ok(
            corrected.err.includes(
                'pko-guard: skipped chart/templates/admin-hook.yaml: ClusterRoleBinding/ledger-hook-admin: a hook Argo CD never applies (helm.sh/hook: "test")\n',
            ),
            corrected.err,
        );
    });
});
