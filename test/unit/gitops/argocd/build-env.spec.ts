/**
 * Argo CD's build environment (gitops/argocd/build-env.ts): the variables of one source, `Env.Envsubst` as Go's
 * os.Expand reads a string (the expected values are Go's own, run on this machine: docs/contributing/verified-facts.md), and
 * which strings of a source Argo CD substitutes.
 */
import * as assert from "assert";
import { buildEnv, envsubst, needsUnknownRevision, substitutedStrings } from "../../../../gitops/argocd/build-env";

const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";
const app = {
    metadata: { name: "web", namespace: "argocd" },
    spec: { project: "payments", destination: { namespace: "web-prod" } },
};
const source = { repoURL: "https://example.com/repo.git", path: "apps/web", targetRevision: "a,b=c" };

describe("Argo CD's build environment", () => {
    it("holds the nine variables of newEnv, the revision shortened to 7 and 8", () => {
        const env = buildEnv(app, source, SHA);
        assert.deepStrictEqual(Object.fromEntries(env), {
            ARGOCD_APP_NAME: "web",
            ARGOCD_APP_NAMESPACE: "web-prod",
            ARGOCD_APP_PROJECT_NAME: "payments",
            ARGOCD_APP_SOURCE_REPO_URL: "https://example.com/repo.git",
            ARGOCD_APP_SOURCE_PATH: "apps/web",
            ARGOCD_APP_SOURCE_TARGET_REVISION: "a,b=c",
            ARGOCD_APP_REVISION: SHA,
            ARGOCD_APP_REVISION_SHORT: "2b08897",
            ARGOCD_APP_REVISION_SHORT_8: "2b088971",
        });
        assert.strictEqual(buildEnv(app, source, undefined).has("ARGOCD_APP_REVISION"), false);
    });

    it("names an Application outside the control plane's namespace as Argo CD does: <namespace>_<name>", () => {
        const named = (namespace?: string) =>
            buildEnv({ ...app, metadata: { name: "web", ...(namespace ? { namespace } : {}) } }, source, SHA).get(
                "ARGOCD_APP_NAME",
            );
        assert.deepStrictEqual([named("argocd"), named(undefined), named("team-a")], ["web", "web", "team-a_web"]);
    });

    it("substitutes as Go's os.Expand with Argo CD's mapping ($$ is $, unknown names are empty)", () => {
        const env = new Map([
            ["ARGOCD_APP_NAME", "web"],
            ["ARGOCD_APP_SOURCE_TARGET_REVISION", "a,b=c"],
        ]);
        // Each pair: input, what Go 1.26's os.Expand returns with the same mapping.
        const go: [string, string][] = [
            ["$-a", "a"],
            ["$ARGOCD_APP_NAME", "web"],
            ["$ARGOCD_APP_NAME.v", "web.v"],
            ["$ARGOCD_APP_NAMEx", ""],
            ["$ARGOCD_APP_SOURCE_TARGET_REVISION", "a,b=c"],
            ["$KUBE_VERSION", ""],
            ["${$}", "$"],
            ["${ARGOCD_APP_NAME}-x", "web-x"],
            ["a$$b", "a$b"],
            ["a$/b", "a$/b"],
            ["end$", "end$"],
            ["l1\n$ARGOCD_APP_NAME\n", "l1\nweb\n"],
            ["price$5", "price"],
            ["x${ARGOCD", "xARGOCD"],
            ["x${}y", "xy"],
        ];
        for (const [input, want] of go) assert.strictEqual(envsubst(input, env), want, JSON.stringify(input));
    });

    it("reads only the places Argo CD substitutes", () => {
        const s = {
            helm: {
                parameters: [{ name: "p", value: "$A" }],
                valueFiles: ["$B.yaml"],
                fileParameters: [{ name: "f", path: "$C" }],
                values: "$NOT",
                releaseName: "$NOT",
                namespace: "$NOT",
            },
            kustomize: {
                images: ["$D"],
                commonLabels: { l: "$E" },
                commonAnnotations: { a: "$NOT" },
                namePrefix: "$NOT",
                namespace: "$NOT",
            },
            directory: { jsonnet: { tlas: [{ name: "t", value: "$F" }], extVars: [{ name: "e", value: "$G" }] } },
        };
        assert.deepStrictEqual(substitutedStrings(s), ["$A", "$B.yaml", "$C", "$D", "$E", "$F", "$G"]);
        const annotated = { kustomize: { commonAnnotationsEnvsubst: true, commonAnnotations: { a: "$H" } } };
        assert.deepStrictEqual(substitutedStrings(annotated), ["$H"]);
    });

    it("says when a source uses the revision and the revision is not known", () => {
        const uses = { helm: { parameters: [{ name: "tag", value: "${ARGOCD_APP_REVISION_SHORT}" }] } };
        const escaped = { helm: { parameters: [{ name: "tag", value: "$$ARGOCD_APP_REVISION" }] } };
        assert.strictEqual(needsUnknownRevision(uses, buildEnv(app, source, undefined)), true);
        assert.strictEqual(needsUnknownRevision(uses, buildEnv(app, source, SHA)), false);
        assert.strictEqual(needsUnknownRevision(escaped, buildEnv(app, source, undefined)), false);
    });
});
