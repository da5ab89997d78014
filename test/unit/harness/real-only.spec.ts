/**
 * realOnly fixtures: a program the mock leg cannot run (Pulumi YAML) is shown as skipped in the mock
 * leg with its reason, never as a match; a non-Node program must say so, and a fixture cannot be both
 * mock-only and real-only.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { BadInputError } from "../../../support/errors";
import { loadFixture } from "../../../harness/expect";
import { runMockLeg } from "../../../harness/legs/mock";

function yamlFixture(expect: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-realonly-"));
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: y\nruntime: yaml\nresources: {}\n");
    fs.writeFileSync(path.join(dir, "expect.yaml"), `apiVersion: pko-guard/v1\nkind: Fixture\n${expect}`);
    return dir;
}

describe("realOnly fixtures", () => {
    it("the YAML fixture is skipped in the mock leg with its reason", async () => {
        const f = loadFixture(path.join(REPO_ROOT, "fixtures", "yaml-program-stack"));
        const r = await runMockLeg(f, {
            packs: [{ analyzer: () => Promise.reject(new Error("must not start")), config: () => ({}) }],
            timeoutMs: 1000,
        });
        assert.strictEqual(r.status, "skipped");
        assert.match(r.status === "skipped" ? r.reason : "", /^real-only: /);
    });

    it("a non-Node program without realOnly is bad input", () => {
        const dir = yamlFixture("description: d\nviolations: []\n");
        try {
            assert.throws(
                () => loadFixture(dir),
                (e: Error) => e instanceof BadInputError && /realOnly/.test(e.message),
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("mockOnly and realOnly together are bad input", () => {
        const dir = yamlFixture("description: d\nmockOnly: a\nrealOnly: b\nviolations: []\n");
        try {
            assert.throws(() => loadFixture(dir), BadInputError);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
