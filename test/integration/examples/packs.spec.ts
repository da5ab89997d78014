/**
 * Other CrossGuard packs through `pko-guard test` (the installed command, bin/cli/pko-guard.js), on the examples'
 * fixtures:
 * - examples/org-pack: an organisation's own pack beside pko-guard's, each with the organisation's config, in the
 *   mock and the real leg (identical rows in both); a wrong expectation of the organisation's rule fails;
 * - examples/awsguard: Pulumi's published @pulumi/awsguard 0.3.1, installed as its README says (bench/comparison-packs.ts
 *   builds the pack folder with npm), alone (--no-default-pack), in the mock leg.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY, REPO_ROOT } from "../../../support/paths";
import { awsguardPack } from "../../../bench/comparison-packs";
import { requireToolchain } from "../../support/helpers";

const ORG = path.join(REPO_ROOT, "examples", "org-pack");
const ORG_OPTIONS = [
    "--config",
    path.join(ORG, "pko-guard-config.json"),
    "--policy-pack",
    path.join(ORG, "pack"),
    "--policy-pack-config",
    path.join(ORG, "acme-config.json"),
];

function pkoGuardTest(args: string[], env: NodeJS.ProcessEnv = process.env) {
    return spawnSync(process.execPath, [CLI_ENTRY, "test", ...args], {
        cwd: REPO_ROOT,
        env: { ...env, NO_COLOR: "1", GITHUB_ACTIONS: "" },
        encoding: "utf8",
        timeout: 900000,
    });
}

describe("other packs through pko-guard test", function () {
    this.timeout(1800000);

    it("an organisation's pack beside pko-guard's, with both configs: the mock and real legs match", function () {
        requireToolchain(this);
        const r = pkoGuardTest([path.join(ORG, "fixtures"), "--leg", "both", ...ORG_OPTIONS]);
        assert.strictEqual(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /^match +live-stack-branch +mock real +4 rows$/m);
        assert.match(r.stdout, /^match +team-labelled +mock real +0 rows$/m);
        assert.match(r.stdout, /^match +unlabelled-latest +mock real +2 rows$/m);
    });

    it("without the organisation's config its rule reads another label, and the fixture fails on it", () => {
        const r = pkoGuardTest([path.join(ORG, "fixtures", "unlabelled-latest"), ...ORG_OPTIONS.slice(0, 4)]);
        assert.strictEqual(r.status, 1, r.stdout + r.stderr);
        // The detail is wrapped to the width (120 columns off a terminal): read it unwrapped.
        assert.match(
            r.stdout.replace(/\n {4}/g, " "),
            /^MISMATCH unlabelled-latest \[mock\] acme-team-label on worker: 1 message\(s\) do not match \/Deployment worker has no acme\\\.io\/team label\/: Deployment worker has no team label$/m,
        );
    });

    it("Pulumi's @pulumi/awsguard, installed as its README says, alone: its fixtures match", async () => {
        const pack = await awsguardPack();
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-awsguard-"));
        try {
            const json = path.join(tmp, "report.json");
            const r = pkoGuardTest([
                path.join(REPO_ROOT, "examples", "awsguard", "fixtures"),
                "--no-default-pack",
                "--policy-pack",
                pack,
                "--report",
                `json=${json}`,
            ]);
            assert.strictEqual(r.status, 0, r.stdout + r.stderr);
            const report = JSON.parse(fs.readFileSync(json, "utf8"));
            assert.deepStrictEqual(
                report.fixtures.map((f: { fixture: string; outcome: string }) => [f.fixture, f.outcome]),
                [
                    ["logged-bucket", "match"],
                    ["public-bucket", "match"],
                ],
            );
            assert.doesNotMatch(r.stdout, /pko-/);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });
});
