/**
 * The one internal policy-SDK API the pack uses (policies/model/report.ts): a finding reported with its own
 * enforcement level. A throw-away pack whose mandatory policy reports through `report` runs in the real
 * `@pulumi/policy` analyzer (its gRPC server, driven as the engine drives it), and the diagnostics must carry
 * each finding's own level. If an SDK upgrade drops or changes the object form of `reportViolation`, this
 * fails here, loudly, instead of waived findings silently blocking (or crashing) users' previews.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../../support/paths";
import { Analyzer } from "../../../../harness/analyzer";

const PACK = `
const { PolicyPack } = require(${JSON.stringify(path.join(REPO_ROOT, "node_modules", "@pulumi", "policy"))});
const { report } = require(${JSON.stringify(path.join(REPO_ROOT, "bin", "policies", "model", "report.js"))});
new PolicyPack("sdk-report-probe", {
    policies: [{
        name: "probe",
        description: "Probe description.",
        enforcementLevel: "mandatory",
        validateResource: (args, reportViolation) => {
            report(reportViolation, { message: "own level", level: "advisory" });
            report(reportViolation, { message: "own level on a urn", urn: args.urn + "-other", level: "advisory" });
            report(reportViolation, { message: "policy level" });
            report(reportViolation, { message: "policy level on a urn", urn: args.urn + "-other" });
        },
    }],
});
`;

describe("policy SDK: a finding's own enforcement level (internal object form of reportViolation)", function () {
    this.timeout(120000);
    let dir: string;
    let analyzer: Analyzer | undefined;
    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-sdk-report-"));
        fs.writeFileSync(
            path.join(dir, "package.json"),
            JSON.stringify({ name: "sdk-report-probe", version: "0.0.1" }),
        );
        fs.writeFileSync(path.join(dir, "index.js"), PACK);
        analyzer = await Analyzer.start(path.join(dir, "index.js"), dir);
        await analyzer.configure({}, { project: "p", stack: "s" });
    });
    after(() => {
        analyzer?.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("the analyzer reports each finding at its own level, on its own URN, without losing the message", async () => {
        const urn = "urn:pulumi:s::p::test:index:Thing::thing";
        const rows = await analyzer!.analyze([{ type: "test:index:Thing", name: "thing", urn, properties: { a: 1 } }]);
        const byMessage = (a: string[], b: string[]) => a[0].localeCompare(b[0]);
        const got = rows.map((r) => [r.message, r.level, r.urn]).sort(byMessage);
        assert.deepStrictEqual(
            got,
            [
                ["own level", "advisory", urn],
                ["own level on a urn", "advisory", `${urn}-other`],
                ["policy level", "mandatory", urn],
                ["policy level on a urn", "mandatory", `${urn}-other`],
            ].sort(byMessage),
            `@pulumi/policy changed how reportViolation's object form sets a finding's level (policies/model/report.ts relies on it): ${JSON.stringify(rows)}`,
        );
    });

    it("the pack and the repository pin a @pulumi/policy that has the object form (>= 1.20)", () => {
        for (const file of [path.join(REPO_ROOT, "package.json"), path.join(REPO_ROOT, "pack", "package.json")]) {
            const spec = JSON.parse(fs.readFileSync(file, "utf8")).dependencies["@pulumi/policy"] as string;
            const m = /^(\d+)\.(\d+)\.\d+$/.exec(spec);
            assert.ok(m, `${file}: @pulumi/policy must be pinned exactly (got ${spec})`);
            assert.ok(
                Number(m[1]) > 1 || Number(m[2]) >= 20,
                `${file}: @pulumi/policy ${spec} has no per-finding level`,
            );
        }
    });
});
