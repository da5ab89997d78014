// Mocha config of the unit tier (`npm run test:unit`): every spec under test/unit/, run in this one process
// from the TypeScript sources, without a build, a child process or a connection (test/tiers/unit-guard.ts
// makes any of those fail the spec). The folder is the tier: test/unit/ mirrors the source tree, and
// test/unit/test/tiers/tiers.spec.ts fails on a spec outside the tier folders (test/tiers/names.js).
module.exports = {
    require: ["ts-node/register/transpile-only", "test/tiers/unit-guard.ts"],
    spec: ["test/unit/**/*.spec.ts"],
    timeout: 20000,
    reporter: "spec",
};
