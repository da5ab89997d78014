/**
 * `pko-guard doctor` over a toolchain folder, a PATH of stub executables, a stand-in prebuilt package and a Pulumi
 * plugin folder (versions come from a stand-in probe: the unit tier runs no process): the profile the repository
 * needs, each tool's own version and where it comes from, 80 columns, and one last line naming the ready doors
 * and the one command for the rest.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Environment, neededProfiles, pluginInFolder, runDoctor, toolStates } from "../../../cli/doctor";
import { installCommand } from "../../../support/toolchain";

describe("pko-guard doctor", () => {
    let tmp: string;
    let env: Environment;
    const probed: string[] = [];
    const stub = (dir: string, name: string) => {
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
    };
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-doctor-"));
        const [bin, usr, pulumiHome] = ["cache/bin", "usr-bin", "pulumi-bin"].map((d) => path.join(tmp, d));
        for (const d of [bin, usr, pulumiHome]) fs.mkdirSync(d, { recursive: true });
        // Built: kustomize (stamped). Linked from PATH by install.sh: jsonnet. On PATH: helm (too old), pulumi + host.
        stub(bin, "kustomize");
        fs.writeFileSync(path.join(bin, "kustomize.version"), "v5.8.2 go1.26.8 wrapper-sha256:0\n");
        stub(usr, "jsonnet");
        fs.symlinkSync(path.join(usr, "jsonnet"), path.join(bin, "jsonnet"));
        fs.writeFileSync(path.join(bin, "jsonnet.version"), `path 0.21.0 ${path.join(usr, "jsonnet")}\n`);
        stub(usr, "helm");
        stub(pulumiHome, "pulumi");
        stub(pulumiHome, "pulumi-language-nodejs");
        // Pulumi's plugin folder: two versions of the Kubernetes provider, a partial download, a lock file.
        const plugins = path.join(tmp, "pulumi-home", "plugins");
        stub(path.join(plugins, "resource-kubernetes-v4.9.0"), "pulumi-resource-kubernetes");
        stub(path.join(plugins, "resource-kubernetes-v4.27.0"), "pulumi-resource-kubernetes");
        stub(path.join(plugins, "resource-kubernetes-v9.0.0.partial"), "pulumi-resource-kubernetes");
        fs.writeFileSync(path.join(plugins, "resource-kubernetes-v9.0.0.lock"), "");
        const versions: Record<string, string> = {
            [path.join(usr, "helm")]: "v2.17.0+ga1b2c3",
            [path.join(pulumiHome, "pulumi")]: "v3.250.1",
        };
        probed.length = 0;
        env = {
            binDir: bin,
            pathEnv: [usr, pulumiHome].join(path.delimiter),
            probe: (file, args) => {
                probed.push(`${path.basename(file)} ${args.join(" ")}`);
                return versions[file];
            },
            pulumiPlugins: plugins,
        };
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("check: the cached, the linked, the unfitting on PATH and the missing", () => {
        const states = toolStates("check", env);
        assert.deepStrictEqual(
            states.map((s) => [s.name, s.source, s.version, s.install === true]),
            [
                ["kustomize", "toolchain cache", "v5.8.2", false],
                ["helm", "PATH", "2.17.0", true],
                ["jsonnet", "PATH", "0.21.0", false],
                ["jsonnet-deps", "missing", undefined, true],
                ["appset-template", "missing", undefined, true],
                ["flux-build", "missing", undefined, true],
            ],
        );
        assert.strictEqual(states[1].note, "does not fit: needs >= 3.8.0, < 4");
        assert.strictEqual(states[2].file, path.join(tmp, "usr-bin", "jsonnet"));
        // Only the tool on PATH was run for its version; cached and linked ones are read from their stamps.
        assert.deepStrictEqual(probed, ["helm version --short"]);
    });

    it("a prebuilt tool comes first, at its pinned version", () => {
        const prebuilt = path.join(tmp, "node_modules", "@pko-guard", "linux-x64", "bin", "helm");
        env.prebuilt = (name) =>
            name === "helm" ? { path: prebuilt, source: "prebuilt", version: "v3.22.0" } : undefined;
        const helm = toolStates("check", env).find((s) => s.name === "helm")!;
        assert.deepStrictEqual(
            [helm.source, helm.version, helm.file, helm.install],
            ["prebuilt", "v3.22.0", prebuilt, undefined],
        );
    });

    it("gate: plugins at their own versions, the provider from Pulumi's plugin folder", () => {
        const states = toolStates("gate", env);
        const row = (n: string) => states.find((s) => s.name === n)!;
        assert.deepStrictEqual(
            ["pulumi", "pulumi-language-nodejs", "pulumi-language-go", "pulumi-resource-kubernetes"].map((n) => [
                n,
                row(n).source,
                row(n).version,
                row(n).install === true,
            ]),
            [
                ["pulumi", "PATH", "3.250.1", false],
                // Shipped with the CLI: the CLI's version is its own.
                ["pulumi-language-nodejs", "PATH", "3.250.1", false],
                ["pulumi-language-go", "missing", undefined, true],
                // Not the CLI's version: the newest complete install in the plugin folder.
                ["pulumi-resource-kubernetes", "Pulumi plugins", "4.27.0", false],
            ],
        );
        assert.strictEqual(pluginInFolder("kubectl", env.pulumiPlugins), undefined);
    });

    it("looks at the repository for the profile it needs", () => {
        const repo = path.join(tmp, "repo");
        fs.mkdirSync(path.join(repo, "apps", "base"), { recursive: true });
        fs.mkdirSync(path.join(repo, "node_modules", "x"), { recursive: true });
        fs.writeFileSync(path.join(repo, "apps", "app.yaml"), "kind: Application\n");
        assert.deepStrictEqual(neededProfiles(repo), { profiles: [], why: [] });
        // What sits in node_modules is not the repository's.
        fs.writeFileSync(path.join(repo, "node_modules", "x", "Pulumi.yaml"), "name: x\n");
        assert.deepStrictEqual(neededProfiles(repo), { profiles: [], why: [] });
        fs.writeFileSync(path.join(repo, "apps", "base", "kustomization.yaml"), "resources: []\n");
        fs.writeFileSync(path.join(repo, "Pulumi.yaml"), "name: infra\n");
        assert.deepStrictEqual(neededProfiles(repo), {
            profiles: ["check", "gate"],
            why: ["a Pulumi project", "kustomizations"],
        });
    });

    it("fits 80 columns and ends with the ready doors and one command for the rest", () => {
        const repo = path.join(tmp, "repo");
        fs.mkdirSync(repo);
        fs.writeFileSync(path.join(repo, "kustomization.yaml"), "resources: []\n");
        const r = runDoctor(undefined, repo, env);
        const lines = r.text.trimEnd().split("\n");
        assert.strictEqual(r.code, 1);
        assert.strictEqual(lines[0], "pko-guard doctor: profile check (this repository has kustomizations)");
        assert.deepStrictEqual(
            lines.filter((l) => l.length > 80 && !l.startsWith("    /")),
            [],
        );
        assert.strictEqual(lines.filter((l) => /run: /.test(l)).length, 1);
        assert.match(
            r.text,
            new RegExp(`run: ${installCommand("check gate").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n$`),
        );
        // Everything there: one line, every door ready, exit 0.
        const all = (name: string) => ({ path: `/p/${name}`, source: "prebuilt" as const, version: "v1.0.0" });
        const ready = runDoctor("check", repo, { ...env, prebuilt: all });
        assert.strictEqual(ready.code, 0);
        assert.match(ready.text, /\nready for check and gate\n$/);
    });
});
