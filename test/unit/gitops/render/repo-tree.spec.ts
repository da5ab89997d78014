/**
 * The repository's one walk (gitops/render/repo-tree.ts repoTree), and what each of its two users takes from it:
 * confineLinks refuses a symbolic link that leaves the repository (anywhere but the root's `.git`, node_modules
 * included), and repoFolders lists the folders a git directories generator chooses from (hidden folders skipped as
 * Argo CD's repo server skips them, node_modules too; links not followed) without refusing such a link. One walk a run serves both.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../../../support/errors";
import { RenderContext } from "../../../../gitops/render/render";
import { confineLinks, repoFiles, repoFolders, repoTree } from "../../../../gitops/render/repo-tree";

describe("the repository's one walk: links confined, folders listed", () => {
    let root: string;
    let outside: string;
    const ctx = (): RenderContext => ({
        deadline: Date.now() + 60_000,
        repoRoot: root,
        show: (abs) => path.relative(root, abs) || ".",
    });
    const mk = (...rels: string[]) => {
        for (const rel of rels) fs.mkdirSync(path.join(root, rel), { recursive: true });
    };
    const link = (target: string, rel: string) => fs.symlinkSync(target, path.join(root, rel));
    const refusal = (c: RenderContext) => {
        try {
            confineLinks(c);
            return undefined;
        } catch (e) {
            assert.ok(e instanceof BadInputError, String(e));
            return e.message;
        }
    };

    beforeEach(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-tree-"));
        outside = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-tree-out-"));
        mk(
            "envs/prod/base",
            "envs/dev",
            ".git/objects",
            "sub/.git/hooks",
            "node_modules/pkg",
            "apps/node_modules/x",
            ".github/workflows",
            "envs/.old/x",
        );
    });
    afterEach(() => {
        fs.rmSync(root, { recursive: true, force: true });
        fs.rmSync(outside, { recursive: true, force: true });
    });

    it("lists folders sorted as Argo CD does, hidden ones skipped (and node_modules), links not followed", () => {
        link("envs", "linked-envs");
        link(outside, "out");
        assert.deepStrictEqual(repoFolders(ctx()), ["apps", "envs", "envs/dev", "envs/prod", "envs/prod/base", "sub"]);
    });

    it("lists the files a git files generator reads from: hidden folders' too, not node_modules' or a .git's, links not followed", () => {
        for (const f of [
            "envs/prod/config.json",
            ".github/workflows/ci.yaml",
            "node_modules/pkg/x.json",
            "sub/.git/hooks/h",
            ".git/objects/o",
            "top.yaml",
        ])
            fs.writeFileSync(path.join(root, f), "{}\n");
        link("top.yaml", "linked.yaml");
        const c = ctx();
        assert.deepStrictEqual(repoFiles(c), [".github/workflows/ci.yaml", "envs/prod/config.json", "top.yaml"]);
        assert.strictEqual(repoTree(c).files, repoFiles(c)); // the same walk
    });

    it("accepts links that stay inside the repository", () => {
        link("prod/base", path.join("envs", "here"));
        link("../envs", path.join("sub", "up-and-back"));
        assert.strictEqual(refusal(ctx()), undefined);
    });

    for (const [where, target, rel] of [
        ["an absolute link", () => outside, "envs/abs"],
        ["a link that steps out", () => "../../..", "envs/dev/up"],
        ["a link that steps out and back in", () => `../${path.basename(root)}/envs`, "back-in"],
        ["a link inside node_modules", () => outside, "node_modules/pkg/leak"],
        ["a link inside a nested .git", () => outside, "sub/.git/hooks/leak"],
    ] as const) {
        it(`refuses ${where}, and still lists the folders`, () => {
            link(target(), rel);
            const c = ctx();
            assert.strictEqual(
                refusal(c),
                `${rel}: a symbolic link that points outside the repository (Argo CD refuses to render a repository holding one; the repository root in use is ${root}; --repo-root sets another)`,
            );
            assert.ok(repoFolders(c).includes("envs/prod/base"));
        });
    }

    it("does not walk the root's .git", () => {
        link(outside, ".git/objects/leak");
        assert.strictEqual(refusal(ctx()), undefined);
    });

    it("walks once a run: both users read the same walk", () => {
        const c = ctx();
        const folders = repoFolders(c);
        mk("later");
        link(outside, "later/leak");
        assert.strictEqual(refusal(c), undefined, "the links were read in the first walk");
        assert.strictEqual(repoFolders(c), folders);
        assert.strictEqual(repoTree(c), c.tree);
        assert.ok(repoFolders(ctx()).includes("later"), "a new run walks again");
        assert.match(refusal(ctx()) ?? "", /^later\/leak: /);
    });
});
