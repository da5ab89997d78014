// Mocha config of the integration tier (`npm run test:integration`, after a build): specs that start
// processes (the CLI, the pack, mock-leg programs, real previews with the toolchain from `npm run setup`,
// npm and git), read the build's output or open connections. Every spec is listed in exactly one tier
// (test/tiers/tiers.spec.ts).
module.exports = {
    require: ["ts-node/register/transpile-only"],
    spec: [
        "test/typecheck.spec.ts",
        "test/check/check.spec.ts",
        "test/harness/cli.spec.ts",
        "test/harness/e2e.spec.ts",
        "test/harness/examples.spec.ts",
        "test/harness/faults.spec.ts",
        "test/harness/fixtures.spec.ts",
        "test/harness/gate.spec.ts",
        "test/harness/mock-fidelity.spec.ts",
        "test/harness/mock-inputs-parity.spec.ts",
        "test/harness/reports.spec.ts",
        "test/harness/settings-analyzer.spec.ts",
        "test/harness/timeouts.spec.ts",
        "test/pack/alias.spec.ts",
        "test/pack/install.spec.ts",
        "test/pack/lean-rows.spec.ts",
        "test/pack/published.spec.ts",
        "test/pack/start.spec.ts",
        "test/pack/user-project.spec.ts",
        "test/user/commands.spec.ts",
        "test/user/gate-user.spec.ts",
        "test/user/reports.spec.ts",
        "test/user/workflow.spec.ts",
    ],
    timeout: 20000,
    reporter: "spec",
};
