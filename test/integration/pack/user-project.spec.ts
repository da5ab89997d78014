/**
 * The pack and the gate in a user's own project folder, outside this repository, with a program that
 * is not Node: a Pulumi YAML project (no package.json), then the same project with a package.json of
 * its own (another name and version). The engine's policy events must name the pack `pko-guard` with
 * this package's version, and the rows must be the pack's.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadFixture } from "../../../harness/expect";
import { prepareFixtureStack } from "../../../harness/legs/real";
import { StackRef, parseEvents, previewWithPack } from "../../../engine/pulumi-cli";
import { CLI_ENTRY, PACK_DIR, REPO_ROOT } from "../../../support/paths";
import { policies } from "../../../policies";
import { requireToolchain } from "../../support/helpers";

const VERSION = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;
const CLI = CLI_ENTRY;
const descriptions = new Map(policies.map((p) => [p.name, p.description]));

describe("a user's YAML project: pulumi preview --policy-pack and the gate", function () {
    this.timeout(900000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-user-yaml-"));
    let s: StackRef;

    before(async function () {
        const toolchain = requireToolchain(this);
        const p = await prepareFixtureStack(
            loadFixture(path.join(REPO_ROOT, "fixtures", "yaml-program-stack")),
            toolchain,
            tmp,
            300000,
        );
        if ("error" in p) throw new Error(p.error);
        s = p;
        fs.rmSync(path.join(s.cwd, "node_modules")); // a YAML project has none
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    async function previewFromProject() {
        const r = await previewWithPack(s, { dir: PACK_DIR, descriptions });
        assert.strictEqual(r.error, undefined);
        assert.notStrictEqual(r.exitCode, 0, "a mandatory violation must fail the preview");
        const packs = parseEvents(r.output)
            .map((e) => (e as { policyEvent?: { policyPackName?: string; policyPackVersion?: string } }).policyEvent)
            .filter((e) => e !== undefined);
        assert.ok(packs.length > 0, "no policy events");
        for (const e of packs)
            assert.deepStrictEqual([e!.policyPackName, e!.policyPackVersion], ["pko-guard", VERSION]);
        assert.ok(
            r.rows.some(
                (x) =>
                    x.policy === "pko-stack-prod-pinned-commit" &&
                    x.resource.endsWith("app-prod") &&
                    x.level === "mandatory",
            ),
            JSON.stringify(r.rows),
        );
    }

    it("without a package.json: the pack loads and reports its own name and version", async () => {
        assert.ok(!fs.existsSync(path.join(s.cwd, "package.json")));
        await previewFromProject();
    });

    it("with a package.json of the user's own (another version): still the pack's version", async () => {
        fs.writeFileSync(path.join(s.cwd, "package.json"), JSON.stringify({ name: "user-project", version: "9.9.9" }));
        try {
            await previewFromProject();
        } finally {
            fs.rmSync(path.join(s.cwd, "package.json"));
        }
    });

    it("the gate, run in the project folder, blocks on the mandatory violation", () => {
        const r = spawnSync(process.execPath, [CLI, "gate", ".", "--stack", s.stack], {
            cwd: s.cwd,
            env: s.env,
            encoding: "utf8",
            timeout: 300000,
        });
        assert.strictEqual(r.status, 1, r.stderr);
        assert.match(r.stdout, /pko-stack-prod-pinned-commit/);
    });
});
