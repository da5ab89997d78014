/**
 * The published-pack path, as Pulumi Cloud organization enforcement runs it: `npm pack` the pack,
 * unpack it in a temporary folder, install only production dependencies, and preview a fixture with that
 * copy. Anything the tarball forgets (compiled output, PulumiPolicy.yaml) fails this test, as the second
 * case shows by removing PulumiPolicy.yaml.
 */
import * as assert from "assert";
import { requireToolchain } from "../helpers";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../harness/expect";
import { runRealLeg } from "../../harness/legs/real";
import { REPO_ROOT } from "../../cli/paths";
import { policies } from "../../policies";
import { Toolchain } from "../../cli/toolchain";
import { judgeLeg } from "../../harness/verdict";

describe("published pack (npm pack -> production install -> preview)", function () {
    this.timeout(600000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-published-"));
    const packDir = path.join(tmp, "package");
    let toolchain: Toolchain;
    const descriptions = new Map(policies.map((p) => [p.name, p.description]));

    before(function () {
        toolchain = requireToolchain(this);
        const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", tmp], { cwd: REPO_ROOT, encoding: "utf8" }).trim().split("\n").pop()!;
        execFileSync("tar", ["xzf", path.join(tmp, tarball), "-C", tmp]);
        const files = fs.readdirSync(packDir);
        assert.ok(files.includes("PulumiPolicy.yaml") && files.includes("bin") && files.includes("package.json"), files.join(", "));
        execFileSync("npm", ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: packDir, stdio: "ignore" });
        assert.ok(!fs.existsSync(path.join(packDir, "node_modules", "mocha")), "dev dependencies were installed");
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("previews a fixture with the installed copy and gets the expected violations", async () => {
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "creds-literal-token"));
        const result = await runRealLeg(fixture, { toolchain, timeoutMs: 300000, packDir, descriptions });
        assert.strictEqual(result.status, "ran", JSON.stringify(result));
        assert.deepStrictEqual(judgeLeg(fixture, result).filter((c) => c.outcome !== "match"), []);
    });

    it("fails when the tarball lacks PulumiPolicy.yaml", async () => {
        const broken = path.join(tmp, "broken");
        fs.cpSync(packDir, broken, { recursive: true, verbatimSymlinks: true });
        fs.rmSync(path.join(broken, "PulumiPolicy.yaml"));
        const fixture = loadFixture(path.join(REPO_ROOT, "fixtures", "creds-literal-token"));
        const result = await runRealLeg(fixture, { toolchain, timeoutMs: 300000, packDir: broken, descriptions });
        assert.strictEqual(result.status, "error", "a pack without PulumiPolicy.yaml must not produce a result");
        assert.match(result.status === "error" ? result.message : "", /PulumiPolicy\.yaml/);
    });
});
