/** The user's cache folder: the named variable, else XDG's, else ~/.cache; created private on demand. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CACHE_DIR_ENV, ensureCacheDir, userCacheDir } from "../../../support/cache-dir";

describe("the user's cache folder", () => {
    it("is PKO_GUARD_CACHE_DIR, else an absolute XDG_CACHE_HOME's pko-guard, else ~/.cache/pko-guard", () => {
        assert.strictEqual(userCacheDir({ [CACHE_DIR_ENV]: "/c/p", XDG_CACHE_HOME: "/x" }, "/h"), "/c/p");
        assert.strictEqual(userCacheDir({ XDG_CACHE_HOME: "/x" }, "/h"), "/x/pko-guard");
        // The XDG rule: a relative XDG_CACHE_HOME is invalid and ignored.
        assert.strictEqual(userCacheDir({ XDG_CACHE_HOME: "x" }, "/h"), "/h/.cache/pko-guard");
        assert.strictEqual(userCacheDir({ XDG_CACHE_HOME: "" }, "/h"), "/h/.cache/pko-guard");
        assert.strictEqual(userCacheDir({}, "/h"), "/h/.cache/pko-guard");
    });

    it("creates a folder inside it, private to the user", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-cache-"));
        const saved = process.env[CACHE_DIR_ENV];
        try {
            process.env[CACHE_DIR_ENV] = path.join(root, "cache");
            const dir = ensureCacheDir("toolchain", "bin");
            assert.strictEqual(dir, path.join(root, "cache", "toolchain", "bin"));
            assert.strictEqual(fs.statSync(dir).mode & 0o077, 0);
            assert.strictEqual(ensureCacheDir("toolchain", "bin"), dir);
        } finally {
            if (saved === undefined) delete process.env[CACHE_DIR_ENV];
            else process.env[CACHE_DIR_ENV] = saved;
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});
