/**
 * Expectation files as `pko-guard test` reads them: the versioned header (apiVersion pko-guard/v1, kind Fixture)
 * is required (a file of the format from before it is one line naming --migrate); every invalid field is a line of its own with the file's line; each
 * expected violation keeps its line, which the GitHub annotations of a failed check point at; --migrate adds the
 * header and changes nothing else; the schema the package ships for editors is the one the harness validates with.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError, BadInputsError } from "../../../support/errors";
import { REPO_ROOT } from "../../../support/paths";
import { FIXTURE_SCHEMA, migratedText, readExpectFile } from "../../../harness/expect-file";
import { loadFixture } from "../../../harness/expect";
import { loadFixtures, rejectUnknownPolicies } from "../../../harness/runner";
import { fixtureAnnotations } from "../../../harness/annotations";
import { FixtureVerdict } from "../../../harness/verdict";

/** The header every expectation file starts with. */
const V1 = "apiVersion: pko-guard/v1\nkind: Fixture\n";

describe("expectation files (expect.yaml)", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-expect-"));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));
    let n = 0;
    const file = (text: string) => {
        const f = path.join(tmp, `expect-${n++}.yaml`);
        fs.writeFileSync(f, text);
        return f;
    };
    const fixture = (name: string, expect: string) => {
        const dir = path.join(tmp, "fixtures", name);
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
        fs.writeFileSync(path.join(dir, "index.ts"), "export {};\n");
        fs.writeFileSync(path.join(dir, "expect.yaml"), expect);
        return dir;
    };
    const problems = (text: string): string[] => {
        const f = file(text);
        try {
            readExpectFile(f, "expect.yaml");
        } catch (e) {
            if (e instanceof BadInputsError) return e.problems;
            if (e instanceof BadInputError) return [e.message];
            throw e;
        }
        return [];
    };

    it("requires the versioned header: a file without it is one line naming --migrate", () => {
        const v1 = readExpectFile(file(`${V1}description: d\nviolations: []\n`));
        assert.strictEqual(v1.versioned, true);
        assert.strictEqual(v1.data.description, "d");
        assert.deepStrictEqual(problems("description: d\nviolations: []\n"), [
            "expect.yaml:1: no apiVersion: pko-guard/v1 and kind: Fixture (the format from before versioning): run pko-guard test --migrate",
        ]);
        // --migrate reads the old format as v1
        const old = readExpectFile(file("description: d\nviolations: []\n"), "expect.yaml", { unversioned: true });
        assert.strictEqual(old.versioned, false);
        assert.deepStrictEqual(problems("apiVersion: pko-guard/v1\ndescription: d\nviolations: []\n"), [
            'expect.yaml:1: /: missing field "kind"',
        ]);
    });

    it("reports every invalid field on a line of its own, with its line in the file", () => {
        const text = [
            "apiVersion: pko-guard/v2",
            "kind: Fixture",
            "description: d",
            "violations:",
            "  - policy: p",
            "    resource: r",
            "    count: one",
            "    colour: red",
            "  - policy: q",
            "    count: 1",
            "",
        ].join("\n");
        assert.deepStrictEqual(problems(text).sort(), [
            'expect.yaml:1: /apiVersion must be "pko-guard/v1"',
            "expect.yaml:7: /violations/0/count must be integer",
            'expect.yaml:8: /violations/0: unknown field "colour"',
            'expect.yaml:9: /violations/1: missing field "resource"',
        ]);
        assert.deepStrictEqual(problems(`${V1}violations: []\n`), ['expect.yaml:1: /: missing field "description"']);
        // A misspelt field names the one it was meant as.
        assert.deepStrictEqual(
            problems(`${V1}description: d\nviolations:\n  - {policy: p, resource: r, count: 1, mesage: x}\n`),
            ['expect.yaml:5: /violations/0: unknown field "mesage" (did you mean message?)'],
        );
        assert.deepStrictEqual(problems(`${V1}descripton: d\nviolations: []\n`).sort(), [
            'expect.yaml:1: /: missing field "description"',
            'expect.yaml:3: /: unknown field "descripton" (did you mean description?)',
        ]);
        assert.strictEqual(problems("description: d\nviolations: [\n").length, 1);
        assert.match(problems("description: d\nviolations: [\n")[0], /^expect\.yaml:\d+: not valid YAML: /);
        assert.deepStrictEqual(problems("- a\n"), [
            "expect.yaml:1: an expectation file is a YAML mapping (description, violations)",
        ]);
    });

    it("keeps each expected violation's line; a duplicate or a bad pattern is named at its line", () => {
        const dir = fixture(
            "lines",
            `# a comment\n${V1}description: d\nviolations:\n  - policy: a\n    resource: r\n    count: 1\n  - policy: b\n    resource: r\n    count: 2\n`,
        );
        const f = loadFixture(dir);
        assert.deepStrictEqual(
            f.expect.violations.map((v) => [v.policy, v.line]),
            [
                ["a", 6],
                ["b", 9],
            ],
        );
        assert.strictEqual(f.violationsLine, 5);
        const dup = fixture(
            "dup",
            `${V1}description: d\nviolations:\n  - {policy: a, resource: r, count: 1}\n  - {policy: a, resource: r, count: 1}\n`,
        );
        assert.throws(() => loadFixture(dup), /expect\.yaml:6: a on r is listed twice \(use count\)$/);
        const bad = fixture(
            "bad",
            `${V1}description: d\nviolations:\n  - {policy: a, resource: r, count: 1, message: '('}\n`,
        );
        assert.throws(() => loadFixture(bad), /expect\.yaml:5: message "\(" is not a valid regular expression$/);
    });

    it("finds fixtures at any depth, but not in node_modules, hidden or _ folders, nor inside a fixture", () => {
        const root = path.join(tmp, "tree");
        const make = (rel: string) => {
            fs.mkdirSync(path.join(root, rel), { recursive: true });
            fs.writeFileSync(path.join(root, rel, "Pulumi.yaml"), "name: x\nruntime: nodejs\n");
            fs.writeFileSync(path.join(root, rel, "index.ts"), "export {};\n");
            fs.writeFileSync(path.join(root, rel, "expect.yaml"), `${V1}description: d\nviolations: []\n`);
        };
        ["a", "team/b", "team/deep/er/c", "node_modules/x/d", ".git/e", "_lib/f", "a/inner"].forEach(make);
        assert.deepStrictEqual(
            loadFixtures([root]).map((f) => f.name),
            ["a", "b", "c"],
        );
        make("other/a");
        assert.throws(() => loadFixtures([root]), /two fixtures are named a: rename one of their folders/);
    });

    it("--migrate adds the header above the document, keeps comments, and leaves a versioned file alone", () => {
        const f = file("# why this fixture\ndescription: d # inline\nviolations: []\n");
        assert.strictEqual(
            migratedText(f, "schema.json"),
            "# why this fixture\n# yaml-language-server: $schema=schema.json\napiVersion: pko-guard/v1\nkind: Fixture\ndescription: d # inline\nviolations: []\n",
        );
        fs.writeFileSync(f, migratedText(f, "schema.json")!);
        assert.strictEqual(migratedText(f, "schema.json"), undefined);
        assert.strictEqual(readExpectFile(f).versioned, true);
        // after a document start, in the file's line endings, nothing else touched (flow style, quotes, spacing)
        const crlf = file("---\r\ndescription:   'd'\r\nviolations: [ ]\r\n");
        assert.strictEqual(
            migratedText(crlf, "s.json"),
            "---\r\n# yaml-language-server: $schema=s.json\r\napiVersion: pko-guard/v1\r\nkind: Fixture\r\ndescription:   'd'\r\nviolations: [ ]\r\n",
        );
    });

    it("ships the schema editors use, and it is the one every fixture of this repository validates against", () => {
        const schema = JSON.parse(fs.readFileSync(FIXTURE_SCHEMA, "utf8"));
        assert.strictEqual(schema.properties.apiVersion.const, "pko-guard/v1");
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
        assert.ok(pkg.files.includes("schemas/pko-guard/"), "the schema is not in the package");
        assert.ok(loadFixtures([]).length > 50);
    });

    it("annotates a failed check at the line of the expectation it compared", () => {
        const dir = fixture(
            "annotated",
            `${V1}description: d\nviolations:\n  - policy: a\n    resource: r\n    count: 2\n`,
        );
        const f = loadFixture(dir);
        const verdict: FixtureVerdict = {
            fixture: "annotated",
            description: "d",
            legs: [],
            outcome: "mismatch",
            checks: [
                {
                    fixture: "annotated",
                    leg: "mock",
                    policy: "a",
                    resource: "r",
                    expected: 2,
                    got: 1,
                    outcome: "mismatch",
                    note: "expected 2, got 1",
                },
                {
                    fixture: "annotated",
                    leg: "mock",
                    policy: "z",
                    resource: "r",
                    expected: 0,
                    got: 1,
                    outcome: "mismatch",
                    note: "unexpected: m",
                },
                {
                    fixture: "annotated",
                    leg: "mock",
                    policy: "a",
                    resource: "s",
                    expected: 1,
                    got: 1,
                    outcome: "match",
                },
            ],
        };
        assert.deepStrictEqual(
            [...fixtureAnnotations([verdict], [f], tmp)],
            [
                "::error file=fixtures/annotated/expect.yaml,line=5,title=pko-guard test%3A annotated (mock)::annotated [mock] a on r: expected 2, got 1\n",
                "::error file=fixtures/annotated/expect.yaml,line=4,title=pko-guard test%3A annotated (mock)::annotated [mock] z on r: unexpected: m\n",
            ],
        );
    });

    it("refuses expected policies no pack run has, all at once, each at its line with the nearest name", () => {
        const dir = fixture(
            "typo",
            V1 +
                "description: d\nviolations:\n  - {policy: pko-stack-resync-flor, resource: r, count: 1}\n  - {policy: pko-stack-resync-floor, resource: r, count: 1}\n",
        );
        const other = fixture(
            "other",
            V1 + "description: d\nviolations:\n  - {policy: nothing-like-it, resource: r, count: 1}\n",
        );
        const known = ["pko-stack-resync-floor", "pko-stack-name-length"];
        assert.throws(() => rejectUnknownPolicies([loadFixture(dir)], known), {
            message: `${path.join(dir, "expect.yaml")}:5: "pko-stack-resync-flor" is not a policy of the packs run (did you mean pko-stack-resync-floor?)`,
        });
        assert.throws(
            () => rejectUnknownPolicies([loadFixture(dir), loadFixture(other)], known),
            (e: unknown) =>
                e instanceof BadInputsError &&
                e.problems.length === 2 &&
                e.problems[1] ===
                    `${path.join(other, "expect.yaml")}:5: "nothing-like-it" is not a policy of the packs run`,
        );
        assert.doesNotThrow(() => rejectUnknownPolicies([loadFixture(dir)], [...known, "pko-stack-resync-flor"]));
    });
});
