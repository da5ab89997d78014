// Mocha config of the unit tier (`npm run test:unit`): specs that run in this one process from the
// TypeScript sources, without a build, a child process or a connection (test/tiers/unit-guard.ts makes
// any of those fail the spec). Every spec is listed in exactly one tier (test/tiers/tiers.spec.ts):
// a file, or `folder/*.spec.ts` for a folder that holds only unit specs.
module.exports = {
    require: ["ts-node/register/transpile-only", "test/tiers/unit-guard.ts"],
    spec: [
        "test/policies/*.spec.ts",
        "test/properties.spec.ts",
        "test/rule-wrappers.spec.ts",
        "test/stack-patches.spec.ts",
        "test/meta.spec.ts",
        "test/settings.spec.ts",
        "test/request.spec.ts",
        "test/error-subjects.spec.ts",
        "test/user/report-chunks.spec.ts",
        "test/tiers/*.spec.ts",
        "test/helpers.spec.ts",
        "test/credential-shapes.spec.ts",
        "test/pko-api.spec.ts",
        "test/harness/argocd-finalizers.spec.ts",
        "test/harness/policy-config.spec.ts",
        "test/check/struct.spec.ts",
        "test/check/yaml-positions.spec.ts",
        "test/harness/real-only.spec.ts",
        "test/harness/verdict.spec.ts",
        "test/harness/output.spec.ts",
        "test/user/waivers.spec.ts",
        "test/cluster/admission.spec.ts",
        "test/check/capabilities.spec.ts",
        "test/check/path-match.spec.ts",
        "test/check/table.spec.ts",
        "test/check/find-node.spec.ts",
        "test/check/located-row.spec.ts",
        "test/check/repo-tree.spec.ts",
    ],
    timeout: 20000,
    reporter: "spec",
};
