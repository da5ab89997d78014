// Mocha config of the property tier (`npm run test:property`): the long fast-check runs under test/property/,
// in one process from the TypeScript sources with the unit tier's guard (no build, no child process, no
// connection), kept out of the unit tier so that it stays an inner loop of minutes. PKO_GUARD_PROPERTY_RUNS sets
// the cases a property (default 1,000). The folder is the tier: test/property/ mirrors the source tree.
module.exports = {
    require: ["ts-node/register/transpile-only", "test/tiers/unit-guard.ts"],
    spec: ["test/property/**/*.spec.ts"],
    timeout: 600000,
    reporter: "spec",
};
