/**
 * `pko-guard test --update` from the installed command: a fixture whose expectations drifted (a count, an entry
 * no longer reported, one missing) is rewritten to what its legs report with that diff alone, and then matches;
 * a fixture that already matches is not touched; nothing under the paths is a fixture or corpus entry: exit 2.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";

const FIX = (n: string) => path.join(REPO_ROOT, "fixtures", n);

describe("pko-guard test --update", function () {
    this.timeout(300000);
    let tmp: string;
    const run = (...args: string[]) =>
        spawnSync(process.execPath, [CLI_ENTRY, "test", ...args], {
            encoding: "utf8",
            cwd: tmp,
            env: { ...process.env, NO_COLOR: "1", GITHUB_ACTIONS: "" },
        });
    before(() => {
        // The fixtures are copied beside links to the fixtures' _lib and the repository's node_modules, so that
        // their imports resolve as in fixtures/ and the source tree is never written.
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-update-"));
        fs.mkdirSync(path.join(tmp, "fixtures"));
        fs.symlinkSync(FIX("_lib"), path.join(tmp, "fixtures", "_lib"));
        fs.symlinkSync(FIX("tsconfig.json"), path.join(tmp, "fixtures", "tsconfig.json"));
        fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(tmp, "node_modules"));
        for (const name of ["resync-floor", "stack-name-length"])
            fs.cpSync(FIX(name), path.join(tmp, "fixtures", name), { recursive: true });
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("rewrites drifted expectations to the verdicts with the change alone, and leaves a matching fixture be", () => {
        const file = path.join(tmp, "fixtures", "resync-floor", "expect.yaml");
        const original = fs.readFileSync(file, "utf8");
        const below =
            "  - policy: pko-stack-resync-floor\n    resource: below-floor-dev\n    count: 1\n    level: advisory\n";
        assert.ok(original.endsWith(below), "the fixture's last entry is the one this spec removes");
        const drifted =
            original.replace("count: 1", "count: 3").slice(0, -below.length) +
            "  - policy: pko-stack-name-length\n    resource: eager-dev\n    count: 1\n";
        fs.writeFileSync(file, drifted);
        assert.strictEqual(run("fixtures").status, 1, "the drifted fixture mismatches");
        const r = run("--update", "fixtures");
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /^updated \S+resync-floor\/expect\.yaml\n1 updated, 1 unchanged; review the diff\n$/);
        // the count back, the stray entry removed, the missing one appended at the end: the original again
        const updated = fs.readFileSync(file, "utf8");
        assert.strictEqual(updated, original);
        const again = run("fixtures");
        assert.strictEqual(again.status, 0, again.stdout + again.stderr);
        assert.match(again.stdout, /2 fixture\(s\): 2 match/);
    });

    it("says when there is nothing to update (exit 2)", () => {
        const empty = path.join(tmp, "empty");
        fs.mkdirSync(empty);
        const r = run("--update", empty);
        assert.strictEqual(r.status, 2);
        assert.strictEqual(r.stderr, "pko-guard: no fixtures or corpus entries found\n");
    });
});
