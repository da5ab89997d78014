/**
 * `pko-guard doctor` over a toolchain folder and a PATH of stub executables (versions come from a stand-in
 * probe: the unit tier runs no process): each tool's version, where it comes from, and the command for what is
 * missing or does not fit.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Environment, renderDoctor, toolStates } from "../../../cli/doctor";
import { installCommand } from "../../../support/toolchain";

describe("pko-guard doctor", () => {
    let tmp: string;
    let env: Environment;
    const probed: string[] = [];
    const stub = (dir: string, name: string) => fs.writeFileSync(path.join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
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
        };
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("check: the cached, the linked, the unfitting on PATH and the missing, each with its install command", () => {
        const states = toolStates("check", env);
        const row = (n: string) => states.find((s) => s.name === n)!;
        assert.deepStrictEqual(
            states.map((s) => [s.name, s.source, s.version, s.install !== undefined]),
            [
                ["kustomize", "toolchain cache", "v5.8.2", false],
                ["helm", "PATH", "2.17.0", true],
                ["jsonnet", "PATH", "0.21.0", false],
                ["jsonnet-deps", "missing", undefined, true],
                ["appset-template", "missing", undefined, true],
                ["flux-build", "missing", undefined, true],
            ],
        );
        assert.strictEqual(row("helm").note, "does not fit: needs >= 3.8.0, < 4");
        assert.strictEqual(row("helm").install, installCommand("helm"));
        assert.strictEqual(row("jsonnet").file, path.join(tmp, "usr-bin", "jsonnet"));
        // Only the tool on PATH was run for its version; cached and linked ones are read from their stamps.
        assert.deepStrictEqual(probed, ["helm version --short"]);
        const text = renderDoctor("check", env.binDir, states);
        assert.match(
            text,
            /^ {2}helm +2\.17\.0 +PATH .*usr-bin\/helm \(does not fit: needs >= 3\.8\.0, < 4\); install: bash .*install\.sh helm$/m,
        );
        assert.match(text, /^ {2}jsonnet-deps +- +missing; install: bash .*toolchain\/install\.sh jsonnet-deps$/m);
        assert.match(text, /^4 to install: bash \S+toolchain\/install\.sh check /m);
    });

    it("gate: a pulumi on PATH that fits, and the host shipped beside it at the CLI's version", () => {
        const states = toolStates("gate", env);
        assert.deepStrictEqual(
            states.slice(0, 3).map((s) => [s.name, s.source, s.version, s.install !== undefined]),
            [
                ["pulumi", "PATH", "3.250.1", false],
                ["pulumi-language-nodejs", "PATH", "3.250.1", false],
                ["pulumi-language-go", "missing", undefined, true],
            ],
        );
    });

    it("a complete profile says so", () => {
        const states = toolStates("check", env).filter((s) => s.name === "kustomize");
        assert.match(renderDoctor("check", env.binDir, states), /every tool of profile check is there\n$/);
    });
});
