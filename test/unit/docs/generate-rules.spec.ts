/**
 * The rule reference (docs/rules.md) and the README's list of rules are generated from the rules
 * (docs/generate-rules.ts, `npm run docs`): the committed files are what the generator renders now, and a
 * rule's section carries everything the rule says about itself.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as YAML from "yaml";
import { README, RULES_PAGE, renderRulesPage, withRuleList } from "../../../docs/generate-rules";
import { policies } from "../../../policies";

const STALE = "stale: run `npm run docs` and commit the result";

/** The section of one rule: from its anchor to the next rule's. */
function sectionOf(page: string, name: string): string {
    const start = page.indexOf(`<a id="rule-${name}"></a>`);
    assert.ok(start >= 0, `no section for ${name}`);
    const next = page.indexOf('<a id="rule-', start + 1);
    return page.slice(start, next < 0 ? undefined : next);
}

describe("rule reference (docs/generate-rules.ts)", () => {
    it("docs/rules.md is what the generator renders from the rules now", () => {
        assert.ok(fs.readFileSync(RULES_PAGE, "utf8") === renderRulesPage(), `docs/rules.md is ${STALE}`);
    });

    it("the README's list of rules is what the generator renders now", () => {
        const readme = fs.readFileSync(README, "utf8");
        assert.ok(readme === withRuleList(readme), `README.md's rule list is ${STALE}`);
    });

    it("lists every rule in the README, linked to its section, in the pack's order", () => {
        const list = withRuleList("<!-- rules:start -->\nold\n<!-- rules:end -->\n");
        assert.ok(!list.includes("old"));
        const linked = [...list.matchAll(/\]\(docs\/rules\.md#rule-([a-z0-9-]+)\)/g)].map((m) => m[1]);
        assert.deepStrictEqual(
            linked,
            policies.map((p) => p.name),
        );
        assert.throws(() => withRuleList("# no block here\n"), /no <!-- rules:start -->/);
    });

    it("gives each rule a section with its level, what, why, fix, notes, what it reads, its config keys and its example", () => {
        const page = renderRulesPage();
        const anchors = [...page.matchAll(/<a id="rule-([a-z0-9-]+)"><\/a>/g)].map((m) => m[1]);
        assert.deepStrictEqual(
            anchors,
            policies.map((p) => p.name),
        );
        for (const p of policies) {
            const s = sectionOf(page, p.name);
            const a = p.about;
            assert.ok(s.includes(`## \`${p.name}\``), p.name);
            assert.ok(s.includes(`Default level **${p.enforcementLevel}**, severity **${p.severity}**`), p.name);
            for (const [label, text] of [
                ["What", a.what],
                ["Why", a.why],
                ["Fix", a.fix],
            ])
                assert.ok(s.includes(`**${label}:** ${text}\n`), `${p.name}: ${label}`);
            for (const note of a.notes ?? []) {
                const lines = note.split("\n");
                const body = lines.every((l) => l.startsWith("  ")) ? lines.map((l) => l.slice(2)).join("\n") : note;
                assert.ok(s.includes(body), `${p.name}: a note is missing`);
            }
            for (const kind of a.reads) assert.ok(s.includes(`\`${kind}\``), `${p.name}: reads ${kind}`);
            assert.match(
                s,
                a.readsProduction ? /Production settings: reads them/ : /Production settings: (does not|holds)/,
            );
            for (const key of ["enforcementLevel", ...Object.keys(p.configSchema?.properties ?? {})])
                assert.match(s, new RegExp(`^\\| \`${key}\` \\|`, "m"), `${p.name}: config key ${key}`);
            for (const setting of a.patternSettings)
                assert.match(s, new RegExp(`^\\| \`${setting}\` \\|.*RE2 regular expressions, checked`, "m"));
            for (const key of a.waiverKeys) assert.match(s, new RegExp(`^\\| \`${key}\` \\|.*\\(waivers:`, "m"));
            const example = s.slice(s.indexOf("**An example that passes**"));
            const yaml = example.slice(example.indexOf("```yaml\n") + 8, example.lastIndexOf("```"));
            assert.deepStrictEqual(
                YAML.parseAllDocuments(yaml).map((d) => d.toJS()),
                a.example.map((r) => r.props),
                `${p.name}: example`,
            );
        }
    });
});
