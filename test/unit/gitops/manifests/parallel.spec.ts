/**
 * `check`'s judge step mapped over threads (gitops/manifests/parallel.ts): a part whose worker thread fails is
 * judged on the command's thread, the rows are the single-threaded run's, and the fallback is visible: one notice
 * a part, with the thread's reason escaped. (That a large run does use its threads, and gives the same bytes, is
 * test/integration/gitops/manifests/parallel.spec.ts, on the installed command.)
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { checkManifests } from "../../../../gitops/manifests/parallel";
import { packConfig } from "../../../../evaluation/pack-config";

const stack = (name: string) =>
    [
        "apiVersion: pulumi.com/v1",
        "kind: Stack",
        "metadata:",
        `  name: ${name}`,
        "  namespace: apps",
        "spec:",
        `  stack: acme/${name}/prod`,
        "  projectRepo: https://github.com/acme/app",
        "  branch: main",
        "  destroyOnFinalize: true",
        "",
    ].join("\n");

describe("check's judge step on threads", () => {
    let root: string;
    beforeEach(() => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-parallel-")));
        for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(root, `s${i}.yaml`), stack(`app-${i}`));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("judges a part whose thread failed here, says so once with the reason escaped, and gives the same rows", async () => {
        // A worker entry that fails as it starts, with a reason that would drive a terminal.
        const entry = path.join(root, "failing-entry.js");
        fs.writeFileSync(entry, 'throw new Error("no part served \\u001b[31mhere");\n');
        const o = { repoRoot: root, cwd: root };
        const one = await checkManifests(["."], o, packConfig());
        const notices: string[] = [];
        const two = await checkManifests(["."], o, packConfig(), {
            entry,
            threads: 2,
            notice: (line) => notices.push(line),
        });
        assert.deepStrictEqual(notices, [
            "pko-guard check: part 2 of 2 judged on the main thread: its worker thread failed (no part served \\x1b[31mhere)",
        ]);
        assert.ok(one.rows.length > 6, `${one.rows.length} rows`);
        assert.deepStrictEqual(two.rows, one.rows);
        assert.deepStrictEqual(two.load.objects.length, 6);
    });
});
