/**
 * The lean pack entry gives `@pulumi/policy` a small module (pack/src/pulumi-sdk.ts) instead of the
 * `@pulumi/pulumi` index. This proves the module covers every name `@pulumi/policy` takes from the
 * index, with the very same objects, by scanning `@pulumi/policy`'s compiled code: an SDK upgrade that
 * uses one more name fails here, not in a preview.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { PACK_ENTRY, REPO_ROOT } from "../../../support/paths";

const BARE = /require\("@pulumi\/pulumi"\)/g;

/**
 * The names a CommonJS file takes from the bare `@pulumi/pulumi`: `X.name` for every `X = require(...)`
 * (or `X = __importStar(require(...))`). A bare require used any other way is returned in `unknown`, so
 * a new usage shape fails the test instead of slipping past it.
 */
export function namesTakenFromSdk(source: string): { names: Set<string>; unknown: string[] } {
    const names = new Set<string>();
    const unknown: string[] = [];
    for (const m of source.matchAll(BARE)) {
        const line = source.slice(source.lastIndexOf("\n", m.index!) + 1, source.indexOf("\n", m.index!));
        const bound =
            /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:__importStar\()?require\("@pulumi\/pulumi"\)\)?;/.exec(
                line,
            );
        if (!bound) {
            unknown.push(line.trim());
            continue;
        }
        const uses = new RegExp(`\\b${bound[1].replace(/\$/g, "\\$")}\\s*\\.\\s*([A-Za-z_$][\\w$]*)`, "g");
        for (const u of source.matchAll(uses)) names.add(u[1]);
        if (new RegExp(`\\b${bound[1].replace(/\$/g, "\\$")}\\b(?!\\s*[.=])`).test(source.replace(line, ""))) {
            unknown.push(`${bound[1]} is used as a whole (not only as ${bound[1]}.<name>)`);
        }
    }
    return { names, unknown };
}

function jsFiles(dir: string): string[] {
    return fs
        .readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".js"))
        .map((f) => path.join(dir, f));
}

describe("lean pack entry: the @pulumi/pulumi alias", function () {
    this.timeout(60000);
    const policyDir = path.dirname(require.resolve("@pulumi/policy/package.json"));

    it("the scanner finds names, and reports usage shapes it does not understand", () => {
        const found = namesTakenFromSdk(
            'const pulumi_1 = require("@pulumi/pulumi");\nnew pulumi_1.asset.FileAsset(p); pulumi_1.runtime.x();',
        );
        assert.deepStrictEqual([...found.names].sort(), ["asset", "runtime"]);
        assert.deepStrictEqual(found.unknown, []);
        assert.strictEqual(namesTakenFromSdk('const { asset } = require("@pulumi/pulumi");').unknown.length, 1);
        assert.strictEqual(namesTakenFromSdk('const p = require("@pulumi/pulumi");\nf(p);').unknown.length, 1);
    });

    it("covers every name @pulumi/policy takes from the SDK index, with the index's own objects", () => {
        const taken = new Set<string>();
        for (const file of jsFiles(policyDir)) {
            const { names, unknown } = namesTakenFromSdk(fs.readFileSync(file, "utf8"));
            assert.deepStrictEqual(
                unknown,
                [],
                `${path.relative(policyDir, file)} uses @pulumi/pulumi in a way the alias check does not understand`,
            );
            names.forEach((n) => taken.add(n));
        }
        assert.ok(taken.size > 0, "found no use of @pulumi/pulumi in @pulumi/policy: the scan is broken");
        const alias = require(path.join(REPO_ROOT, "pack", "src", "pulumi-sdk"));
        const full = require("@pulumi/pulumi");
        for (const name of taken) {
            assert.ok(
                alias[name] !== undefined,
                `pack/src/pulumi-sdk.ts does not export ${name}, which @pulumi/policy uses`,
            );
            assert.strictEqual(
                alias[name],
                full[name],
                `pack/src/pulumi-sdk.ts exports another ${name} than the SDK index`,
            );
        }
    });

    it("our own compiled pack code never asks for the bare @pulumi/pulumi", () => {
        for (const file of [
            path.join(REPO_ROOT, "bin", "index.js"),
            ...jsFiles(path.join(REPO_ROOT, "bin", "policies")),
        ]) {
            assert.doesNotMatch(fs.readFileSync(file, "utf8"), BARE, file);
        }
    });

    it("the built lean entry asks for the bare @pulumi/pulumi only in the alias's fallback", () => {
        const bundle = fs.readFileSync(PACK_ENTRY, "utf8");
        assert.strictEqual([...bundle.matchAll(BARE)].length, 1, "the bare SDK is required outside the alias");
        assert.ok(fs.existsSync(PACK_ENTRY + ".map"), "the lean entry has no source map");
        assert.match(bundle, /\/\/# sourceMappingURL=index\.js\.map\s*$/);
    });
});
