// Mocha config of the corpus tier (`npm run test:corpus`, after a build): `pko-guard check` over snapshots of
// public repositories (test/data/corpus/<name>/repo, each with its licence and commit in corpus.json), run as a
// user runs it on a clone, with the exact findings each must give.
module.exports = {
    require: ["ts-node/register/transpile-only"],
    spec: ["test/corpus/**/*.spec.ts"],
    timeout: 120000,
    reporter: "spec",
};
