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

    it("takes what a kustomization builds in place of the files of the folder it builds", () => {
        const written = { ...cm(undefined), abs: "/repo/argocd/install.yaml" };
        const patch = { ...cm("--enable-helm"), abs: "/repo/argocd/argocd-cm.yaml" };
        // As written: two argocd-cm, one without the option; as built: one, with it.
        assert.strictEqual(argoKustomizeSettings([written, patch]).enableHelm, false);
        const built = { folders: ["/repo/argocd"], objects: [cm("--enable-helm").object] };
        assert.strictEqual(argoKustomizeSettings([written, patch], built).enableHelm, true);
        // A plain argocd-cm elsewhere still counts: both must enable it.
        const other = { ...cm(undefined, "argocd-cm", "argocd-2"), abs: "/repo/argocd-2/cm.yaml" };
        assert.strictEqual(argoKustomizeSettings([written, patch, other], built).enableHelm, false);
        // A folder beginning like the built one is another folder.
        const beside = { ...cm(undefined), abs: "/repo/argocd-old/cm.yaml" };
        assert.strictEqual(argoKustomizeSettings([beside], built).enableHelm, false);
    });
});
