/**
 * What check says when a rendering tool fails, and what it refuses before running one (gitops/render/render.ts):
 * a tool's error is one line without quoted text and without a URL's user information however the quotes fall
 * around it, and a kustomization entry that kustomize would fetch over the network is recognised in each form
 * kustomize accepts (refused with its own line, before kustomize can quote the URL).
 */
import * as assert from "assert";
import { mappingOf } from "../../../../gitops/render/render";
import { firstErrorLine } from "../../../../gitops/render/tool-errors";
import { isRemoteEntry } from "../../../../gitops/render/kustomize";

describe("rendering tools: error lines and remote entries", () => {
    const TOKEN = "ghp_canary5d1c0e";

    it("an error line keeps the reason and drops quoted text and a URL's user information, quoted or not", () => {
        const cases = [
            // kustomize's accumulation error nests quotes, which leaves the URL between two quoted parts.
            `Error: accumulating resources: accumulation err='accumulating resources from 'https://x:${TOKEN}@github.com/acme/x//base?ref=main': failed': fatal`,
            `Error: fetching https://${TOKEN}@charts.example.com/index.yaml: dial tcp: lookup charts.example.com: no such host`,
            `Error: git clone ssh://git:${TOKEN}@example.com/r.git failed`,
            `Error: looks like "https://u:${TOKEN}@charts.example.com" is not a valid chart repository`,
        ];
        for (const stderr of cases) {
            const line = firstErrorLine(stderr);
            assert.ok(!line.includes(TOKEN), line);
            assert.ok(!line.includes("\n") && !line.startsWith("Error:"), line);
        }
        assert.strictEqual(
            firstErrorLine(cases[1]),
            "fetching https://…@charts.example.com/index.yaml: dial tcp: lookup charts.example.com: no such host",
        );
        // A quoted file name is shown (unquoted); quoted text that is not a path, a value perhaps, is not.
        assert.strictEqual(
            firstErrorLine("WARNING: x\nError: no such file 'values.yaml'\n"),
            "no such file values.yaml",
        );
        assert.strictEqual(firstErrorLine(`Error: invalid literal '${TOKEN}'`), "invalid literal '…'");
        // An address without user information stays as it is: it says what was fetched.
        assert.strictEqual(
            firstErrorLine("Error: fetching https://charts.example.com/x.tgz failed"),
            "fetching https://charts.example.com/x.tgz failed",
        );
    });

    it("kustomize's error names the repository's file, not check's temporary copy, says why once and whole", () => {
        const scratch = "/tmp/pko-guard-kustomize-sjPtQk";
        const missing = `${scratch}/repo/app/missing-deployment.yaml`;
        const stderr = `Error: accumulating resources: accumulation err='accumulating resources from 'missing-deployment.yaml': evalsymlink failure on '${missing}' : lstat ${missing}: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '${missing}' : lstat ${missing}: no such file or directory\n`;
        const line = firstErrorLine(stderr, [
            { from: "/home/u/repo", to: "" },
            { from: `${scratch}/repo`, to: "" },
        ]);
        assert.strictEqual(
            line,
            "accumulating resources: accumulation err=accumulating resources from missing-deployment.yaml: evalsymlink failure on app/missing-deployment.yaml: lstat app/missing-deployment.yaml: no such file or directory: must build at directory: not a valid directory",
        );
        // Without the map, a temporary folder of check's own is still never shown.
        assert.ok(!firstErrorLine(stderr).includes("/tmp/"), firstErrorLine(stderr));
    });

    it("a long error is cut between segments, keeping what failed and why, never mid-word", () => {
        const middle = Array.from({ length: 40 }, (_, i) => `wrapping layer number ${i}`).join(": ");
        const line = firstErrorLine(`Error: building overlay: ${middle}: no such file or directory`);
        assert.ok(line.length <= 300, line);
        assert.match(line, /^building overlay: …: .*: no such file or directory$/);
        for (const segment of line.split(": ").slice(2))
            assert.match(segment, /^(wrapping layer number \d+|no such file or directory)$/);
    });

    it("a kustomization entry kustomize fetches is remote in each form it accepts; a path in the repository is not", () => {
        for (const e of [
            "https://github.com/acme/x//base?ref=main",
            "https://github.com/acme/x",
            "git::https://github.com/acme/x",
            "git::ssh://git@github.com/acme/x.git",
            "ssh://git@github.com/acme/x.git//base",
            "git@github.com:acme/x.git",
            "github.com/acme/x//base?ref=v1",
            "gitlab.com/acme/x",
            "example.com/acme/x//base?ref=v1",
            "file:///etc/kustomize",
        ]) {
            assert.ok(isRemoteEntry(e), e);
        }
        for (const e of [
            "../base",
            "stack.yaml",
            "overlays/prod",
            "./github/base",
            "charts/ledger.yaml",
            "base/git-ops.yaml",
        ])
            assert.ok(!isRemoteEntry(e), e);
    });

    it("Chart.yaml and kustomizations decode as sigs.k8s.io/yaml does: merge keys, a repeated key's last value, YAML 1.1", () => {
        assert.deepStrictEqual(mappingOf("name: a\nname: b\n"), { name: "b" });
        assert.deepStrictEqual(mappingOf("x: &r [a]\n<<: {resources: *r}\n"), { x: ["a"], resources: ["a"] });
        assert.deepStrictEqual(mappingOf("resources: [yes, 'on']\n"), { resources: [true, "on"] });
        // Not a mapping, or not decodable: empty (the tool that reads it says why).
        for (const text of ["- a\n", "", "a: [\n", "null\n"])
            assert.deepStrictEqual(mappingOf(text), {}, JSON.stringify(text));
    });
});
