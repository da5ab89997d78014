/** The toolchain's tool table: profiles, the versions that fit, the install command, PATH lookups that skip the cache. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
    INSTALL_SCRIPT,
    firstVersion,
    installCommand,
    onPath,
    parseTools,
    profileTools,
    toolSpecs,
    versionFits,
} from "../../../support/toolchain";

describe("the toolchain's tool table", () => {
    const specs = toolSpecs();
    const names = (p: Parameters<typeof profileTools>[0]) => profileTools(p, specs).map((s) => s.name);

    it("each profile installs what its door needs, and all of them", () => {
        assert.deepStrictEqual(names("check"), [
            "kustomize",
            "helm",
            "jsonnet",
            "jsonnet-deps",
            "appset-template",
            "flux-build",
        ]);
        assert.deepStrictEqual(names("gate"), [
            "pulumi",
            "pulumi-language-nodejs",
            "pulumi-language-go",
            "pulumi-language-yaml",
            "pulumi-resource-kubernetes",
            "pulumi-resource-pulumi-nodejs",
            "pulumi-resource-pulumi-python",
        ]);
        assert.deepStrictEqual(names("cluster"), [
            "schemas",
            "etcd",
            "kube-apiserver",
            "kubectl",
            "kube-controller-manager",
        ]);
        assert.strictEqual(names("all").length, specs.length);
        assert.ok(names("all").includes("kube-yaml") && !names("check").includes("kube-yaml"));
    });

    it("every tool install.sh knows is in the table, and no other", () => {
        const script = fs.readFileSync(INSTALL_SCRIPT, "utf8");
        const all = /^ALL_NAMES=\(([^)]*)\)/m.exec(script)![1].split(/\s+/).filter(Boolean);
        assert.deepStrictEqual([...all].sort(), specs.map((s) => s.name).sort());
    });

    it("parses a row's reuse rule, range and probe arguments", () => {
        const [helm, own] = parseTools(
            "# comment\nhelm check probe 3.8.0 4 version --short\n\nkube-yaml - never - -\n",
        );
        assert.deepStrictEqual(helm, {
            name: "helm",
            profiles: ["check", "all"],
            reuse: "probe",
            min: "3.8.0",
            below: "4",
            probe: ["version", "--short"],
        });
        assert.deepStrictEqual(own, { name: "kube-yaml", profiles: ["all"], reuse: "never", probe: [] });
    });

    it("a version fits from min up to, not including, below", () => {
        assert.deepStrictEqual(
            ["3.8.0", "3.22.0", "3.7.9", "4.0.0", "1.35.4", "1.36.0"].map((v) =>
                v.startsWith("1.") ? versionFits(v, "1.35.0", "1.36") : versionFits(v, "3.8.0", "4"),
            ),
            [true, true, false, false, true, false],
        );
        assert.strictEqual(firstVersion("Jsonnet commandline interpreter (Go implementation) v0.22.0"), "0.22.0");
        assert.strictEqual(firstVersion("Client Version: v1.35.4\nKustomize Version: v5.7.1"), "1.35.4");
        assert.strictEqual(firstVersion("no version here"), undefined);
    });

    it("the install command runs this package's own script (valid from a packed install, no npm run setup)", () => {
        assert.strictEqual(
            installCommand("check", path.join(os.tmpdir(), "elsewhere")),
            `bash ${INSTALL_SCRIPT} check`,
        );
        // Relative to the working folder when the script is inside it, as a user types it.
        const project = path.dirname(path.dirname(INSTALL_SCRIPT));
        assert.strictEqual(installCommand("check gate", project), "bash toolchain/install.sh check gate");
        assert.doesNotMatch(installCommand("helm"), /npm run/);
    });

    it("finds a tool on a PATH of stub executables, skipping the toolchain's own folder and non-executables", () => {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-path-"));
        try {
            const [cache, plain, stubs] = ["cache", "plain", "stubs"].map((d) => path.join(tmp, d));
            for (const d of [cache, plain, stubs]) fs.mkdirSync(d);
            fs.writeFileSync(path.join(cache, "helm"), "#!/bin/sh\n", { mode: 0o755 });
            fs.writeFileSync(path.join(plain, "helm"), "not executable\n", { mode: 0o644 });
            fs.writeFileSync(path.join(stubs, "helm"), "#!/bin/sh\n", { mode: 0o755 });
            const pathEnv = [cache, plain, stubs].join(path.delimiter);
            assert.strictEqual(onPath("helm", pathEnv), path.join(cache, "helm"));
            assert.strictEqual(onPath("helm", pathEnv, cache), path.join(stubs, "helm"));
            assert.strictEqual(onPath("kustomize", pathEnv, cache), undefined);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });
});
