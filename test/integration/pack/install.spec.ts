/**
 * The documented install paths, each from a temporary user project outside the repository:
 * - a tarball (`npm pack` of this package, as built): the `pko-guard` command works and the pack folder
 *   inside the installed package starts and reports itself; the manifests the README has users
 *   `kubectl apply` from `node_modules/pko-guard/` (CRDs, the webhook's) are installed;
 * - a git URL (`git+file://` of this repository at its HEAD commit): npm clones it, installs its
 *   devDependencies and runs `prepare` (the build), so `bin/` and `pack/dist/` exist after the install.
 *   This one tests the committed HEAD, and is slow (npm installs every devDependency for `prepare`).
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { policies } from "../../../policies";
import { findTool } from "../../../gitops/render/tools";
import { startAndAsk } from "../../../harness/pack-start";

const VERSION = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;
const NPM_QUIET = ["--no-audit", "--no-fund", "--prefer-offline"];

function userProject(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-install-"));
    fs.writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({ name: "user-project", version: "9.9.9", private: true }),
    );
    return dir;
}

async function assertInstalled(project: string) {
    const pkg = path.join(project, "node_modules", "pko-guard");
    const cli = spawnSync(path.join(project, "node_modules", ".bin", "pko-guard"), ["gate", "--help"], {
        cwd: project,
        encoding: "utf8",
    });
    assert.strictEqual(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /--stack/);
    const bad = spawnSync(path.join(project, "node_modules", ".bin", "pko-guard"), ["gate", "--no-such-flag"], {
        cwd: project,
        encoding: "utf8",
    });
    assert.strictEqual(bad.status, 2);
    assert.strictEqual(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    // The pack folder inside the installed package, started as our host starts it, from the project.
    const packDir = path.join(pkg, "pack");
    const runPolicyPack = require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [packDir] });
    assert.ok(runPolicyPack.startsWith(project), `run-policy-pack resolved outside the project: ${runPolicyPack}`);
    const s = await startAndAsk({
        nodeArgs: ["--require", "./dist/preload.js"],
        script: runPolicyPack,
        scriptArgs: ["127.0.0.1:1", packDir],
        cwd: packDir,
    });
    assert.deepStrictEqual([s.name, s.version, s.policies], ["pko-guard", VERSION, policies.length]);
    assert.ok(
        !s.loaded.some((f) => f.startsWith(REPO_ROOT + path.sep)),
        "the installed pack loaded files from the repository",
    );
    assertReadmeManifestsInstalled(project);
    assertDoctorHintWorks(project);
}

/**
 * `pko-guard doctor` in the installed package names, for a missing tool, a command that works there: the package's
 * own toolchain/install.sh (shipped in `files`), never `npm run setup` (no tsc in an installed package).
 */
function assertDoctorHintWorks(project: string) {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-no-toolchain-"));
    try {
        const env = { ...process.env, PKO_GUARD_TOOLCHAIN_BIN: empty, PATH: path.dirname(process.execPath) };
        const doctor = spawnSync(
            process.execPath,
            [
                path.join(project, "node_modules", "pko-guard", "bin", "cli", "pko-guard.js"),
                "doctor",
                "--profile",
                "check",
            ],
            { cwd: project, encoding: "utf8", env },
        );
        assert.strictEqual(doctor.status, 1, doctor.stderr);
        assert.doesNotMatch(doctor.stdout, /npm run/);
        assert.match(doctor.stdout, /^ {2}kustomize +- +missing$/m);
        // The last line: nothing ready, one command for both doors, relative to where the user is.
        assert.match(
            doctor.stdout,
            /not ready; for check and gate\s+run: bash node_modules\/pko-guard\/toolchain\/install\.sh check gate\n$/,
        );
        const script = path.join(fs.realpathSync(project), "node_modules", "pko-guard", "toolchain", "install.sh");
        // The command runs from the installed package (a dry run: nothing is built here).
        const dry = spawnSync("bash", [script, "--dry-run", "check"], { encoding: "utf8" });
        assert.strictEqual(dry.status, 0, dry.stderr);
        assert.match(dry.stdout, /\[toolchain\] appset-template \S+ would be built/);
    } finally {
        fs.rmSync(empty, { recursive: true, force: true });
    }
}

/**
 * What the installed README tells users to `kubectl apply` (the PKO and PolicyReport CRDs, the webhook's
 * manifests) is in the installed package, byte for byte the repository's files that other specs apply to a real
 * API server, and the webhook's kustomization builds from the installed folder alone.
 */
function assertReadmeManifestsInstalled(project: string) {
    const PREFIX = "node_modules/pko-guard/";
    const readme = fs.readFileSync(path.join(project, PREFIX, "README.md"), "utf8");
    const applied = [
        ...new Set(
            [...readme.matchAll(/kubectl apply[^\n]* -[fk] (node_modules\/pko-guard\/[^\s`)]+)/g)].map((m) => m[1]),
        ),
    ].sort();
    assert.deepStrictEqual(applied, [
        `${PREFIX}deploy/webhook/`,
        `${PREFIX}deploy/webhook/validatingwebhookconfiguration.yaml`,
        `${PREFIX}schemas/pko/v2.9.0/`,
        `${PREFIX}schemas/policyreport/v1alpha2/`,
    ]);
    for (const rel of applied) {
        const repo = path.join(REPO_ROOT, rel.slice(PREFIX.length));
        const files = fs.statSync(repo).isDirectory() ? fs.readdirSync(repo).filter((f) => /\.ya?ml$/.test(f)) : [""];
        assert.ok(files.length > 0, rel);
        for (const f of files) {
            const installed = path.join(project, rel, f);
            assert.ok(fs.existsSync(installed), `${rel}${f} is not installed`);
            assert.ok(
                fs.readFileSync(installed).equals(fs.readFileSync(path.join(repo, f))),
                `${rel}${f} differs from the repository's`,
            );
        }
    }
    const kustomize = findTool("kustomize");
    assert.ok(kustomize, "kustomize is missing: run npm run setup");
    const built = execFileSync(kustomize.path, ["build", path.join(project, PREFIX, "deploy", "webhook")], {
        encoding: "utf8",
    });
    assert.match(built, /^kind: ValidatingWebhookConfiguration$/m);
}

describe("install paths from a user's project", function () {
    this.timeout(1800000);
    const dirs: string[] = [];
    after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

    it("npm install of the packed tarball", async () => {
        const project = userProject();
        dirs.push(project);
        const out = JSON.parse(
            execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", project], {
                cwd: REPO_ROOT,
                encoding: "utf8",
                stdio: ["ignore", "pipe", "ignore"],
            }),
        );
        const files: string[] = out[0].files.map((f: { path: string }) => f.path);
        assert.ok(
            files.includes("pack/PulumiPolicy.yaml") &&
                files.includes("pack/dist/index.js") &&
                files.includes("bin/cli/pko-guard.js"),
            files.join(", "),
        );
        // The launcher's bundles: the whole command's, check's own, and what check loads on first use (ajv).
        assert.deepStrictEqual(
            ["bin/cli/pko-guard.bundle.js", "bin/cli/pko-guard-check.bundle.js", "bin/cli/pko-guard-ajv.js"].filter(
                (f) => !files.includes(f),
            ),
            [],
        );
        assert.ok(
            files.includes("schemas/pko/v2.9.0/pulumi.com_stacks.yaml") &&
                files.includes("deploy/webhook/kustomization.yaml") &&
                files.includes("docs/rules.md") &&
                !files.includes("deploy/webhook/Dockerfile"),
            files.join(", "),
        );
        // the README's links to docs/ resolve in the installed package too
        const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
        const linked = [...new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+\.md)/g)].map((m) => m[1]))];
        assert.ok(linked.length > 5, linked.join(", "));
        assert.deepStrictEqual(
            linked.filter((f) => !files.includes(f)),
            [],
            "docs pages the README links are missing from the package",
        );
        assert.ok(!files.includes("docs/generate-rules.ts"), files.join(", "));
        execFileSync("npm", ["install", ...NPM_QUIET, path.join(project, out[0].filename)], {
            cwd: project,
            stdio: "ignore",
        });
        await assertInstalled(project);
    });

    it("npm install from a git URL (prepare builds bin/ and pack/dist/)", async () => {
        const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
        const project = userProject();
        dirs.push(project);
        execFileSync("npm", ["install", ...NPM_QUIET, `git+file://${REPO_ROOT}#${head}`], {
            cwd: project,
            stdio: "ignore",
        });
        await assertInstalled(project);
    });
});
