/**
 * Reports on every outcome and one rule for paths (issue 19 items 7 and 8), with `check` as users run it:
 * bad input still writes every requested report (valid, saying why); a report that cannot be written does
 * not stop the others; a report path that is an input is refused; SARIF and GitHub output name files
 * relative to %SRCROOT% (the repository root: --repo-root, else the git top level), standard input and
 * files outside the repository as such, and never an absolute path.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { jsonReportErrors, junitErrors, sarifErrors } from "../../support/validators";
import { pkoGuard, prodStackYaml } from "../../support/inert";

const STACK = prodStackYaml();

describe("reports on every outcome, one rule for paths (issue 19 items 7, 8)", function () {
    this.timeout(180000);
    let tmp: string;
    let repo: string;
    beforeEach(() => {
        tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-reports-")));
        repo = path.join(tmp, "repo");
        fs.mkdirSync(path.join(repo, "deploy", "prod"), { recursive: true });
        assert.strictEqual(spawnSync("git", ["init", "-q", repo]).status, 0);
        fs.writeFileSync(path.join(repo, "deploy", "prod", "stack.yaml"), STACK);
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    const reports = (dir: string) => [
        "--report",
        `json=${dir}/r.json`,
        "--report",
        `junit=${dir}/r.xml`,
        "--report",
        `sarif=${dir}/r.sarif`,
    ];

    it("bad input: exit 2 and every requested report is written, valid, saying why", async () => {
        fs.writeFileSync(path.join(repo, "deploy", "bad.yaml"), "a: *nope\n");
        const r = pkoGuard(["check", "deploy", ...reports("out")], { cwd: repo });
        assert.strictEqual(r.code, 2, r.stderr);
        const json = JSON.parse(fs.readFileSync(path.join(repo, "out", "r.json"), "utf8"));
        assert.deepStrictEqual(jsonReportErrors(json), []);
        assert.strictEqual(json.projects[0].outcome, "error");
        assert.match(json.projects[0].error, /invalid YAML/);
        const sarif = JSON.parse(fs.readFileSync(path.join(repo, "out", "r.sarif"), "utf8"));
        assert.deepStrictEqual(sarifErrors(sarif), []);
        assert.strictEqual(sarif.runs[0].invocations[0].executionSuccessful, false);
        assert.deepStrictEqual(await junitErrors(fs.readFileSync(path.join(repo, "out", "r.xml"), "utf8")), []);
    });

    it("a report that cannot be written: the others are written, one line names it, exit 2", () => {
        const r = pkoGuard(
            ["check", "deploy", "--report", "json=deploy/prod/stack.yaml/r.json", "--report", "sarif=out/r.sarif"],
            { cwd: repo },
        );
        assert.strictEqual(r.code, 2, r.stderr);
        assert.match(
            r.stderr.trim(),
            /^pko-guard: cannot write report json=deploy\/prod\/stack\.yaml\/r\.json \((EEXIST|ENOTDIR)\)$/,
        );
        assert.ok(fs.existsSync(path.join(repo, "out", "r.sarif")));
        assert.match(r.stdout, /1 blocking: FAIL/);
    });

    it("a report path that is an input is refused; the manifest is untouched", () => {
        for (const target of ["deploy/prod/stack.yaml", "./deploy/../deploy/prod/stack.yaml"]) {
            const r = pkoGuard(["check", "deploy", "--report", `json=${target}`, "--report", "sarif=out/r.sarif"], {
                cwd: repo,
            });
            assert.strictEqual(r.code, 2, r.stderr);
            assert.match(
                r.stderr.trim(),
                /^pko-guard: --report json=.* is an input of this run \(deploy\); refusing to overwrite it$/,
            );
            assert.strictEqual(fs.readFileSync(path.join(repo, "deploy", "prod", "stack.yaml"), "utf8"), STACK);
            assert.strictEqual(
                JSON.parse(fs.readFileSync(path.join(repo, "out", "r.sarif"), "utf8")).runs[0].invocations[0]
                    .executionSuccessful,
                false,
            );
        }
        const named = pkoGuard(["check", "deploy/prod/stack.yaml", "--report", "json=deploy/prod/stack.yaml"], {
            cwd: repo,
        });
        assert.strictEqual(named.code, 2);
        assert.strictEqual(fs.readFileSync(path.join(repo, "deploy", "prod", "stack.yaml"), "utf8"), STACK);
        // A new report file in a scanned folder is fine (it is not an input).
        assert.strictEqual(pkoGuard(["check", ".", "--report", "json=r.json"], { cwd: repo }).code, 1);
    });

    const sarifPlaces = (file: string) => {
        const run = JSON.parse(fs.readFileSync(file, "utf8")).runs[0];
        assert.deepStrictEqual(sarifErrors({ ...JSON.parse(fs.readFileSync(file, "utf8")) }), []);
        return {
            root: run.originalUriBaseIds["%SRCROOT%"].uri,
            places: run.results.map((x: any) => x.locations[0].physicalLocation.artifactLocation),
        };
    };

    for (const [label, cwd] of [
        ["the repository", () => repo],
        ["a subfolder", () => path.join(repo, "deploy")],
        ["outside the repository", () => tmp],
    ] as const) {
        it(`SARIF and GitHub paths from ${label}: relative to the git top level`, () => {
            const target = path.relative(cwd(), path.join(repo, "deploy")) || ".";
            const r = pkoGuard(
                ["check", target, "--format", "github", "--report", `sarif=${path.join(tmp, "r.sarif")}`],
                { cwd: cwd() },
            );
            assert.strictEqual(r.code, 1, r.stderr);
            const s = sarifPlaces(path.join(tmp, "r.sarif"));
            assert.strictEqual(s.root, `file://${repo}/`);
            assert.ok(s.places.length > 0);
            for (const p of s.places)
                assert.deepStrictEqual(p, { uri: "deploy/prod/stack.yaml", uriBaseId: "%SRCROOT%" });
            assert.match(r.stdout, /^::error file=deploy\/prod\/stack\.yaml,line=10,/m);
        });
    }

    it("--repo-root: %SRCROOT% and every path are relative to it", () => {
        const r = pkoGuard(
            ["check", "deploy", "--repo-root", "deploy", "--format", "github", "--report", "sarif=r.sarif"],
            { cwd: repo },
        );
        assert.strictEqual(r.code, 1, r.stderr);
        const s = sarifPlaces(path.join(repo, "r.sarif"));
        assert.strictEqual(s.root, `file://${repo}/deploy/`);
        for (const p of s.places) assert.deepStrictEqual(p, { uri: "prod/stack.yaml", uriBaseId: "%SRCROOT%" });
        assert.match(r.stdout, /^::error file=prod\/stack\.yaml,line=10,/m);
    });

    it("standard input and a file outside the repository are named as such, never by an absolute path", () => {
        fs.writeFileSync(path.join(tmp, "outside.yaml"), STACK.replace("name: app", "name: other"));
        const r = pkoGuard(
            ["check", "deploy", "-", path.join(tmp, "outside.yaml"), "--format", "github", "--report", "sarif=r.sarif"],
            {
                cwd: repo,
                input: STACK.replace("name: app", "name: piped"),
            },
        );
        assert.strictEqual(r.code, 1, r.stderr);
        const text = fs.readFileSync(path.join(repo, "r.sarif"), "utf8");
        assert.ok(
            !text.includes(`"${tmp}`) && !text.includes(`file://${tmp}/outside`) && !text.includes("%3Cstdin%3E"),
            "no absolute path, no encoded <stdin>",
        );
        const bases = new Set(
            sarifPlaces(path.join(repo, "r.sarif")).places.map((p: any) => `${p.uriBaseId} ${p.uri}`),
        );
        assert.deepStrictEqual([...bases].sort(), [
            "%SRCROOT% deploy/prod/stack.yaml",
            "OUTSIDE outside.yaml",
            "STDIN stdin",
        ]);
        const commands = r.stdout.split("\n").filter((l) => l.startsWith("::error"));
        assert.ok(
            commands.some((l) => /^::error title=[^:]*::standard input:10: Stack\/pulumi\/piped/.test(l)),
            commands.join("\n"),
        );
        assert.ok(
            commands.some((l) =>
                /^::error title=[^:]*::outside\.yaml \(outside the repository\):10: Stack\/pulumi\/other/.test(l),
            ),
            commands.join("\n"),
        );
        assert.ok(!commands.some((l) => l.includes(tmp)), "no absolute path in workflow commands");
    });
});
