/**
 * The published pack, as `pulumi policy publish` makes it (npm pack in the pack folder) and Pulumi Cloud
 * installs it (unpack, production install): only the pack's files and its runtime dependencies, no
 * harness, gate or reports and none of their dependencies. The installed copy starts from a user's
 * project folder and, with the toolchain, previews a fixture with the expected rows. A tarball without
 * PulumiPolicy.yaml must fail.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../../harness/expect";
import { runRealLeg } from "../../../harness/legs/real";
import { PACK_DIR, REPO_ROOT } from "../../../support/paths";
import { judgeLeg } from "../../../harness/verdict";
import { policies } from "../../../policies";
import { requireToolchain } from "../../support/helpers";
import { startAndAsk } from "../../../harness/pack-start";

const ROOT_PKG = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
const PACK_FILES = [
    "PulumiPolicy.yaml",
    "dist/index.js",
    "dist/index.js.map",
    "dist/preload.js",
    "dist/preload.js.map",
    "package.json",
];
/** The CLI's own dependencies: none may reach the published pack. */
const CLI_ONLY = ["commander", "cli-table3", "junit-report-builder", "ajv", "yaml"];

describe("published pack (npm pack in pack/ -> production install -> preview)", function () {
    this.timeout(900000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-published-"));
    const packDir = path.join(tmp, "package");
    const descriptions = new Map(policies.map((p) => [p.name, p.description]));

    before(() => {
        const out = JSON.parse(
            execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], {
                cwd: PACK_DIR,
                encoding: "utf8",
                stdio: ["ignore", "pipe", "ignore"],
            }),
        );
        assert.deepStrictEqual(out[0].files.map((f: { path: string }) => f.path).sort(), PACK_FILES);
        execFileSync("tar", ["xzf", path.join(tmp, out[0].filename), "-C", tmp]);
        execFileSync(
            "npm",
            ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
            { cwd: packDir, stdio: "ignore" },
        );
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("declares only the pack's runtime dependencies, at the package's version and pins", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(packDir, "package.json"), "utf8"));
        assert.strictEqual(pkg.version, ROOT_PKG.version);
        // The policy SDK, the Pulumi SDK it needs, and the linear-time regular expression engine the rules run user patterns on.
        assert.deepStrictEqual(
            pkg.dependencies,
            Object.fromEntries(["@pulumi/policy", "@pulumi/pulumi", "re2js"].map((d) => [d, ROOT_PKG.dependencies[d]])),
        );
        assert.strictEqual(pkg.devDependencies, undefined);
    });

    it("installs without the CLI's dependencies", () => {
        const installed = fs.readdirSync(path.join(packDir, "node_modules"));
        assert.ok(installed.includes("@pulumi"), installed.join(", "));
        assert.deepStrictEqual(
            CLI_ONLY.filter((d) => installed.includes(d)),
            [],
            "the CLI's dependencies were installed with the pack",
        );
        assert.ok(
            !fs.existsSync(path.join(packDir, "bin")) && !fs.existsSync(path.join(packDir, "harness")),
            "harness or CLI code in the published pack",
        );
    });

    it("the installed copy starts from a user's project folder and reports itself", async () => {
        const project = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-user-project-"));
        try {
            const s = await startAndAsk({ script: path.join(packDir, "dist", "index.js"), cwd: project });
            assert.deepStrictEqual([s.name, s.version, s.policies], ["pko-guard", ROOT_PKG.version, policies.length]);
        } finally {
            fs.rmSync(project, { recursive: true, force: true });
        }
    });

    it("previews a fixture with the installed copy and gets the expected violations", async function () {
        const toolchain = requireToolchain(this);
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "creds-literal-token"));
        const result = await runRealLeg(fixture, { toolchain, timeoutMs: 300000, packDir, descriptions });
        assert.strictEqual(result.status, "ran", JSON.stringify(result));
        assert.deepStrictEqual(
            judgeLeg(fixture, result).filter((c) => c.outcome !== "match"),
            [],
        );
    });

    it("fails when the tarball lacks PulumiPolicy.yaml", async function () {
        const toolchain = requireToolchain(this);
        const broken = path.join(tmp, "broken");
        fs.cpSync(packDir, broken, { recursive: true, verbatimSymlinks: true });
        fs.rmSync(path.join(broken, "PulumiPolicy.yaml"));
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "creds-literal-token"));
        const result = await runRealLeg(fixture, { toolchain, timeoutMs: 300000, packDir: broken, descriptions });
        assert.strictEqual(result.status, "error", "a pack without PulumiPolicy.yaml must not produce a result");
        assert.match(result.status === "error" ? result.message : "", /PulumiPolicy\.yaml/);
    });
});
