/**
 * Meta checks: every policy has its own module, a unit spec and a failing fixture; every fixture names
 * only policies that exist; every policy carries the metadata reports rely on.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { loadFixtures } from "../harness/runner";
import { REPO_ROOT } from "../cli/paths";
import { POLICY_NAMES, policies } from "../policies";
import { SETTINGS_POLICY } from "../policies/model/production";

describe("policy catalogue", () => {
    const fixtures = loadFixtures([]);

    it("has unique policy names", () => {
        assert.strictEqual(new Set(POLICY_NAMES).size, POLICY_NAMES.length);
    });

    for (const p of policies) {
        describe(p.name, () => {
            it("lives in policies/<name>.ts, exporting its NAME", () => {
                const file = path.join(REPO_ROOT, "policies", `${p.name}.ts`);
                assert.ok(fs.existsSync(file), `${file} missing`);
                assert.strictEqual(require(file).NAME, p.name);
            });

            it("has a unit spec", () => {
                assert.ok(fs.existsSync(path.join(REPO_ROOT, "test", "policies", `${p.name}.spec.ts`)));
            });

            it("fails in at least one fixture", function () {
                // The settings policy reports only invalid settings, which the harness rejects before any
                // preview (exit 2); its run-time reports are proven in its unit spec. It is proven in
                // fixtures by the rules that read it (prod-by-namespace-config).
                if (p.name === SETTINGS_POLICY) {
                    assert.ok(fixtures.some((f) => f.policyConfig && fs.readFileSync(f.policyConfig, "utf8").includes(SETTINGS_POLICY)));
                    return;
                }
                assert.ok(fixtures.some((f) => f.expect.violations.some((v) => v.policy === p.name)));
            });

            it("carries description, level, severity, framework, remediation steps and url", () => {
                assert.ok(p.description.length > 20);
                assert.ok(["advisory", "mandatory"].includes(p.enforcementLevel!));
                assert.ok(p.severity && p.framework && p.remediationSteps && p.url);
            });

            it("is documented in the README rule catalogue", () => {
                const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
                assert.ok(readme.includes(`\`${p.name}\``), `${p.name} missing from README`);
            });
        });
    }

    it("fixtures name only existing policies, and some fixtures are clean", () => {
        for (const f of fixtures) {
            for (const v of f.expect.violations) assert.ok(POLICY_NAMES.includes(v.policy), `${f.name}: unknown policy ${v.policy}`);
        }
        assert.ok(fixtures.filter((f) => f.expect.violations.length === 0).length >= 2);
    });
});

describe("module layout", () => {
    /** Relative imports of every TypeScript module of the pack, the product and the harness. */
    function importGraph(): Map<string, string[]> {
        const ts = require("typescript") as typeof import("typescript");
        const graph = new Map<string, string[]>();
        const files = ["index.ts", ...["policies", "cli", "harness"].flatMap((d) =>
            fs.readdirSync(path.join(REPO_ROOT, d), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => path.join(d, f)),
        )];
        for (const file of files) {
            const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
            const imports = ts.preProcessFile(text, true, true).importedFiles.map((i) => i.fileName).filter((n) => n.startsWith("."));
            graph.set(
                file,
                imports.map((n) => {
                    const base = path.normalize(path.join(path.dirname(file), n));
                    return fs.existsSync(path.join(REPO_ROOT, `${base}.ts`)) ? `${base}.ts` : path.join(base, "index.ts");
                }),
            );
        }
        return graph;
    }

    it("the product (pack, policies, cli/) never imports the fixture harness", () => {
        const bad = [...importGraph()].flatMap(([file, deps]) => (file.startsWith("harness") ? [] : deps.filter((d) => d.startsWith("harness")).map((d) => `${file} -> ${d}`)));
        assert.deepStrictEqual(bad, []);
    });

    it("has no import cycle", () => {
        const graph = importGraph();
        const state = new Map<string, "visiting" | "done">();
        const cycles: string[] = [];
        const visit = (f: string, trail: string[]) => {
            if (state.get(f) === "done") return;
            if (state.get(f) === "visiting") {
                cycles.push([...trail.slice(trail.indexOf(f)), f].join(" -> "));
                return;
            }
            state.set(f, "visiting");
            for (const d of graph.get(f) ?? []) visit(d, [...trail, f]);
            state.set(f, "done");
        };
        for (const f of graph.keys()) visit(f, []);
        assert.deepStrictEqual(cycles, []);
    });
});
