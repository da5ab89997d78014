/**
 * Prebuilt tools: found in this platform's package as the checksums file names them, used only when the file
 * matches its checksum (checked once, then remembered by the file's stat in the user's cache), refused otherwise.
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CACHE_DIR_ENV } from "../../../support/cache-dir";
import { ToolchainMissingError } from "../../../support/errors";
import { fileSha256, platformKey, prebuiltTool, readManifest, verifiedFile } from "../../../support/prebuilt";

describe("prebuilt tools of the platform package", () => {
    let tmp: string;
    let saved: string | undefined;
    let manifest: string;
    let kustomize: string;
    const CONTENT = "#!/bin/sh\necho v5.8.2\n";

    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-prebuilt-"));
        saved = process.env[CACHE_DIR_ENV];
        process.env[CACHE_DIR_ENV] = path.join(tmp, "cache");
        const pkg = path.join(tmp, "node_modules", "@pko-guard", platformKey());
        fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
        fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: `@pko-guard/${platformKey()}` }));
        kustomize = path.join(pkg, "bin", "kustomize");
        // As unpacked without its modes: the execute bit comes back once the file is verified.
        fs.writeFileSync(kustomize, CONTENT, { mode: 0o644 });
        manifest = path.join(tmp, "prebuilt.json");
        const sha256 = createHash("sha256").update(CONTENT).digest("hex");
        fs.writeFileSync(
            manifest,
            JSON.stringify({
                version: "0.1.0",
                platforms: {
                    [platformKey()]: {
                        package: `@pko-guard/${platformKey()}`,
                        tools: { kustomize: { version: "v5.8.2", sha256 }, helm: { version: "v3.22.0", sha256 } },
                    },
                },
            }),
        );
    });
    afterEach(() => {
        if (saved === undefined) delete process.env[CACHE_DIR_ENV];
        else process.env[CACHE_DIR_ENV] = saved;
        fs.rmSync(tmp, { recursive: true, force: true });
    });

    it("uses a tool whose checksum matches, executable, and remembers the check", () => {
        const tool = prebuiltTool("kustomize", manifest, tmp);
        assert.deepStrictEqual(tool, {
            name: "kustomize",
            path: kustomize,
            version: "v5.8.2",
            package: `@pko-guard/${platformKey()}`,
        });
        assert.ok(fs.statSync(kustomize).mode & 0o100);
        assert.strictEqual(fs.readdirSync(path.join(tmp, "cache", "verified")).length, 1);
        // A tool the manifest lists but the package lacks, or one it does not list: none.
        assert.strictEqual(prebuiltTool("helm", manifest, tmp), undefined);
        assert.strictEqual(prebuiltTool("jsonnet", manifest, tmp), undefined);
        // No package installed, or no checksums file (a checkout): none.
        assert.strictEqual(prebuiltTool("kustomize", manifest, os.tmpdir()), undefined);
        assert.strictEqual(prebuiltTool("kustomize", path.join(tmp, "none.json"), tmp), undefined);
    });

    it("refuses a file that does not match, in one line naming it", () => {
        fs.appendFileSync(kustomize, "echo changed\n");
        assert.throws(
            () => prebuiltTool("kustomize", manifest, tmp),
            (e: unknown) =>
                e instanceof ToolchainMissingError &&
                e.message.startsWith(`prebuilt kustomize (${kustomize}) does not match its checksum in ${manifest}`),
        );
    });

    it("a remembered check holds only while the file's stat is the same", () => {
        const sha = fileSha256(kustomize);
        assert.ok(verifiedFile(kustomize, sha));
        // Same size, new content and modification time: checked again, and refused.
        fs.writeFileSync(kustomize, CONTENT.replace("5.8.2", "6.6.6"));
        fs.utimesSync(kustomize, new Date(), new Date(Date.now() + 5000));
        assert.strictEqual(verifiedFile(kustomize, sha), false);
    });

    it("reads a checksums file only when it is small and an object", () => {
        fs.writeFileSync(path.join(tmp, "bad.json"), "[1,");
        fs.writeFileSync(path.join(tmp, "big.json"), `{"platforms":{},"pad":"${"x".repeat(70000)}"}`);
        assert.strictEqual(readManifest(path.join(tmp, "bad.json")), undefined);
        assert.strictEqual(readManifest(path.join(tmp, "big.json")), undefined);
        assert.strictEqual(readManifest(manifest)?.version, "0.1.0");
    });
});
