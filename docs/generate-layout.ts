/**
 * The module list of docs/contributing/architecture.md's layout, generated from the code: one line a module, its header
 * comment's first sentence; a rule's module, whose only prose is its `about`, the rule's description from it.
 * `npm run docs` writes it; test/unit/docs/generate-layout.spec.ts fails while the page
 * differs from what this renders, and names any module without a header.
 */
import * as fs from "fs";
import * as path from "path";
import { policies } from "../policies";

export const ARCHITECTURE = path.join(__dirname, "contributing", "architecture.md");
const ROOT = path.join(__dirname, "..");
const START = "<!-- layout:start -->";
const END = "<!-- layout:end -->";

/** The folders whose modules are listed, in layer order (CONTRIBUTING.md's table), and what never is. */
const FOLDERS = [
    "support",
    "policies",
    "evaluation",
    "pack",
    "gitops",
    "cluster",
    "engine",
    "reports",
    "cli",
    "harness",
    "bench",
    "docs",
];
const SKIP = new Set(["pack/dist", "bench/program50", "bench/peers/node_modules"]);

/** Every TypeScript module of a listed folder (and the pack entry), repository-relative, grouped by folder. */
export function modules(): Map<string, string[]> {
    const byFolder = new Map<string, string[]>([[".", ["index.ts"]]]);
    const walk = (rel: string) => {
        const entries = fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true });
        const files = entries.filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"));
        if (files.length > 0) byFolder.set(rel, files.map((e) => `${rel}/${e.name}`).sort());
        for (const e of entries.filter((x) => x.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
            const child = `${rel}/${e.name}`;
            if (!SKIP.has(child) && e.name !== "node_modules") walk(child);
        }
    };
    FOLDERS.forEach(walk);
    return byFolder;
}

/** A rule's module and what the rule checks, in its own words (policies/model/policy.ts builds it from `about`). */
const RULE_DESCRIPTIONS = new Map(
    policies.map((p) => [`policies/${p.name}.ts`, `the rule ${p.name}: ${p.description}`]),
);

/** The first sentence of a module's header comment (its first `/** ... *\/`), or undefined when it has none. */
export function firstSentence(source: string): string | undefined {
    const m = /^(?:#![^\n]*\n)?\s*\/\*\*([\s\S]*?)\*\//.exec(source);
    if (!m) return undefined;
    const text = m[1]
        .split("\n")
        .map((l) => l.replace(/^\s*\*\s?/, ""))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim();
    // A sentence ends at a full stop followed by a space and a capital or a backtick, not at "e.g." or "v2.9.0".
    const end = /(?<!\b(?:e\.g|i\.e|vs|etc))\.(?=\s+[A-Z`(]|$)/.exec(text);
    return end ? text.slice(0, end.index + 1) : text;
}

/** The generated block: a heading a folder, a line a module. Throws naming every module without a header. */
export function renderLayout(): string {
    const missing: string[] = [];
    const out: string[] = [START, ""];
    for (const [folder, files] of modules()) {
        out.push(`**${folder === "." ? "the repository root" : `${folder}/`}**`, "");
        for (const file of files) {
            const rule = RULE_DESCRIPTIONS.get(file);
            const sentence = rule ?? firstSentence(fs.readFileSync(path.join(ROOT, file), "utf8"));
            if (sentence === undefined) missing.push(file);
            out.push(`- \`${path.basename(file)}\`: ${sentence ?? ""}`);
        }
        out.push("");
    }
    if (missing.length > 0) throw new Error(`modules without a header comment: ${missing.join(", ")}`);
    out.push(END);
    return out.join("\n");
}

/** docs/contributing/architecture.md with its generated module list as the code is now. */
export function withLayout(page: string): string {
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    if (start < 0 || end < start) throw new Error(`docs/contributing/architecture.md has no ${START} ... ${END} block`);
    return `${page.slice(0, start)}${renderLayout()}${page.slice(end + END.length)}`;
}

if (require.main === module) {
    fs.writeFileSync(ARCHITECTURE, withLayout(fs.readFileSync(ARCHITECTURE, "utf8")));
    process.stdout.write(`wrote the module list of ${path.relative(process.cwd(), ARCHITECTURE)}\n`);
}
