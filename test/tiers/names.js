// The test tiers, in the order `npm test` runs them. A tier is a folder (test/<name>/, mirroring the source
// tree) and a mocha config (test/tiers/<name>.js); test/unit/test/tiers/tiers.spec.ts holds them to that.
module.exports = ["unit", "property", "integration", "chaos", "corpus"];
