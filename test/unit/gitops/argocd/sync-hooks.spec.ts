/** Which hooks Argo CD applies, as gitops-engine maps them (pkg/sync/sync_phase.go) and its controller runs them. */
import * as assert from "assert";
import { neverApplied } from "../../../../gitops/argocd/sync-hooks";

const obj = (annotations?: Record<string, unknown>) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s", ...(annotations ? { annotations } : {}) },
});

describe("hooks Argo CD never applies", () => {
    it("applies objects with no hook annotation, install/upgrade hooks and Argo CD's sync-phase hooks", () => {
        for (const a of [
            undefined,
            {},
            { "helm.sh/hook": "pre-install" },
            { "helm.sh/hook": "post-upgrade, test" },
            { "helm.sh/hook": "crd-install" },
            { "argocd.argoproj.io/hook": "PreSync" },
            { "argocd.argoproj.io/hook": "SyncFail" },
            { "argocd.argoproj.io/hook": "Skip,Sync" },
            // Argo CD's own type wins over Helm's: a test hook Argo CD is told to run in Sync is applied.
            { "argocd.argoproj.io/hook": "Sync", "helm.sh/hook": "test" },
            // Deletion hooks run when the Application is deleted (argo-cd controller/hook.go): applied, judged.
            { "helm.sh/hook": "pre-delete" },
            { "helm.sh/hook": "test, post-delete" },
            { "argocd.argoproj.io/hook": "PostDelete" },
        ])
            assert.strictEqual(neverApplied(obj(a)), undefined, JSON.stringify(a));
    });
    it("never applies Helm test and rollback hooks, Skip, or a hook of no type it knows", () => {
        assert.strictEqual(
            neverApplied(obj({ "helm.sh/hook": "test" })),
            'a hook Argo CD never applies (helm.sh/hook: "test")',
        );
        assert.match(neverApplied(obj({ "helm.sh/hook": "test-success" }))!, /helm\.sh\/hook: "test-success"/);
        assert.match(neverApplied(obj({ "helm.sh/hook": "pre-rollback,post-rollback" }))!, /pre-rollback/);
        assert.match(neverApplied(obj({ "argocd.argoproj.io/hook": "Skip" }))!, /argocd\.argoproj\.io\/hook: "Skip"/);
        assert.match(neverApplied(obj({ "argocd.argoproj.io/hook": "Nonsense" }))!, /"Nonsense"/);
        // An unknown Argo CD type falls back to the Helm types (gitops-engine Types): a test hook still is none.
        assert.match(
            neverApplied(obj({ "argocd.argoproj.io/hook": "Bogus", "helm.sh/hook": "test" }))!,
            /argocd\.argoproj\.io\/hook: "Bogus"/,
        );
        assert.strictEqual(
            neverApplied(obj({ "argocd.argoproj.io/hook": "Bogus", "helm.sh/hook": "pre-install" })),
            undefined,
        );
    });
});
