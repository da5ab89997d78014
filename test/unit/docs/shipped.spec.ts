/**
 * The documentation the package ships (package.json `files`: the README, the CHANGELOG, docs/*.md) is for users of
 * the installed package: every repository path it names (`dir/...`, in prose or code) and every relative link it
 * makes is a file or folder the package ships, so a reader of node_modules/pko-guard never meets a fixture, a test,
 * a source file or a contributor page they do not have. Contributor pages live in docs/contributing/ (not shipped)
 * and are linked with their repository URL.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";

const FILES = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { files: string[] }).files;

/** npm's rule for a `files` entry, as far as ours use it: a folder (`dir/`), a one-segment glob (`docs/*.md`), a file. */
export function shipped(rel: string, files: string[] = FILES): boolean {
    const p = rel.replace(/\/+$/, "");
    return (
        ["package.json", "LICENSE", "README.md"].includes(p) ||
        files.some((f) => {
            const entry = f.replace(/\/+$/, "");
            if (f.includes("*")) {
                const re = new RegExp(`^${entry.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
                return re.test(p) || entry.startsWith(`${p}/`);
            }
            // The entry itself, anything under it, or a folder that holds it.
            return p === entry || p.startsWith(`${entry}/`) || entry.startsWith(`${p}/`);
        })
    );
}

function shippedPages(): string[] {
    const docs = fs
        .readdirSync(path.join(REPO_ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`);
    return ["README.md", "CHANGELOG.md", ...docs].filter((f) => shipped(f));
}

/** Repository paths a page names: `a/b...` tokens whose first folder is one of the repository's, outside URLs. */
export function namedPaths(markdown: string, exists: (rel: string) => boolean): string[] {
    const text = markdown.replace(/<!--[\s\S]*?-->/g, "").replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "");
    const found = new Set<string>();
    for (const m of text.matchAll(/(?<![\w./@~$-])(\.?[A-Za-z_][\w.-]*\/[\w./*<>-]*)/g)) {
        const rel = m[1].replace(/[.,;:)]+$/, "");
        // Only what this repository holds counts (another project's `examples/...` is not ours).
        const real = rel.replace(/[<*].*$/, "").replace(/\/$/, "");
        if (real.includes("/") && !real.startsWith("node_modules/") && exists(real)) found.add(rel);
    }
    return [...found];
}

describe("the documentation the package ships", () => {
    const exists = (rel: string) => fs.existsSync(path.join(REPO_ROOT, rel));

    it("knows npm's rule for files entries", () => {
        assert.deepStrictEqual(
            [
                "docs/check.md",
                "docs/contributing/benchmarks.md",
                "toolchain/install.sh",
                "fixtures/x",
                "docs",
                "bin/cli/x.js",
            ].map((p) => shipped(p, ["docs/*.md", "toolchain/", "bin/"])),
            [true, false, true, false, true, true],
        );
        assert.deepStrictEqual(
            namedPaths("see `fixtures/a` and https://x.io/fixtures/b, ~/.cache/x", () => true),
            ["fixtures/a"],
        );
    });

    for (const page of shippedPages()) {
        it(`${page} names only paths the package ships`, () => {
            const text = fs.readFileSync(path.join(REPO_ROOT, page), "utf8");
            const base = path.dirname(page);
            const unshipped = namedPaths(text, exists).filter((rel) => {
                // A path relative to the page's folder (a link) or to the package root.
                const fromPage = path.posix.normalize(path.posix.join(base, rel));
                const clean = rel.replace(/[<*].*$/, "").replace(/\/$/, "");
                return !shipped(clean) && !(exists(fromPage) && shipped(fromPage));
            });
            assert.deepStrictEqual(unshipped, []);
        });

        it(`${page} links only to what the package ships`, () => {
            const text = fs
                .readFileSync(path.join(REPO_ROOT, page), "utf8")
                .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
            const links = [...text.matchAll(/\]\(\s*<?([^()\s>#]+)[^)]*\)/g)]
                .map((m) => m[1])
                .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
            const dead = links.filter((t) => !shipped(path.posix.normalize(path.posix.join(path.dirname(page), t))));
            assert.deepStrictEqual(dead, []);
        });
    }
});
