/**
 * Every relative link of the README and of docs/ resolves: the file (or folder) it names exists in the
 * repository, and a `#anchor` names a heading (GitHub's slug) or an `<a id>` of the Markdown page it points at.
 * Links inside code (fenced blocks, inline code) are text, not links, and are not checked.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";

/** The Markdown pages: the README, CONTRIBUTING, CHANGELOG, every page of docs/ and of docs/contributing/. */
function pages(): string[] {
    const docs = ["docs", path.join("docs", "contributing")].flatMap((dir) =>
        fs
            .readdirSync(path.join(REPO_ROOT, dir))
            .filter((f) => f.endsWith(".md"))
            .map((f) => path.join(dir, f)),
    );
    return ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", ...docs].filter((f) =>
        fs.existsSync(path.join(REPO_ROOT, f)),
    );
}

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
    return markdown
        .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
        .replace(/(`+)[\s\S]*?\1/g, (m) => m.replace(/[^\n]/g, " "));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
    for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
        const slug = m[1]
            .toLowerCase()
            .replace(/<[^>]+>/g, "")
            .replace(/[^\p{L}\p{N}\s_-]/gu, "")
            .replace(/\s/g, "-");
        const n = seen.get(slug) ?? 0;
        seen.set(slug, n + 1);
        anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
    return anchors;
}

/** The broken relative links of one page (`file` relative to `root`), each as "target: why". */
export function brokenLinks(root: string, file: string, markdown: string): string[] {
    const broken: string[] = [];
    const body = prose(markdown);
    const targets = [
        ...[...body.matchAll(/\]\(\s*<?([^()\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
        ...[...body.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]),
    ];
    for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
        const [rel, anchor] = target.split("#", 2) as [string, string | undefined];
        const resolved = rel === "" ? path.join(root, file) : path.join(root, path.dirname(file), decodeURI(rel));
        if (
            !path
                .relative(root, resolved)
                .split(path.sep)
                .every((p) => p !== "..")
        ) {
            broken.push(`${target}: outside the repository`);
            continue;
        }
        if (rel !== "" && !fs.existsSync(resolved)) {
            broken.push(`${target}: no such file`);
            continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md")) {
            const text = rel === "" ? markdown : fs.readFileSync(resolved, "utf8");
            if (!anchorsOf(text).has(anchor)) broken.push(`${target}: no heading or anchor "${anchor}"`);
        }
    }
    return broken;
}

describe("links of the README and docs/", () => {
    for (const file of pages()) {
        it(`${file}: every relative link resolves`, () => {
            const markdown = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
            assert.deepStrictEqual(brokenLinks(REPO_ROOT, file, markdown), []);
        });
    }

    it("finds a missing file, a missing anchor and a link that leaves the repository, and skips code", () => {
        const page = [
            "# Title",
            "## A `code` heading, twice",
            "## A `code` heading, twice",
            '<a id="here"></a>',
            "[ok](#title) [ok](#a-code-heading-twice-1) [ok](#here) [ok](rules.md#rule-pko-guard-production)",
            "[ok](../LICENSE) [ok](https://example.org/x.md) [ok](../policies/)",
            "[bad](gone.md) [bad](#nowhere) [bad](rules.md#rule-nothing) [bad](../../etc/passwd)",
            "`[code](gone.md)`",
            "```md",
            "[code](gone.md)",
            "```",
            "[ref]: missing/ref.md",
        ].join("\n");
        assert.deepStrictEqual(brokenLinks(REPO_ROOT, "docs/page.md", page), [
            "gone.md: no such file",
            '#nowhere: no heading or anchor "nowhere"',
            'rules.md#rule-nothing: no heading or anchor "rule-nothing"',
            "../../etc/passwd: outside the repository",
            "missing/ref.md: no such file",
        ]);
    });
});
