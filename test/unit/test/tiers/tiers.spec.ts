/**
 * Tests in tiers: every spec belongs to exactly one tier (so a new spec cannot sit unclassified, or in
 * both), every tier entry still names a spec, and the unit tier's guard refuses child processes and
 * connections even when the code under test catches the error.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";
import { refuseProcessesAndConnections } from "../../../tiers/guard";

interface Tier {
    name: string;
    config: { spec: string[]; require: string[] };
}

const TIERS: Tier[] = ["unit", "integration"].map((name) => ({
    name,
    config: require(path.join(REPO_ROOT, "test", "tiers", `${name}.js`)),
}));

/** Every `*.spec.ts` under test/, as repository-relative paths with forward slashes. */
function allSpecs(): string[] {
    const files = fs.readdirSync(path.join(REPO_ROOT, "test"), { recursive: true, encoding: "utf8" });
    return files
        .map((f) => `test/${f.split(path.sep).join("/")}`)
        .filter((f) => f.endsWith(".spec.ts") && !f.startsWith("test/data/"))
        .sort();
}

/** The specs a tier entry names: one file, or `folder/*.spec.ts` (the folder's own specs, not its subfolders'). */
function expand(entry: string, specs: string[]): string[] {
    const folder = /^(test(?:\/[\w.-]+)*)\/\*\.spec\.ts$/.exec(entry);
    if (folder) return specs.filter((s) => path.posix.dirname(s) === folder[1]);
    assert.match(entry, /^test\/[\w./-]+\.spec\.ts$/, `tier entry ${entry}: a spec file or folder/*.spec.ts`);
    return specs.filter((s) => s === entry);
}

describe("test tiers", () => {
    const specs = allSpecs();

    it("every spec is in exactly one tier (add a new spec to test/tiers/unit.js or integration.js)", () => {
        const tiersOf = new Map<string, string[]>(specs.map((s) => [s, []]));
        for (const tier of TIERS)
            for (const entry of tier.config.spec) for (const s of expand(entry, specs)) tiersOf.get(s)!.push(tier.name);
        const unclassified = specs.filter((s) => tiersOf.get(s)!.length === 0);
        const twice = specs
            .filter((s) => tiersOf.get(s)!.length > 1)
            .map((s) => `${s} (${tiersOf.get(s)!.join(", ")})`);
        assert.deepStrictEqual({ unclassified, twice }, { unclassified: [], twice: [] });
    });

    it("every tier entry names at least one spec", () => {
        const stale = TIERS.flatMap((t) =>
            t.config.spec.filter((entry) => expand(entry, specs).length === 0).map((entry) => `${t.name}: ${entry}`),
        );
        assert.deepStrictEqual(stale, []);
    });

    it("the unit tier, and only it, loads the guard", () => {
        assert.deepStrictEqual(
            TIERS.map((t) => t.config.require.includes("test/tiers/unit-guard.ts")),
            TIERS.map((t) => t.name === "unit"),
        );
    });

    describe("the unit guard", () => {
        const childProcess = require("child_process");
        const net = require("net");
        let attempts: string[] = [];
        let restore = () => {};
        beforeEach(() => {
            attempts = [];
            restore = refuseProcessesAndConnections((m) => attempts.push(m));
        });
        afterEach(() => restore());

        for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
            it(`refuses child_process.${name}, and reports the attempt even when its error is caught`, () => {
                assert.throws(
                    () => childProcess[name](process.execPath, ["-e", "0"]),
                    /^Error: child_process\.\w+ in a unit spec: the unit tier starts no process/,
                );
                assert.deepStrictEqual(attempts.length, 1);
            });
        }

        it("refuses a connection", () => {
            assert.throws(
                () => net.connect({ host: "127.0.0.1", port: 9 }),
                /a network connection \(net\.Socket\.connect\) in a unit spec/,
            );
            assert.deepStrictEqual(attempts.length, 1);
        });

        it("puts the originals back", () => {
            const spawnSync = childProcess.spawnSync;
            restore();
            restore = () => {};
            assert.notStrictEqual(childProcess.spawnSync, spawnSync);
        });
    });
});
