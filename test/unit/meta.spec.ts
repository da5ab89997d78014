/**
 * Meta checks: every policy has its own module, a unit spec and a failing fixture; every fixture names
 * only policies that exist; every policy carries the metadata reports rely on; imports go down the layers;
 * the test tree mirrors the source tree.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { loadFixtures } from "../../harness/runner";
import { REPO_ROOT } from "../../support/paths";
import { POLICY_NAMES, policies } from "../../policies";
import { SETTINGS_POLICY } from "../../policies/model/production";
import { plainText } from "../../policies/model/prose";

describe("policy catalogue", () => {
    const fixtures = loadFixtures([]);

    it("has unique policy names", () => {
        assert.strictEqual(new Set(POLICY_NAMES).size, POLICY_NAMES.length);
    });

    for (const p of policies) {
        describe(p.name, () => {
            it("lives in policies/<name>.ts, exporting its NAME and its rule", () => {
                const file = path.join(REPO_ROOT, "policies", `${p.name}.ts`);
                assert.ok(fs.existsSync(file), `${file} missing`);
                assert.strictEqual(require(file).NAME, p.name);
                assert.strictEqual(require(file).rule.name, p.name);
            });

            it("has a unit spec, test/unit/policies/<name>.spec.ts", () => {
                const spec = `test/unit/policies/${p.name}.spec.ts`;
                assert.ok(fs.existsSync(path.join(REPO_ROOT, spec)), `${p.name}: no unit spec (${spec})`);
            });

            it("fails in at least one fixture", function () {
                // The settings policy reports only invalid settings, which the harness rejects before any
                // preview (exit 2); its run-time reports are proven in its unit spec. It is proven in
                // fixtures by the rules that read it (prod-by-namespace-config).
                if (p.name === SETTINGS_POLICY) {
                    assert.ok(
                        fixtures.some(
                            (f) => f.policyConfig && fs.readFileSync(f.policyConfig, "utf8").includes(SETTINGS_POLICY),
                        ),
                        `no fixture's policy config sets ${SETTINGS_POLICY}`,
                    );
                    return;
                }
                assert.ok(
                    fixtures.some((f) => f.expect.violations.some((v) => v.policy === p.name)),
                    `${p.name}: no fixture expects it to fail (fixtures/<name>/expect.yaml, CONTRIBUTING.md "Adding a rule")`,
                );
            });

            it("passes in the governed twin of a fixture it fails in (fixtures/<name>-governed)", function () {
                if (p.name === SETTINGS_POLICY) return; // it fails in no fixture (above)
                const byName = new Map(fixtures.map((f) => [f.name, f]));
                const fails = (name: string) =>
                    byName.get(name)?.expect.violations.some((v) => v.policy === p.name) ?? false;
                const failing = fixtures.filter((f) => fails(f.name)).map((f) => f.name);
                const twins = failing.filter((name) => byName.has(`${name}-governed`) && !fails(`${name}-governed`));
                assert.ok(
                    twins.length > 0,
                    `${p.name} fails in ${failing.join(", ")}, but none has a governed twin where it passes: add fixtures/${failing[0]}-governed/ (the same program or manifests, fixed)`,
                );
            });

            it("carries description, level, severity, framework, remediation steps and url", () => {
                assert.ok(p.description.length > 20, `${p.name}: description shorter than 20 characters`);
                assert.ok(
                    ["advisory", "mandatory"].includes(p.enforcementLevel!),
                    `${p.name}: level ${String(p.enforcementLevel)}`,
                );
                const missing = (["severity", "framework", "remediationSteps", "url"] as const).filter((k) => !p[k]);
                assert.deepStrictEqual(missing, [], `${p.name}: missing ${missing.join(", ")}`);
            });

            it("says what it checks and how to fix it in one paragraph each: the SDK's description and remediation steps", () => {
                for (const k of ["what", "fix"] as const) {
                    const text = p.about[k];
                    assert.ok(!/\n(- |\d+\. )/.test(text), `${p.name}: about.${k} holds a list (details go in notes)`);
                    assert.ok(/[.)]$/.test(text.trim()), `${p.name}: about.${k} does not end a sentence`);
                    assert.ok(
                        text.length <= 400,
                        `${p.name}: about.${k} is ${text.length} characters (details go in notes)`,
                    );
                }
                assert.strictEqual(p.description, plainText(p.about.what));
                assert.strictEqual(p.remediationSteps, plainText(p.about.fix));
            });

            it("describes itself: what, why, fix, the kinds it reads, production, pattern settings, waiver keys, an example", () => {
                const a = p.about;
                for (const k of ["what", "why", "fix"] as const)
                    assert.ok(typeof a[k] === "string" && a[k].trim().length > 10, `${p.name}: about.${k}`);
                assert.ok(Array.isArray(a.reads) && a.reads.length > 0, `${p.name}: about.reads`);
                for (const kind of a.reads)
                    assert.match(
                        kind,
                        /^([a-z0-9.-]+\/[A-Z][A-Za-z]+|[a-z0-9-]+:[A-Za-z0-9/.-]+:[A-Za-z0-9]+)$/,
                        `${p.name}: about.reads ${kind}`,
                    );
                assert.strictEqual(typeof a.readsProduction, "boolean", `${p.name}: about.readsProduction`);
                const settings = Object.keys((p.configSchema?.properties ?? {}) as object);
                assert.ok(Array.isArray(a.patternSettings), `${p.name}: about.patternSettings`);
                for (const s of a.patternSettings)
                    assert.ok(settings.includes(s), `${p.name}: pattern setting ${s} is not a setting`);
                assert.ok(
                    a.waiverKeys.length > 0 && a.waiverKeys.every((k) => settings.includes(k)),
                    `${p.name}: about.waiverKeys`,
                );
                assert.ok(Array.isArray(a.example) && a.example.length > 0, `${p.name}: about.example`);
            });

            it("is documented in the rule reference (docs/rules.md) and listed in the README", () => {
                const reference = fs.readFileSync(path.join(REPO_ROOT, "docs", "rules.md"), "utf8");
                assert.ok(reference.includes(`<a id="rule-${p.name}"></a>`), `${p.name} missing from docs/rules.md`);
                const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
                assert.ok(readme.includes(`(docs/rules.md#rule-${p.name})`), `${p.name} not linked from the README`);
            });
        });
    }

    it("lists every rule file of policies/ in policies/index.ts, and nothing else", () => {
        const files = fs
            .readdirSync(path.join(REPO_ROOT, "policies"))
            .filter((f) => f.endsWith(".ts") && f !== "index.ts")
            .map((f) => f.slice(0, -3))
            .sort();
        assert.deepStrictEqual([...POLICY_NAMES].sort(), files);
    });

    it("adding a rule touches only the rule, its spec and a fixture (then `npm run docs`): no other product module names a rule", () => {
        // What the CLI, check, the config check and the reports know of a rule comes from the rule's own `about`.
        const named: string[] = [];
        for (const dir of ["cli", "evaluation", "support", "engine", "gitops", "cluster", "reports", "harness"]) {
            for (const f of fs
                .readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: "utf8" })
                .filter((x) => x.endsWith(".ts"))) {
                const text = fs.readFileSync(path.join(REPO_ROOT, dir, f), "utf8");
                for (const name of POLICY_NAMES)
                    if (new RegExp(`["'\`]${name}["'\`]`).test(text)) named.push(`${dir}/${f}: ${name}`);
            }
        }
        assert.deepStrictEqual(named, []);
    });

    it("fixtures name only existing policies, and some fixtures are clean", () => {
        for (const f of fixtures) {
            for (const v of f.expect.violations)
                assert.ok(POLICY_NAMES.includes(v.policy), `${f.name}: unknown policy ${v.policy}`);
        }
        const clean = fixtures.filter((f) => f.expect.violations.length === 0).map((f) => f.name);
        assert.ok(
            clean.length >= 2,
            `fewer than two clean fixtures (expect.yaml with no violation): ${clean.join(", ")}`,
        );
    });
});

describe("module layout", () => {
    /** Relative imports of every TypeScript module of the pack, the product, the harness and the bench. */
    function importGraph(): Map<string, string[]> {
        const ts = require("typescript") as typeof import("typescript");
        const graph = new Map<string, string[]>();
        const files = [
            "index.ts",
            ...[
                "policies",
                "support",
                "evaluation",
                "engine",
                "gitops",
                "cluster",
                "reports",
                "cli",
                "harness",
                "pack",
                "bench",
                "docs",
            ].flatMap((d) =>
                fs
                    .readdirSync(path.join(REPO_ROOT, d), { recursive: true, encoding: "utf8" })
                    .filter((f) => f.endsWith(".ts") && !f.startsWith(`dist${path.sep}`))
                    .map((f) => path.join(d, f)),
            ),
        ];
        for (const file of files) {
            const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
            const imports = ts
                .preProcessFile(text, true, true)
                .importedFiles.map((i) => i.fileName)
                .filter((n) => n.startsWith("."));
            graph.set(
                file,
                imports.map((n) => {
                    const base = path.normalize(path.join(path.dirname(file), n));
                    return fs.existsSync(path.join(REPO_ROOT, `${base}.ts`))
                        ? `${base}.ts`
                        : path.join(base, "index.ts");
                }),
            );
        }
        return graph;
    }

    /**
     * The layers, bottom up: neutral support (processes, paths, errors, escaping); the rules; the evaluation seam
     * (in-process evaluator, rows, judging, pack config) beside the pack's entry; what feeds it (GitOps manifests,
     * the cluster, the Pulumi engine); the reports; the commands and the harness side by side; the bench on top.
     * Imports go down or stay within a layer, never up.
     */
    const LAYERS: [string, number][] = [
        ["support/", 0],
        ["policies/", 1],
        ["evaluation/", 2],
        ["index.ts", 2],
        ["pack/", 2],
        ["engine/", 3],
        ["gitops/", 3],
        ["cluster/", 3],
        ["reports/", 4],
        ["cli/", 5],
        ["harness/", 5],
        ["bench/", 6],
        ["docs/", 6],
        ["release/", 6],
    ];
    const layer = (f: string) => LAYERS.find(([prefix]) => f === prefix || f.startsWith(prefix))?.[1] ?? Infinity;
    const edges = () => [...importGraph()].flatMap(([file, deps]) => deps.map((dep) => ({ file, dep })));

    it("knows every module's layer", () => {
        assert.deepStrictEqual(
            [...importGraph().keys()].filter((f) => layer(f) === Infinity),
            [],
        );
    });

    it("the product (pack, policies, evaluation, gitops, cluster, engine, reports, cli) never imports the fixture harness, but for `pko-guard test`", () => {
        // cli/test.ts is the harness as a command (`pko-guard test`): the one product module that loads it.
        const bad = edges().filter(
            ({ file, dep }) =>
                !file.startsWith("harness/") &&
                !file.startsWith("bench/") &&
                file !== path.join("cli", "test.ts") &&
                dep.startsWith("harness/"),
        );
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("the product, the harness and the bench never import test code", () => {
        const bad = edges().filter(({ dep }) => dep.startsWith(`test${path.sep}`));
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("the harness uses the layers below and the reports, never a command module of cli/", () => {
        const bad = edges().filter(({ file, dep }) => file.startsWith("harness/") && dep.startsWith("cli/"));
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("imports go down the layers (support < policies < evaluation < gitops, cluster, engine < reports < commands, harness), never up", () => {
        const bad = edges().filter(({ file, dep }) => layer(dep) > layer(file));
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("the GitOps engines stand side by side: gitops/argocd and gitops/flux never import each other, and what both use (decode, render, fetch) imports neither", () => {
        const engine = (f: string) =>
            f.startsWith(path.join("gitops", "argocd") + path.sep)
                ? "argocd"
                : f.startsWith(path.join("gitops", "flux") + path.sep)
                  ? "flux"
                  : undefined;
        const shared = (f: string) =>
            ["decode", "render", "fetch"].some((d) => f.startsWith(path.join("gitops", d) + path.sep));
        const bad = edges().filter(
            ({ file, dep }) =>
                engine(dep) !== undefined &&
                ((engine(file) !== undefined && engine(file) !== engine(dep)) || shared(file)),
        );
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("policies/ is the rules' domain alone: it imports only policies/ and packages, never support/ or evaluation/", () => {
        const bad = edges().filter(
            ({ file, dep }) => file.startsWith(`policies${path.sep}`) && !dep.startsWith(`policies${path.sep}`),
        );
        assert.deepStrictEqual(
            bad.map(({ file, dep }) => `${file} -> ${dep}`),
            [],
        );
    });

    it("a fixture's walk from harness/runner.ts goes harness -> evaluation -> policies without climbing back", () => {
        const graph = importGraph();
        const seen = new Set<string>();
        const climbs: string[] = [];
        const walk = (f: string) => {
            if (seen.has(f)) return;
            seen.add(f);
            for (const d of graph.get(f) ?? []) {
                if (layer(d) > layer(f) || d.startsWith("cli/")) climbs.push(`${f} -> ${d}`);
                walk(d);
            }
        };
        walk(path.join("harness", "runner.ts"));
        assert.deepStrictEqual(climbs, []);
        assert.ok(
            [...seen].some((f) => f.startsWith("evaluation/")) && [...seen].some((f) => f.startsWith("policies/")),
        );
    });

    it("has no two modules of one name (a file name says which module it is)", () => {
        const byName = new Map<string, string[]>();
        for (const file of importGraph().keys()) {
            const name = path.basename(file);
            if (name === "index.ts") continue;
            byName.set(name, [...(byName.get(name) ?? []), file]);
        }
        assert.deepStrictEqual(
            [...byName.values()].filter((files) => files.length > 1),
            [],
        );
    });

    /**
     * Size, measured on the TypeScript AST: the lines of a module that hold code (a token of the syntax tree; comments
     * and blank lines do not count), and for every function, method, accessor and arrow function the lines of its
     * body that hold code. The limits hold everywhere, the rules' domain and the evaluation seam included.
     */
    const MAX_MODULE_LINES = 400;
    const MAX_FUNCTION_LINES = 80;
    /** What a product file holds in all (CONTRIBUTING.md "Size"). */
    const MAX_FILE_LINES = 450;
    /** The lines of code of a module's `text` and of each function's body (`at`: `file:line name`). */
    function codeSizes(file: string, text: string): { lines: number; functions: { at: string; lines: number }[] } {
        const ts = require("typescript") as typeof import("typescript");
        const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
        const code = new Set<number>();
        const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
        const mark = (n: import("typescript").Node): void => {
            if (n.kind >= ts.SyntaxKind.FirstJSDocNode && n.kind <= ts.SyntaxKind.LastJSDocNode) return;
            const children = n.getChildren(sf);
            if (children.length > 0) children.forEach(mark);
            else if (n.kind !== ts.SyntaxKind.EndOfFileToken)
                for (let l = lineOf(n.getStart(sf)); l <= lineOf(n.end); l++) code.add(l);
        };
        mark(sf);
        const count = (from: number, to: number) => {
            let n = 0;
            for (let l = from; l <= to; l++) if (code.has(l)) n++;
            return n;
        };
        const functions: { at: string; lines: number }[] = [];
        const visit = (n: import("typescript").Node): void => {
            if (ts.isFunctionLike(n) && "body" in n && n.body) {
                const body = n.body as import("typescript").Node;
                const named = n.name ?? (n.parent as { name?: import("typescript").Node }).name;
                functions.push({
                    at: `${file}:${lineOf(n.getStart(sf)) + 1} ${named ? named.getText(sf) : "(anonymous)"}`,
                    lines: count(lineOf(body.getStart(sf)), lineOf(body.end)),
                });
            }
            ts.forEachChild(n, visit);
        };
        visit(sf);
        return { lines: code.size, functions };
    }

    it(`no module has more than ${MAX_MODULE_LINES} lines of code, no function more than ${MAX_FUNCTION_LINES}`, function () {
        this.timeout(60_000);
        const longModules: string[] = [];
        const longFunctions: string[] = [];
        for (const file of importGraph().keys()) {
            const sizes = codeSizes(file, fs.readFileSync(path.join(REPO_ROOT, file), "utf8"));
            if (sizes.lines > MAX_MODULE_LINES) longModules.push(`${file}: ${sizes.lines} lines`);
            for (const f of sizes.functions)
                if (f.lines > MAX_FUNCTION_LINES) longFunctions.push(`${f.at}: ${f.lines} lines`);
        }
        assert.deepStrictEqual({ longModules, longFunctions }, { longModules: [], longFunctions: [] });
    });

    it(`no product file has more than ${MAX_FILE_LINES} lines in all (comments included)`, () => {
        const long = [...importGraph().keys()]
            .filter((file) => !file.startsWith("test/") && !file.startsWith("bench/") && !file.startsWith("docs/"))
            .map((file) => ({
                file,
                lines: fs.readFileSync(path.join(REPO_ROOT, file), "utf8").split("\n").length - 1,
            }))
            .filter((x) => x.lines > MAX_FILE_LINES)
            .map((x) => `${x.file}: ${x.lines} lines`);
        assert.deepStrictEqual(long, []);
    });

    it("measures lines of code: comments and blank lines do not count, a multi-line string does", () => {
        const text = [
            "/** A doc comment",
            " * over lines. */",
            "export function f(a: number): string {",
            "    // a comment",
            "",
            "    const s = `one",
            "two`; /* trailing */",
            "    return s + a;",
            "}",
            "export const g = () => {",
            "    return 1;",
            "};",
            "",
        ].join("\n");
        assert.deepStrictEqual(codeSizes("sample.ts", text), {
            lines: 8,
            functions: [
                { at: "sample.ts:3 f", lines: 5 },
                { at: "sample.ts:10 g", lines: 3 },
            ],
        });
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

describe("test layout", () => {
    /** Folders the test tree may not mirror: generated or installed ones, and the test tree's own tiers and data. */
    const NOT_SOURCE = new Set([
        "bin",
        "out",
        "pack/dist",
        "test/data",
        ...(require("../tiers/names") as string[]).map((t) => `test/${t}`),
    ]);

    /** The folders under `root` (relative to it, forward slashes), hidden ones, node_modules and `skip` left out. */
    function foldersUnder(root: string, skip: Set<string> = new Set()): string[] {
        const found: string[] = [];
        const walk = (rel: string) => {
            for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
                const child = rel ? `${rel}/${e.name}` : e.name;
                if (!e.isDirectory() || e.name.startsWith(".") || e.name === "node_modules" || skip.has(child))
                    continue;
                found.push(child);
                walk(child);
            }
        };
        walk("");
        return found;
    }

    for (const tier of require("../tiers/names") as string[]) {
        it(`every folder of test/${tier}/ mirrors a source folder (test/${tier}/<source path>/)`, () => {
            const sources = new Set(foldersUnder(REPO_ROOT, NOT_SOURCE));
            const folders = foldersUnder(path.join(REPO_ROOT, "test", tier));
            assert.ok(folders.length > 0, `test/${tier}/ has no folder`);
            assert.deepStrictEqual(
                folders.filter((rel) => !sources.has(rel)).map((rel) => `test/${tier}/${rel}`),
                [],
            );
        });
    }
});
