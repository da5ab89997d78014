/**
 * The code map checks itself: every repository path named in a comment of the code (module headers included) or
 * in the Markdown pages (README, CONTRIBUTING, docs/) resolves to a file or folder of the repository, a glob
 * (`cli/bundle/*.ts`) to at least one, and every file named alone (`kube-yaml.ts`) is one of the repository's. A rename that leaves a reference behind fails here, naming the file that
 * still points at the old path. Paths a build writes (.gitignore) count as present; a placeholder (`<name>`) is
 * a pattern, not a path; paths in other projects' repositories are listed in ELSEWHERE with whose they are.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { REPO_ROOT } from "../../../support/paths";

/** The top-level entries a path of this repository starts with. */
const TOP = fs
    .readdirSync(REPO_ROOT, { withFileTypes: true })
    .map((e) => e.name)
    .filter((n) => n !== "node_modules" && n !== ".git" && n !== ".cache" && n !== "bin");
/** Folders whose files are inputs to the tests or built output, not ours to map. */
const NOT_MAPPED = new Set(["node_modules", ".git", ".cache", "bin", "fixtures", "examples", "out", ".scratch"]);
const NOT_MAPPED_PATHS = ["test/data", "pack/dist", "schemas"];

/** Paths named on purpose that live in another project's repository, and whose. */
const ELSEWHERE: Record<string, string> = {
    "examples/preview-demo": "PKO's repository (pulumi/pulumi-kubernetes-operator)",
    "docs/migration.md": "PKO's repository (its v2 migration guide)",
};

/** A repository path: a top-level entry and at least one more segment, or one starting ./ or ../ (relative). */
const PATH = new RegExp(
    String.raw`(?<![\w./@$-])((?:\.{1,2}/)+[\w.*-]+(?:/[\w.*-]+)*/?|(?:${TOP.map((t) => t.replace(/\./g, "\\.")).join("|")})(?:/[\w.*-]+)+/?)(?![\w<]|[.*-][\w<*])`,
    "g",
);

/** The .gitignore patterns, as tests on a repository path (what a build or a run writes). */
function ignored(): (rel: string) => boolean {
    const patterns = fs
        .readFileSync(path.join(REPO_ROOT, ".gitignore"), "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith("#"));
    const tests = patterns.map((p) => {
        const anchored = p.startsWith("/") || p.replace(/\/$/, "").includes("/");
        const body = p.replace(/^\//, "").replace(/\/$/, "");
        const re = new RegExp(`^${body.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`);
        return (rel: string) =>
            anchored ? re.test(rel) : rel.split("/").some((_, i, s) => re.test(s.slice(i).join("/")));
    });
    return (rel) => tests.some((t) => t(rel));
}

/** Whether the glob `pattern` (`*` within a segment, `**` across) matches anything under REPO_ROOT. */
function globMatches(pattern: string): boolean {
    const segments = pattern.replace(/\/$/, "").split("/");
    const walk = (dir: string, i: number): boolean => {
        if (i === segments.length) return true;
        const seg = segments[i];
        if (!seg.includes("*")) return fs.existsSync(path.join(dir, seg)) && walk(path.join(dir, seg), i + 1);
        let entries: fs.Dirent[];
        try {
            entries = fs.readdirSync(dir, { withFileTypes: true });
        } catch {
            return false;
        }
        if (seg === "**")
            return walk(dir, i + 1) || entries.some((e) => e.isDirectory() && walk(path.join(dir, e.name), i));
        const re = new RegExp(`^${seg.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
        return entries.some((e) => re.test(e.name) && walk(path.join(dir, e.name), i + 1));
    };
    return walk(REPO_ROOT, 0);
}

/** Every comment of a TypeScript file: its text with string, template and regular expression literals blanked out. */
function commentsOf(file: string, text: string): string[] {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const chars = text.split("");
    const blank = (n: ts.Node) => {
        for (let i = n.getStart(sf); i < n.end; i++) if (chars[i] !== "\n") chars[i] = " ";
    };
    const walk = (n: ts.Node): void => {
        if (
            ts.isStringLiteral(n) ||
            ts.isNoSubstitutionTemplateLiteral(n) ||
            ts.isRegularExpressionLiteral(n) ||
            ts.isTemplateHead(n) ||
            ts.isTemplateMiddle(n) ||
            ts.isTemplateTail(n)
        )
            blank(n);
        else if (ts.isTemplateExpression(n)) {
            blank(n.head);
            n.templateSpans.forEach((span) => {
                walk(span.expression);
                blank(span.literal);
            });
        } else ts.forEachChild(n, walk);
    };
    walk(sf);
    return [...chars.join("").matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]);
}

/** The files mapped: every TypeScript file of ours, and the Markdown pages. */
function mappedFiles(): string[] {
    const out: string[] = [];
    const walk = (rel: string) => {
        for (const e of fs.readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
            const child = rel ? `${rel}/${e.name}` : e.name;
            if (NOT_MAPPED.has(e.name) || NOT_MAPPED_PATHS.includes(child)) continue;
            if (e.isDirectory()) walk(child);
            else if (child.endsWith(".ts") || (child.endsWith(".md") && (!rel || rel.split("/")[0] === "docs")))
                out.push(child);
        }
    };
    walk("");
    return out.sort();
}

/** The repository paths `file` names (in comments for code; anywhere in a page, links relative to it). */
export function pathsNamed(file: string, text: string): { ref: string; resolved: string }[] {
    const texts = file.endsWith(".ts") ? commentsOf(file, text) : [text];
    const out: { ref: string; resolved: string }[] = [];
    for (const t of texts) {
        for (const m of t.matchAll(PATH)) {
            const ref = m[1].replace(/[.,:;)]+$/, "");
            const relative = ref.startsWith("./") || ref.startsWith("../");
            // In a page, a relative path counts only as a link's target; elsewhere it is a shell command's.
            if (relative && file.endsWith(".md") && t.slice((m.index ?? 0) - 2, m.index) !== "](") continue;
            if (ref.includes("node_modules")) continue;
            const abs = path.resolve(REPO_ROOT, relative ? path.dirname(file) : "", ref);
            out.push({ ref, resolved: path.relative(REPO_ROOT, abs).split(path.sep).join("/") });
        }
    }
    return out;
}

/** A file named by its name alone (`kube-yaml.ts`): module names are unique (test/unit/meta.spec.ts), so it names one. */
const BARE = /(?<![\w./@$-])([a-z][\w-]*\.(?:ts|md))(?![\w/-])/g;
/** Files named by their name alone that are another project's, and whose. */
const ELSEWHERE_NAMES: Record<string, string> = { "server.ts": "@pulumi/policy's (its analyzer server)" };

/** The names of every file of the repository (build output, caches and installed packages left out). */
function fileNames(): Set<string> {
    const names = new Set<string>();
    const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            if (["node_modules", ".git", ".cache", "bin", "out", ".scratch"].includes(e.name)) continue;
            if (e.isDirectory()) walk(path.join(dir, e.name));
            else names.add(e.name);
        }
    };
    walk(REPO_ROOT);
    return names;
}

/** The file names `file` names alone (in comments for code; anywhere in a page). */
export function namesNamed(file: string, text: string): string[] {
    const texts = file.endsWith(".ts") ? commentsOf(file, text) : [text];
    return texts.flatMap((t) => [...t.matchAll(BARE)].map((m) => m[1]));
}

describe("the code map (paths named in comments and pages)", () => {
    it("finds paths, relative ones, globs and anchors as a reader would", () => {
        const named = pathsNamed(
            "cli/x.ts",
            "/** See gitops/manifests/load.ts, ./y.ts and cli/bundle/*.ts (docs/rules.md#rule-a); fixtures/<name>/, fixtures/go-<name>. */\nconst a = 'policies/nope.ts';",
        );
        assert.deepStrictEqual(
            named.map((n) => n.resolved),
            ["gitops/manifests/load.ts", "cli/y.ts", "cli/bundle/*.ts", "docs/rules.md"],
        );
    });

    it("every file named by its name alone is a file of the repository", () => {
        assert.deepStrictEqual(namesNamed("x.ts", "/** See kube-yaml.ts (and ./y.ts, gitops/z.ts). */"), [
            "kube-yaml.ts",
        ]);
        const names = fileNames();
        const stale: string[] = [];
        for (const file of mappedFiles()) {
            const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
            for (const name of namesNamed(file, text))
                if (!names.has(name) && !ELSEWHERE_NAMES[name]) stale.push(`${file}: ${name}`);
        }
        assert.deepStrictEqual(stale, [], `file names that name nothing:\n${stale.join("\n")}`);
    });

    it("every path named resolves (a file, a folder, a glob's match, or something a build writes)", () => {
        const isIgnored = ignored();
        const stale: string[] = [];
        for (const file of mappedFiles()) {
            const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
            for (const { ref, resolved } of pathsNamed(file, text)) {
                if (resolved.startsWith("..") || ELSEWHERE[resolved] || isIgnored(resolved)) continue;
                const found = resolved.includes("*")
                    ? globMatches(resolved)
                    : fs.existsSync(path.join(REPO_ROOT, resolved));
                if (!found) stale.push(`${file}: ${ref}${ref === resolved ? "" : ` (${resolved})`}`);
            }
        }
        assert.deepStrictEqual(stale, [], `paths that name nothing:\n${stale.join("\n")}`);
    });
});
