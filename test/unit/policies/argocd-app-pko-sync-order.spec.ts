import * as assert from "assert";
import { rule as policy } from "../../../policies/argocd-app-pko-sync-order";
import {
    ExpectedFinding,
    TestResource,
    assertFindings,
    goodSpec,
    runStackPolicy,
    stackResource,
} from "../../support/helpers";

const wave = (w: string) => ({ annotations: { "argocd.argoproj.io/sync-wave": w } });
const secret = (w?: string): TestResource => ({
    type: "kubernetes:core/v1:Secret",
    name: "tok",
    props: { metadata: { name: "pulumi-access-token", namespace: "pulumi", ...(w ? wave(w) : {}) } },
});
const app = (prune: boolean, extra: Record<string, unknown> = {}): TestResource => ({
    type: "kubernetes:argoproj.io/v1alpha1:Application",
    name: "app",
    props: {
        metadata: { name: "app" },
        spec: { destination: { namespace: "pulumi" }, syncPolicy: { automated: { prune } }, ...extra },
    },
});

/** The one (advisory) finding, on `resource`. */
const one = (resource: string, message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "advisory", resource, message },
];
const prunes = one("app", /auto-prunes .*Stack "s"/);

describe("argocd-app-pko-sync-order", () => {
    it("does nothing when Argo CD is not in use", () => {
        assert.deepStrictEqual(runStackPolicy(policy, [stackResource("s", goodSpec()), secret()]), []);
    });
    it("flags a Stack synced before its Secret, passes one synced after", () => {
        assertFindings(
            runStackPolicy(policy, [stackResource("s", goodSpec(), wave("1")), secret("2")]),
            one("s", /is in sync wave 1 but its Secret "pulumi-access-token" is in wave 2/),
        );
        assert.deepStrictEqual(runStackPolicy(policy, [stackResource("s", goodSpec(), wave("2")), secret("1")]), []);
        assert.deepStrictEqual(runStackPolicy(policy, [stackResource("s", goodSpec(), wave("1")), secret("1")]), []);
    });
    it("reads a Helm hook-weight as the wave when no sync-wave is set (gitops-engine syncwaves.Wave)", () => {
        const weighted = (w: string, extra: Record<string, string> = {}): TestResource => ({
            type: "kubernetes:core/v1:Secret",
            name: "tok",
            props: {
                metadata: {
                    name: "pulumi-access-token",
                    namespace: "pulumi",
                    annotations: { "helm.sh/hook-weight": w, ...extra },
                },
            },
        });
        assertFindings(
            runStackPolicy(policy, [stackResource("s", goodSpec(), wave("1")), weighted("5")]),
            one("s", /is in sync wave 1 but its Secret "pulumi-access-token" is in wave 5/),
        );
        // The sync-wave annotation wins over the weight; a weight that is not an integer (Atoi) is wave 0.
        const waved = weighted("5", { "argocd.argoproj.io/sync-wave": "1" });
        assert.deepStrictEqual(runStackPolicy(policy, [stackResource("s", goodSpec(), wave("1")), waved]), []);
        assert.deepStrictEqual(runStackPolicy(policy, [stackResource("s", goodSpec(), wave("0")), weighted("x")]), []);
        // A sync-wave that is not an integer (" 2", Atoi refuses spaces) falls back to the weight.
        const spaced = weighted("3", { "argocd.argoproj.io/sync-wave": " 2" });
        assertFindings(
            runStackPolicy(policy, [stackResource("s", goodSpec(), wave("+2")), spaced]),
            one("s", /is in sync wave 2 but its Secret "pulumi-access-token" is in wave 3/),
        );
    });
    it("orders by hook phase before wave, as gitops-engine orders sync tasks (PreSync, Sync, PostSync, SyncFail)", () => {
        const hooked = (annotations: Record<string, string>): TestResource => ({
            type: "kubernetes:core/v1:Secret",
            name: "tok",
            props: { metadata: { name: "pulumi-access-token", namespace: "pulumi", annotations } },
        });
        const stack = (annotations: Record<string, string>) => stackResource("s", goodSpec(), { annotations });
        // A PreSync hook Secret (Argo CD's or Helm's pre-install) is there before a Sync-phase Stack of any wave.
        for (const pre of [
            { "argocd.argoproj.io/hook": "PreSync" },
            { "helm.sh/hook": "pre-install,pre-upgrade" },
        ] as Record<string, string>[])
            assert.deepStrictEqual(
                runStackPolicy(policy, [
                    stack({ "argocd.argoproj.io/sync-wave": "-5" }),
                    hooked({ ...pre, "argocd.argoproj.io/sync-wave": "9" }),
                ]),
                [],
            );
        // A PostSync hook Secret comes after the Stack, whatever the waves say.
        assertFindings(
            runStackPolicy(policy, [
                stack({ "argocd.argoproj.io/sync-wave": "9" }),
                hooked({ "argocd.argoproj.io/hook": "PostSync" }),
            ]),
            one(
                "s",
                /is in sync wave 9 but its Secret "pulumi-access-token" is in the PostSync phase \(wave 0\), so Argo CD applies the Stack first; apply it as a plain object/,
            ),
        );
        // A SyncFail hook is applied only when the sync fails; a Skip or a Helm test hook never.
        for (const late of [
            { "argocd.argoproj.io/hook": "SyncFail" },
            { "argocd.argoproj.io/hook": "Skip" },
            { "helm.sh/hook": "test" },
        ] as Record<string, string>[])
            assert.strictEqual(
                runStackPolicy(policy, [stack({ "argocd.argoproj.io/sync-wave": "1" }), hooked(late)]).length,
                1,
                JSON.stringify(late),
            );
        // A Stack that is itself a PreSync hook comes before a Sync-phase Secret in a lower wave.
        assertFindings(
            runStackPolicy(policy, [
                stack({ "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "3" }),
                secret("1"),
            ]),
            one(
                "s",
                /is in the PreSync phase \(wave 3\) but its Secret "pulumi-access-token" is in wave 1, so Argo CD applies the Stack first; apply the Stack in the Sync phase or later/,
            ),
        );
        // Within one phase, waves decide.
        assertFindings(
            runStackPolicy(policy, [
                stack({ "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "1" }),
                hooked({ "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "2" }),
            ]),
            one("s", /give the Stack a wave of at least 2/),
        );
    });
    it("flags an auto-pruning Application that manages a destroyable production Stack", () => {
        const prod = stackResource("s", goodSpec({ destroyOnFinalize: true }));
        assertFindings(runStackPolicy(policy, [prod, app(true)]), prunes);
        assert.deepStrictEqual(runStackPolicy(policy, [prod, app(false)]), []);
        const dev = stackResource("s", goodSpec({ stack: "a/b/dev", destroyOnFinalize: true }));
        assert.deepStrictEqual(runStackPolicy(policy, [dev, app(true)]), []);
    });
    it("sees a patch that sets destroyOnFinalize on a production Stack the Application prunes", () => {
        const prod = stackResource("s", goodSpec());
        const patch = {
            type: "kubernetes:pulumi.com/v1:StackPatch",
            name: "s-patch",
            props: {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                metadata: { name: "s", namespace: "pulumi" },
                spec: { destroyOnFinalize: true },
            },
        };
        assert.deepStrictEqual(runStackPolicy(policy, [prod, app(true)]), []);
        const m = runStackPolicy(policy, [prod, patch, app(true)]);
        assertFindings(m, one("app", /auto-prunes .*production StackPatch "s-patch" of Stack "s"/));
    });
    it("uses the pack-wide production settings (pko-guard-production)", () => {
        const live = stackResource("s", goodSpec({ stack: "a/b/live", destroyOnFinalize: true }));
        assert.deepStrictEqual(runStackPolicy(policy, [live, app(true)]), []);
        assertFindings(runStackPolicy(policy, [live, app(true)], {}, { productionStackPatterns: ["/live$"] }), prunes);
    });
    it("links Applications by tracking label before namespace", () => {
        const tracked = stackResource("s", goodSpec({ destroyOnFinalize: true }), {
            labels: { "app.kubernetes.io/instance": "other-app" },
        });
        assert.deepStrictEqual(runStackPolicy(policy, [tracked, app(true)]), []);
    });
    it("links Applications by spec.source.path to the Stack's source-path annotation, before namespace", () => {
        const at = (file: string) => ({ annotations: { "pko-guard/source-path": file } });
        const prod = stackResource("s", goodSpec({ destroyOnFinalize: true }), at("manifests/production/stack.yaml"));
        const syncs = (p: string) => app(true, { source: { path: p } });
        assertFindings(runStackPolicy(policy, [prod, syncs("manifests/production")]), prunes);
        assertFindings(runStackPolicy(policy, [prod, syncs("./manifests/production/")]), prunes);
        assert.deepStrictEqual(runStackPolicy(policy, [prod, syncs("manifests/staging")]), []);
        assert.deepStrictEqual(runStackPolicy(policy, [prod, syncs("manifests/prod")]), []);
        assertFindings(
            runStackPolicy(policy, [prod, app(true, { sources: [{ path: "charts" }, { path: "manifests" }] })]),
            prunes,
        );
        // Without a source path on the Stack (a program's resource), the namespace decides, as before.
        assertFindings(
            runStackPolicy(policy, [
                stackResource("s", goodSpec({ destroyOnFinalize: true })),
                syncs("manifests/staging"),
            ]),
            prunes,
        );
    });

    describe("Flux Kustomizations", () => {
        const ks = (prune: boolean, name = "apps"): TestResource => ({
            type: "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",
            name: "ks",
            props: {
                apiVersion: "kustomize.toolkit.fluxcd.io/v1",
                kind: "Kustomization",
                metadata: { name, namespace: "flux-system" },
                spec: { prune, path: "./apps", sourceRef: { kind: "GitRepository", name: "flux-system" } },
            },
        });
        const owned = {
            "kustomize.toolkit.fluxcd.io/name": "apps",
            "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
        };
        const stack = (spec: Record<string, unknown>, labels: Record<string, string> = owned) =>
            stackResource("s", goodSpec(spec), { labels });

        it("flags a pruning Kustomization that applied a production Stack with destroyOnFinalize", () => {
            assertFindings(
                runStackPolicy(policy, [stack({ destroyOnFinalize: true }), ks(true)]),
                one("ks", /Flux Kustomization "flux-system\/apps" prunes \(spec\.prune\) production Stack "s"/),
            );
        });

        it("passes without prune, without destroyOnFinalize, off production, or for another Kustomization's Stack", () => {
            assert.deepStrictEqual(runStackPolicy(policy, [stack({ destroyOnFinalize: true }), ks(false)]), []);
            assert.deepStrictEqual(runStackPolicy(policy, [stack({}), ks(true)]), []);
            const dev = stack({ destroyOnFinalize: true, stack: "acme/app/dev" });
            assert.deepStrictEqual(runStackPolicy(policy, [dev, ks(true)]), []);
            assert.deepStrictEqual(runStackPolicy(policy, [stack({ destroyOnFinalize: true }), ks(true, "infra")]), []);
            const unlabelled = stack({ destroyOnFinalize: true }, {});
            assert.deepStrictEqual(runStackPolicy(policy, [unlabelled, ks(true)]), []);
        });
        it("flags a Stack whose Secret another Kustomization applies, unless it waits for it (transitively)", () => {
            const ksWith = (name: string, dependsOn: string[] = []): TestResource => ({
                type: "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",
                name,
                props: {
                    metadata: { name, namespace: "flux-system" },
                    spec: { dependsOn: dependsOn.map((d) => ({ name: d })) },
                },
            });
            const ownedBy = (name: string) => ({
                "kustomize.toolkit.fluxcd.io/name": name,
                "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
            });
            const token: TestResource = {
                type: "kubernetes:core/v1:Secret",
                name: "tok",
                props: { metadata: { name: "pulumi-access-token", namespace: "pulumi", labels: ownedBy("secrets") } },
            };
            const s = stackResource("s", goodSpec(), { labels: ownedBy("apps") });
            assertFindings(runStackPolicy(policy, [s, token, ksWith("apps"), ksWith("secrets")]), [
                {
                    policy: policy.name,
                    level: "advisory",
                    resource: "s",
                    message:
                        /applied by Flux Kustomization "flux-system\/apps", but its Secret "pulumi-access-token" by Kustomization "flux-system\/secrets", which it does not wait for/,
                },
            ]);
            assert.deepStrictEqual(
                runStackPolicy(policy, [s, token, ksWith("apps", ["secrets"]), ksWith("secrets")]),
                [],
            );
            const chain = [s, token, ksWith("apps", ["infra"]), ksWith("infra", ["secrets"]), ksWith("secrets")];
            assert.deepStrictEqual(runStackPolicy(policy, chain), []);
            const same = {
                ...token,
                props: { metadata: { ...(token.props as { metadata: object }).metadata, labels: ownedBy("apps") } },
            };
            assert.deepStrictEqual(runStackPolicy(policy, [s, same, ksWith("apps")]), []);
        });
    });
});
