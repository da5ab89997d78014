/**
 * The fixture, example and bench programs and the tests themselves type-check (mocha runs the tests with
 * ts-node's transpile-only mode, which does not). Runs the TypeScript compiler: an integration spec.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as path from "path";
import { REPO_ROOT } from "../../support/paths";

describe("type-check", () => {
    it("fixture, example and bench programs and the tests themselves type-check", function () {
        this.timeout(180000);
        const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
        for (const project of ["fixtures", "test"]) {
            const r = spawnSync(process.execPath, [tsc, "-p", path.join(REPO_ROOT, project), "--noEmit"], {
                encoding: "utf8",
            });
            assert.strictEqual(r.status, 0, `${project}: ${r.stdout}${r.stderr}`);
        }
    });
});
