/**
 * Tests in tiers: the folder is the tier. Each tier's mocha config runs exactly the specs under its own folder
 * (test/unit/, test/property/, test/integration/, test/chaos/, test/corpus/), every spec lives under exactly one of them (none elsewhere, so a new spec
 * cannot sit unclassified), only the in-process tiers (unit, property) load the guard, and the guard refuses child processes and
 * connections even when the code under test catches the error.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";
import { refuseProcessesAndConnections } from "../../../tiers/guard";

const TIER_NAMES: string[] = require("../../../tiers/names");

interface Tier {
    name: string;
    config: { spec: string[]; require: string[] };
}

const TIERS: Tier[] = TIER_NAMES.map((name) => ({
    name,
    config: require(path.join(REPO_ROOT, "test", "tiers", `${name}.js`)),
}));

/** Every `*.spec.ts` under test/, as repository-relative paths with forward slashes. */
function allSpecs(): string[] {
    const files = fs.readdirSync(path.join(REPO_ROOT, "test"), { recursive: true, encoding: "utf8" });
    return files
        .map((f) => `test/${f.split(path.sep).join("/")}`)
        .filter((f) => f.endsWith(".spec.ts") && !f.split("/").includes("node_modules"))
        .sort();
}

describe("test tiers", () => {
    it("each tier runs every spec under its own folder, and nothing else", () => {
        assert.deepStrictEqual(
            TIERS.map((t) => t.config.spec),
            TIERS.map((t) => [`test/${t.name}/**/*.spec.ts`]),
        );
    });

    it("every spec lives under exactly one tier folder (test/<tier>/), none elsewhere", () => {
        const specs = allSpecs();
        const tiersOf = (s: string) => TIER_NAMES.filter((name) => s.startsWith(`test/${name}/`));
        assert.deepStrictEqual(
            specs.filter((s) => tiersOf(s).length !== 1),
            [],
        );
        for (const name of TIER_NAMES)
            assert.ok(
                specs.some((s) => tiersOf(s)[0] === name),
                `no spec under test/${name}/`,
            );
    });

    it("the in-process tiers (unit, property), and only they, load the guard", () => {
        assert.deepStrictEqual(
            TIERS.map((t) => t.config.require.includes("test/tiers/unit-guard.ts")),
            TIERS.map((t) => t.name === "unit" || t.name === "property"),
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
