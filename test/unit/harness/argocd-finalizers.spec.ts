/**
 * The harness's stand-in for Argo CD's controller on deletion (harness/argocd-finalizers.ts) removes Argo CD's own
 * finalizers, and only from an Application being deleted; every other finalizer stays with its owner.
 * (test/integration/harness/apiserver.spec.ts proves the watcher against a real API server.)
 */
import * as assert from "assert";
import { finalizersAfterArgoCd, isArgoCdFinalizer } from "../../../harness/argocd-finalizers";

describe("harness: Argo CD finalizers on a deleted Application", () => {
    it("recognizes Argo CD's finalizers, with and without a suffix, and nothing else", () => {
        for (const f of [
            "resources-finalizer.argocd.argoproj.io",
            "resources-finalizer.argocd.argoproj.io/background",
            "resources-finalizer.argocd.argoproj.io/foreground",
            "post-delete-finalizer.argocd.argoproj.io/cleanup",
        ]) {
            assert.ok(isArgoCdFinalizer(f), f);
        }
        for (const f of [
            "foregroundDeletion",
            "orphan",
            "kubernetes",
            "finalizer.pulumi.com",
            "argoproj.io/x",
            "x.argocd.argoproj.io.evil.example/y",
            "resources-finalizer.argocd.argoproj.io/a/b",
            "",
        ]) {
            assert.ok(!isArgoCdFinalizer(f), f);
        }
    });

    it("keeps every other finalizer, and touches nothing before deletion or without Argo CD's", () => {
        const deleting = (finalizers: string[]) => ({
            metadata: { name: "a", namespace: "argocd", deletionTimestamp: new Date(0), finalizers },
        });
        assert.deepStrictEqual(
            finalizersAfterArgoCd(
                deleting([
                    "foregroundDeletion",
                    "resources-finalizer.argocd.argoproj.io/background",
                    "example.com/keep",
                ]),
            ),
            ["foregroundDeletion", "example.com/keep"],
        );
        assert.deepStrictEqual(finalizersAfterArgoCd(deleting(["resources-finalizer.argocd.argoproj.io"])), []);
        assert.strictEqual(finalizersAfterArgoCd(deleting(["foregroundDeletion"])), undefined);
        assert.strictEqual(finalizersAfterArgoCd(deleting([])), undefined);
        assert.strictEqual(
            finalizersAfterArgoCd({ metadata: { name: "a", finalizers: ["resources-finalizer.argocd.argoproj.io"] } }),
            undefined,
        );
    });
});
