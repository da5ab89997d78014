/**
 * The pack starts, names itself and reports its own version however a host starts it and from
 * whatever working directory: as our language host does (nodeargs before the script, so the
 * TypeScript stand-in is preloaded), as upstream's host does (nodeargs after the script: passed to
 * run-policy-pack, which ignores them; TypeScript loads as usual), and from a user's project folder
 * with no package.json or with one of its own.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PACK_DIR, PACK_ENTRY, PLAIN_PACK_ENTRY, REPO_ROOT } from "../../../support/paths";
import { policies } from "../../../policies";
import { RUN_POLICY_PACK, Started, startAndAsk } from "../../../harness/pack-start";

const VERSION = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;
const ENGINE = "127.0.0.1:1"; // run-policy-pack takes an engine address; the pack never dials it
const PRELOAD = ["--require", "./dist/preload.js"]; // as pack/PulumiPolicy.yaml's nodeargs

const loadedAny = (s: Started, re: RegExp) => s.loaded.some((f) => re.test(f));
const TYPESCRIPT = /[\\/](typescript[\\/]lib[\\/]typescript|vendor[\\/]typescript@[^\\/]+[\\/]typescript)\.js$/;
const SDK_INDEX = /[\\/]@pulumi[\\/]pulumi[\\/]index\.js$/;
const AUTOMATION = /[\\/]@pulumi[\\/]pulumi[\\/]automation[\\/]/;

function assertIsPack(s: Started) {
    assert.strictEqual(s.name, "pko-guard");
    assert.strictEqual(s.version, VERSION);
    assert.strictEqual(s.policies, policies.length);
}

describe("the pack starts from anywhere, under either host's way of starting it", function () {
    this.timeout(180000);
    let project: string;
    before(() => {
        project = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-user-project-"));
        fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: user-project\nruntime: yaml\n");
    });
    after(() => fs.rmSync(project, { recursive: true, force: true }));

    it("PulumiPolicy.yaml preloads the stand-in with a path inside the pack", () => {
        const yaml = fs.readFileSync(path.join(PACK_DIR, "PulumiPolicy.yaml"), "utf8");
        assert.match(yaml, /nodeargs: --require \.\/dist\/preload\.js/);
        assert.ok(fs.existsSync(path.join(PACK_DIR, "dist", "preload.js")));
    });

    it("as our host starts it (nodeargs to node): no TypeScript, no SDK index", async () => {
        const s = await startAndAsk({
            nodeArgs: PRELOAD,
            script: RUN_POLICY_PACK,
            scriptArgs: [ENGINE, PACK_DIR],
            cwd: PACK_DIR,
        });
        assertIsPack(s);
        assert.ok(!loadedAny(s, TYPESCRIPT), "TypeScript was loaded despite the preload");
        assert.ok(!loadedAny(s, /[\\/]ts-node[\\/]/), "ts-node was loaded despite the preload");
        assert.ok(
            !loadedAny(s, /[\\/]runtime[\\/]closure[\\/]v8Hooks\.js$/),
            "V8 hooks were set up despite the preload",
        );
        assert.ok(!loadedAny(s, SDK_INDEX) && !loadedAny(s, AUTOMATION), "the SDK index was loaded by the lean entry");
    });

    it("as upstream's host starts it (nodeargs to the script): the stand-in is not applied, TypeScript loads, the pack still works", async () => {
        const s = await startAndAsk({
            script: RUN_POLICY_PACK,
            scriptArgs: [...PRELOAD, ENGINE, PACK_DIR],
            cwd: PACK_DIR,
        });
        assertIsPack(s);
        assert.ok(loadedAny(s, TYPESCRIPT), "expected run-policy-pack's ordinary TypeScript set-up");
        assert.ok(
            loadedAny(s, /[\\/]runtime[\\/]closure[\\/]v8Hooks\.js$/),
            "expected run-policy-pack's ordinary V8 hooks",
        );
        assert.ok(!loadedAny(s, SDK_INDEX), "the SDK index was loaded by the lean entry");
    });

    it("from a user's project without a package.json", async () => {
        assertIsPack(await startAndAsk({ script: RUN_POLICY_PACK, scriptArgs: [ENGINE, PACK_DIR], cwd: project }));
        assertIsPack(await startAndAsk({ script: PACK_ENTRY, cwd: project }));
    });

    it("from a user's project with a package.json of its own (another name and version)", async () => {
        fs.writeFileSync(
            path.join(project, "package.json"),
            JSON.stringify({ name: "user-project", version: "9.9.9" }),
        );
        try {
            assertIsPack(await startAndAsk({ script: RUN_POLICY_PACK, scriptArgs: [ENGINE, PACK_DIR], cwd: project }));
            assertIsPack(await startAndAsk({ script: PACK_ENTRY, cwd: project }));
            assertIsPack(await startAndAsk({ script: PLAIN_PACK_ENTRY, cwd: project }));
        } finally {
            fs.rmSync(path.join(project, "package.json"));
        }
    });

    it("the plain compiled entry loads the whole SDK index (what the lean entry saves)", async () => {
        const s = await startAndAsk({ script: PLAIN_PACK_ENTRY, cwd: REPO_ROOT });
        assertIsPack(s);
        assert.ok(loadedAny(s, SDK_INDEX) && loadedAny(s, AUTOMATION));
    });
});
