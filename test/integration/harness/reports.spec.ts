/**
 * Reports, validated by real validators: JUnit XML against test/data/schemas/junit.xsd with libxml2
 * (xmllint-wasm), SARIF against the official SARIF 2.1.0 JSON schema, JSON against the documented
 * report schema. No secret value from any fixture appears in any of them, nor in the table.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { HARNESS_ENTRY, REPO_ROOT } from "../../../support/paths";
import { fixtureSecrets } from "../../support/secrets";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";

const CLI = HARNESS_ENTRY;
const FIX = (n: string) => path.join(REPO_ROOT, "fixtures", n);

describe("reports", function () {
    this.timeout(300000);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-reports-"));
    const files = { json: path.join(tmp, "r.json"), junit: path.join(tmp, "r.xml"), sarif: path.join(tmp, "r.sarif") };
    let stdout = "";

    before(() => {
        // Every fixture, plus one deliberate mismatch so failures are rendered too. The mismatch lives in
        // this test's temporary folder (never in the source tree), beside a link to the fixtures' _lib and
        // the repository's node_modules so its imports resolve as in fixtures/.
        const bad = path.join(tmp, "fixtures", "report-mismatch");
        fs.mkdirSync(bad, { recursive: true });
        fs.symlinkSync(FIX("_lib"), path.join(tmp, "fixtures", "_lib"));
        fs.symlinkSync(FIX("tsconfig.json"), path.join(tmp, "fixtures", "tsconfig.json"));
        fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(tmp, "node_modules"));
        for (const f of ["Pulumi.yaml", "index.ts"])
            fs.copyFileSync(path.join(FIX("creds-git-auth"), f), path.join(bad, f));
        fs.writeFileSync(
            path.join(bad, "expect.yaml"),
            fs
                .readFileSync(path.join(FIX("creds-git-auth"), "expect.yaml"), "utf8")
                .replace(/^description: .*$/m, 'description: "expects the wrong count <on purpose> & escapes"')
                .replace('count: 2\n    message: "spec', 'count: 7\n    message: "spec'),
        );
        const fixtures = fs
            .readdirSync(path.join(REPO_ROOT, "fixtures"))
            .filter((d) => fs.existsSync(path.join(FIX(d), "expect.yaml")));
        const r = spawnSync(
            process.execPath,
            [
                CLI,
                "--report",
                `json=${files.json}`,
                "--report",
                `junit=${files.junit}`,
                "--report",
                `sarif=${files.sarif}`,
                ...fixtures.map(FIX),
                bad,
            ],
            { encoding: "utf8" },
        );
        assert.strictEqual(r.status, 1, r.stderr);
        stdout = r.stdout + r.stderr;
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("writes JUnit XML that validates against the schema, with the mismatch as a failure", async () => {
        const xml = fs.readFileSync(files.junit, "utf8");
        assert.deepStrictEqual(await junitErrors(xml), []);
        assert.match(xml, /<failure message="[^"]* on [^"]*: expected 7, got 2"/);
        assert.match(xml, /<testsuite name="pko-guard: report-mismatch" tests="1" failures="1"/);
    });

    it("writes SARIF 2.1.0 that validates against the official schema", () => {
        const sarif = JSON.parse(fs.readFileSync(files.sarif, "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        const run = sarif.runs[0];
        const rules = run.tool.driver.rules.map((r: { id: string }) => r.id);
        assert.ok(rules.includes("pko-stack-credentials-from-secrets"));
        for (const res of run.results) {
            assert.ok(rules.includes(res.ruleId), res.ruleId);
            const uri = res.locations[0].physicalLocation.artifactLocation.uri;
            // A fixture outside the repository is named by its base name, never by an absolute path.
            if (res.properties.subject === "report-mismatch")
                assert.deepStrictEqual(
                    [uri, res.locations[0].physicalLocation.artifactLocation.uriBaseId],
                    ["index.ts", "OUTSIDE"],
                );
            // Program fixtures are located at their program's main file (TypeScript or Go); manifest fixtures at the
            // manifest file and line. Either way the file is one the fixture has.
            else {
                assert.match(uri, /^fixtures\/[^/]+\/(index\.ts|main\.go|manifests\/.+\.(ya?ml|jsonnet))$/);
                assert.ok(fs.existsSync(path.join(REPO_ROOT, uri)), uri);
            }
            assert.match(res.locations[0].logicalLocations[0].fullyQualifiedName, /^urn:pulumi:/);
        }
    });

    it("writes JSON that validates against the documented report schema", () => {
        const report = JSON.parse(fs.readFileSync(files.json, "utf8"));
        assert.deepStrictEqual(jsonReportErrors(report), []);
        assert.strictEqual(report.summary.mismatch, 1);
    });

    it("never contains a secret value from the fixtures, in any report or the table", () => {
        const secrets = fixtureSecrets();
        assert.ok(secrets.length >= 8, `only found ${secrets.length} planted secrets`);
        for (const planted of [
            "canary-url-password",
            "canary-workspace-secret",
            "pul-canaryliteral000000000000000000000000000",
        ])
            assert.ok(secrets.includes(planted), `${planted} is not collected`);
        for (const [name, text] of [
            ["table", stdout],
            ...Object.entries(files).map(([k, f]) => [k, fs.readFileSync(f, "utf8")]),
        ]) {
            for (const s of secrets) assert.ok(!text.includes(s), `${name} contains the secret ${s.slice(0, 6)}...`);
        }
    });
});
