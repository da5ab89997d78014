/** Which argocd-cm settings of a repository turn on kustomize's Helm chart generator for check. */
import * as assert from "assert";
import { argoKustomizeSettings } from "../../../../gitops/argocd/argocd-cm";

const cm = (options: unknown, name = "argocd-cm", namespace = "argocd") => ({
    object: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace },
        data: options === undefined ? {} : { "kustomize.buildOptions": options },
    },
});

describe("argoKustomizeSettings", () => {
    it("enables Helm when every argocd-cm carries --enable-helm among its build options", () => {
        assert.strictEqual(argoKustomizeSettings([cm("--enable-helm")]).enableHelm, true);
        assert.strictEqual(
            argoKustomizeSettings([cm("--load-restrictor LoadRestrictionsNone --enable-helm")]).enableHelm,
            true,
        );
        assert.strictEqual(argoKustomizeSettings([cm("--enable-helm=true")]).enableHelm, true);
        assert.strictEqual(
            argoKustomizeSettings([cm("--enable-helm"), cm("--enable-helm", "argocd-cm", "argocd-2")]).enableHelm,
            true,
        );
    });

    it("does not when the repository holds none, one without it, or the value says otherwise", () => {
        assert.strictEqual(argoKustomizeSettings([]).enableHelm, false);
        assert.strictEqual(argoKustomizeSettings([cm(undefined)]).enableHelm, false);
        assert.strictEqual(argoKustomizeSettings([cm("--enable-helm=false")]).enableHelm, false);
        assert.strictEqual(argoKustomizeSettings([cm("--enable-helmet")]).enableHelm, false);
        assert.strictEqual(argoKustomizeSettings([cm(true)]).enableHelm, false);
        // Another ConfigMap's options are not Argo CD's.
        assert.strictEqual(argoKustomizeSettings([cm("--enable-helm", "other-cm")]).enableHelm, false);
        // Two instances that disagree: which one renders an Application is not known.
        assert.strictEqual(
            argoKustomizeSettings([cm("--enable-helm"), cm("", "argocd-cm", "argocd-2")]).enableHelm,
            false,
        );
    });
});
