/**
 * `pko-guard init` points the repository's .pko-guard.yaml at the config it wrote, so check, the hook and test
 * find it: a new file, a key added to a file without one (its comments kept), and a file naming another config
 * left alone, saying so.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DEFAULT_CONFIG, pointRepositoryAt } from "../../../cli/init";
import { checkSettings } from "../../../gitops/manifests/check-settings";

describe("pko-guard init points the repository at its config", () => {
    let repo: string;
    const settings = () => fs.readFileSync(path.join(repo, ".pko-guard.yaml"), "utf8");
    beforeEach(() => {
        repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-init-")));
        // No git repository here (the unit tier runs no git): the repository root is the working folder.
    });
    afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

    it("writes .pko-guard.yaml naming the config, which check then reads", () => {
        assert.strictEqual(DEFAULT_CONFIG, "policy/pko-guard.json");
        fs.mkdirSync(path.join(repo, "policy"));
        fs.writeFileSync(path.join(repo, "policy", "pko-guard.json"), "{}\n");
        assert.strictEqual(
            pointRepositoryAt("policy/pko-guard.json", repo),
            "wrote config: policy/pko-guard.json in .pko-guard.yaml, so check, the pre-commit hook and test read it",
        );
        assert.strictEqual(settings(), "config: policy/pko-guard.json\n");
        const s = checkSettings(["."], { exclude: [], repository: [], apiVersions: [], repoRoot: repo }, repo);
        assert.deepStrictEqual(s.config, {
            value: path.join(repo, "policy", "pko-guard.json"),
            from: ".pko-guard.yaml",
        });
        assert.match(pointRepositoryAt("policy/pko-guard.json", repo), /already names it/);
    });

    it("adds the key to a file without one, keeping the rest; leaves one naming another config alone", () => {
        fs.writeFileSync(path.join(repo, ".pko-guard.yaml"), "# ours\nexclude: [examples]\n");
        assert.match(pointRepositoryAt("guard.json", repo), /^set config: guard\.json in \.pko-guard\.yaml/);
        assert.strictEqual(settings(), "# ours\nexclude: [ examples ]\nconfig: guard.json\n");
        assert.strictEqual(
            pointRepositoryAt("other.json", repo),
            ".pko-guard.yaml names another config (config: guard.json): change it to other.json to use this one",
        );
        assert.strictEqual(settings(), "# ours\nexclude: [ examples ]\nconfig: guard.json\n");
        fs.writeFileSync(path.join(repo, ".pko-guard.yaml"), "- a list\n");
        assert.match(pointRepositoryAt("guard.json", repo), /is not a YAML mapping: add "config: guard.json" to it/);
        assert.match(pointRepositoryAt(path.join(os.tmpdir(), "x.json"), repo), /is outside the repository/);
    });
});
