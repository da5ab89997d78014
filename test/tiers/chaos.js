// Mocha config of the chaos tier (`npm run test:chaos`, after a build): the probes of the cluster door as an
// attacker and an operator would run them, each against a real API server (etcd + kube-apiserver, and
// kube-controller-manager where a probe needs it, from the toolchain) with the webhook deployed as shipped
// (deploy/webhook/: its configuration, its client certificate, `pko-guard webhook` as a process). One API
// server per spec file, shared by its cases. The folder is the tier: test/chaos/ mirrors the source tree.
module.exports = {
    require: ["ts-node/register/transpile-only"],
    spec: ["test/chaos/**/*.spec.ts"],
    timeout: 60000,
    reporter: "spec",
};
