/**
 * Hidden classes on `check`'s hot paths (support/shapes.ts): objects made alike share one, as V8's own
 * `%HaveSameMap` says, counted in a fresh process (test/support/hidden-classes-probe.ts). Node 20's V8 gives every
 * object a spread literal extends (`{ ...row, facts }`) a hidden class of its own: each count below fails when
 * such a literal comes back on its path (the source-path annotation, rows, located rows, findings).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";

const PROBE = path.join(REPO_ROOT, "test", "support", "hidden-classes-probe.ts");

/** A repository of `n` Stacks on a branch in production, without annotations (check adds the source-path one). */
function repository(n: number): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-shapes-"));
    const docs = [];
    for (let i = 0; i < n; i++) {
        docs.push(
            [
                "apiVersion: pulumi.com/v1",
                "kind: Stack",
                "metadata:",
                `  name: app-${i}`,
                "  namespace: team",
                "  labels:",
                "    env: production",
                "spec:",
                `  stack: acme/app-${i}/production`,
                "  projectRepo: https://github.com/acme/app",
                "  branch: main",
                "  destroyOnFinalize: true",
            ].join("\n"),
        );
    }
    fs.mkdirSync(path.join(dir, "manifests"));
    fs.writeFileSync(path.join(dir, "manifests", "stacks.yaml"), docs.join("\n---\n"));
    return dir;
}

describe("hidden classes on check's hot paths", () => {
    it("objects with the source-path annotation, rows, located rows and findings share their hidden classes", function () {
        this.timeout(120000);
        const dir = repository(60);
        try {
            const r = spawnSync(
                process.execPath,
                ["--allow-natives-syntax", "-r", "ts-node/register/transpile-only", PROBE, dir],
                { encoding: "utf8", timeout: 110000 },
            );
            assert.strictEqual(r.status, 0, r.stderr);
            const got = JSON.parse(r.stdout);
            // The premise (V8 11.3, Node 20): a spread literal that adds a key makes a class per object.
            if (String(got.v8).startsWith("11.3.")) assert.ok(got.spread > 10, `spread: ${got.spread}`);
            assert.strictEqual(got.extended, 1);
            assert.deepStrictEqual(got.objects, { n: 60, classes: 1 });
            assert.strictEqual(got.metadata, 1);
            assert.strictEqual(got.annotations, 1);
            // Findings on every Stack (a branch and destroyOnFinalize in production), from several rules.
            assert.ok(got.rows.n >= 120 && got.rows.policies >= 2, JSON.stringify(got.rows));
            assert.ok(got.rows.classes <= 3, `rows: ${JSON.stringify(got.rows)}`);
            assert.ok(got.located <= 3, `located rows: ${got.located}`);
            assert.ok(got.findings <= 3, `findings: ${got.findings}`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
