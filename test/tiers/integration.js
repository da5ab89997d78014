// Mocha config of the integration tier (`npm run test:integration`, after a build): every spec under
// test/integration/, specs that start processes (the CLI, the pack, mock-leg programs, real previews with the
// toolchain from `npm run setup`, npm and git), read the build's output or open connections. The folder is the
// tier: test/integration/ mirrors the source tree (test/unit/test/tiers/tiers.spec.ts).
module.exports = {
    require: ["ts-node/register/transpile-only"],
    spec: ["test/integration/**/*.spec.ts"],
    timeout: 20000,
    reporter: "spec",
};
