/**
 * toolchain/install.sh's profiles and PATH reuse, run for real on a copy of toolchain/ with a PATH of stub
 * executables and no Go: fitting tools on PATH are linked into the copy's bin/ (and say so), unfitting ones are
 * named, a tool that must be built without Go stops with one line naming it, and a second run is up to date.
 * Nothing here builds (the real cache is never touched).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CACHE_DIR_ENV, userCacheDir } from "../../../support/cache-dir";
import { REPO_ROOT } from "../../../support/paths";

describe("toolchain/install.sh profiles and tools on PATH", function () {
    this.timeout(120000);
    let tmp: string;
    let script: string;
    let bin: string;
    let stubs: string;
    let env: NodeJS.ProcessEnv;
    const stub = (name: string, output: string) =>
        fs.writeFileSync(path.join(stubs, name), `#!/bin/sh\necho '${output}'\n`, { mode: 0o755 });
    const run = (...args: string[]) => spawnSync("bash", [script, ...args], { encoding: "utf8", env });

    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-toolchain-"));
        fs.cpSync(path.join(REPO_ROOT, "toolchain"), path.join(tmp, "pkg", "toolchain"), { recursive: true });
        script = path.join(tmp, "pkg", "toolchain", "install.sh");
        bin = path.join(tmp, "pkg", ".cache", "toolchain", "bin");
        stubs = path.join(tmp, "stubs");
        fs.mkdirSync(stubs);
        stub("kustomize", "v5.4.1");
        stub("helm", "v2.17.0+ga1b2c3d");
        stub("jsonnet", "Jsonnet commandline interpreter (Go implementation) v0.21.0");
        stub("pulumi", "v3.250.0");
        stub("pulumi-language-nodejs", "");
        // System tools only (bash, grep, sort, timeout): no Go, none of the toolchain's tools.
        env = { ...process.env, PATH: [stubs, "/usr/bin", "/bin"].join(path.delimiter) };
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("--dry-run check: what would be used from PATH, what does not fit, what would be built; changes nothing", () => {
        const r = run("--dry-run", "check");
        assert.strictEqual(r.status, 0, r.stderr);
        assert.deepStrictEqual(r.stdout.trim().split("\n"), [
            `[toolchain] kustomize 5.4.1 would be used from PATH (${stubs}/kustomize)`,
            "[toolchain] helm v3.22.0 would be built (takes ~5 min)",
            `[toolchain] jsonnet 0.21.0 would be used from PATH (${stubs}/jsonnet)`,
            "[toolchain] jsonnet-deps v0.22.0 would be built (takes ~30 s after jsonnet)",
            "[toolchain] appset-template sprig-v3.3.0+slug-v1.15.0 would be built (takes ~30 s)",
            "[toolchain] flux-build fluxcd-pkg-kustomize-v1.41.0 would be built (takes ~3 min)",
        ]);
        assert.match(r.stderr, /helm 2\.17\.0 on PATH \(.*\/helm\) does not fit \(needs >= 3\.8\.0, < 4\); not used/);
        assert.ok(!fs.existsSync(bin), "a dry run creates nothing");
    });

    it("links fitting tools into bin/ with a stamp, and a second run is up to date", () => {
        let r = run("kustomize", "jsonnet", "pulumi-language-nodejs");
        assert.strictEqual(r.status, 0, r.stderr);
        assert.match(r.stdout, /kustomize 5\.4\.1 from PATH \(.*\/stubs\/kustomize\): used, not built/);
        assert.match(r.stdout, /pulumi-language-nodejs 3\.250\.0 from PATH \(.*\/stubs\/pulumi-language-nodejs\)/);
        assert.strictEqual(fs.readlinkSync(path.join(bin, "kustomize")), path.join(stubs, "kustomize"));
        assert.strictEqual(
            fs.readFileSync(path.join(bin, "jsonnet.version"), "utf8"),
            `path 0.21.0 ${path.join(stubs, "jsonnet")}\n`,
        );
        r = run("kustomize", "jsonnet");
        assert.strictEqual(r.status, 0, r.stderr);
        assert.match(r.stdout, /kustomize 5\.4\.1 from PATH \(.*\) up to date/);
        // A linked tool that no longer fits is dropped, and without Go it cannot be built: one line naming it.
        stub("kustomize", "v4.5.7");
        r = run("kustomize");
        assert.strictEqual(r.status, 1);
        assert.strictEqual(
            r.stderr.trim().split("\n").pop(),
            "[toolchain] error: go not found on PATH, needed to build kustomize; install Go >= 1.25 (https://go.dev/dl) and re-run toolchain/install.sh",
        );
        assert.ok(!fs.existsSync(path.join(bin, "kustomize")));
    });

    it("the profile all builds the pinned versions (no PATH reuse) unless asked, and a bad name is one line", () => {
        let r = run("--dry-run");
        assert.match(r.stdout, /kustomize v5\.8\.2 would be built/);
        r = run("--dry-run", "--use-path", "all");
        assert.match(r.stdout, /kustomize 5\.4\.1 would be used from PATH/);
        r = run("checks");
        assert.strictEqual(r.status, 1);
        assert.match(
            r.stderr,
            /^\[toolchain\] error: unknown profile or tool 'checks' \(profiles: check gate cluster all;/,
        );
    });

    it("builds where support/toolchain.ts looks: a checkout's .cache, an installed package's user cache", () => {
        assert.strictEqual(run("--where").stdout, `${path.join(tmp, "pkg", ".cache", "toolchain")}\n`);
        // The same script installed in a project: the user's cache folder, as support/cache-dir.ts names it.
        const installed = path.join(tmp, "project", "node_modules", "pko-guard");
        fs.mkdirSync(installed, { recursive: true });
        fs.renameSync(path.join(tmp, "pkg", "toolchain"), path.join(installed, "toolchain"));
        script = path.join(installed, "toolchain", "install.sh");
        for (const extra of [
            { [CACHE_DIR_ENV]: path.join(tmp, "named") },
            { XDG_CACHE_HOME: path.join(tmp, "xdg") },
            { XDG_CACHE_HOME: "relative", HOME: path.join(tmp, "home") },
        ]) {
            env = { ...process.env, PATH: "/usr/bin:/bin", ...extra };
            delete env[Object.keys(extra).includes(CACHE_DIR_ENV) ? "XDG_CACHE_HOME" : CACHE_DIR_ENV];
            const where = run("--where");
            assert.strictEqual(
                where.stdout,
                `${path.join(userCacheDir(env, env.HOME), "toolchain")}\n`,
                JSON.stringify(extra),
            );
            assert.ok(where.stdout.startsWith(tmp), where.stdout);
        }
    });
});
