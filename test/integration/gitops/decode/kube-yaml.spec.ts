/**
 * The differential test of pko-guard's YAML decoding (gitops/decode/kube-yaml.ts): every document of the corpus
 * (test/data/kube-yaml-corpus: YAML 1.1 booleans, numbers, merge keys, duplicate keys, tags, anchors,
 * separators, JSON streams, and inputs that must fail) is decoded by the real Go decoder, the way Kubernetes
 * clients and Argo CD read manifests (toolchain/kube-yaml: apimachinery's YAMLOrJSONDecoder over
 * sigs.k8s.io/yaml), and by pko-guard: the JSON must be identical, or both must fail. The Go decoder is part of
 * `npm run setup`; without it this test fails (it is never skipped).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { KubeYamlError, decodeKubeYaml, decodeOptions } from "../../../../gitops/decode/kube-yaml";
import { INSTALL_HINT, findTool } from "../../../../gitops/render/tools";
import { yamlDocuments } from "../../../support/yaml-gen";
import { REPO_ROOT } from "../../../../support/paths";

const CORPUS = path.join(REPO_ROOT, "test", "data", "kube-yaml-corpus");

/** Key order does not matter (Go writes maps sorted); everything else does. */
function canonical(v: unknown): unknown {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === "object") {
        const o = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(o).sort())
            Object.defineProperty(out, k, { value: canonical(o[k]), enumerable: true });
        return out;
    }
    return v;
}

describe("YAML decoding matches sigs.k8s.io/yaml (differential)", function () {
    this.timeout(120000);
    const files = fs.readdirSync(CORPUS).sort();

    it("has a corpus with successes and failures", () => {
        assert.ok(files.length >= 40, `corpus has ${files.length} files`);
    });

    /** Decodes one stream with the Go decoder and with both of pko-guard's paths; asserts they agree. True when Go decodes it. */
    function assertSameDecoding(bytes: Buffer, what: string): boolean {
        const tool = findTool("kube-yaml");
        assert.ok(tool, `the reference decoder kube-yaml is missing: ${INSTALL_HINT["kube-yaml"]}`);
        const r = spawnSync(tool.path, [], { input: bytes, encoding: "utf8", timeout: 60000 });
        assert.strictEqual(r.status, 0, `kube-yaml failed: ${r.stderr}`);
        const go = JSON.parse(r.stdout) as { docs?: unknown[]; error?: string };
        // Both of pko-guard's paths (js-yaml where it can reproduce go-yaml, the yaml package's nodes otherwise).
        for (const fastPath of [true, false]) {
            const path = `${what}, ${fastPath ? "fast path" : "exact path"}`;
            let mine: { docs?: unknown[]; error?: string };
            decodeOptions.fastPath = fastPath;
            try {
                mine = {
                    docs: decodeKubeYaml(bytes.toString("utf8"))
                        .filter((d) => d.value !== null)
                        .map((d) => d.value),
                };
            } catch (e) {
                if (!(e instanceof KubeYamlError)) throw e;
                mine = { error: e.message };
            } finally {
                decodeOptions.fastPath = true;
            }
            if (go.error !== undefined) {
                assert.ok(
                    mine.error !== undefined,
                    `${path}: Go fails (${go.error}) but pko-guard decodes ${JSON.stringify(mine.docs)}`,
                );
                continue;
            }
            assert.strictEqual(
                mine.error,
                undefined,
                `${path}: pko-guard fails (${mine.error}) but Go decodes ${JSON.stringify(go.docs)}`,
            );
            assert.deepStrictEqual(JSON.stringify(canonical(mine.docs)), JSON.stringify(canonical(go.docs)), path);
        }
        return go.error === undefined;
    }

    for (const file of files) {
        it(file, () => void assertSameDecoding(fs.readFileSync(path.join(CORPUS, file)), file));
    }

    it("on generated documents (YAML 1.1 scalars, tags, anchors, aliases as keys, merges, flow in block; fixed seeds)", () => {
        let decoded = 0;
        for (const seed of [1, 23]) {
            for (const [i, text] of yamlDocuments(seed, 400).entries()) {
                if (assertSameDecoding(Buffer.from(text), `seed ${seed} document ${i}:\n${text}`)) decoded++;
            }
        }
        // About a quarter decode; the rest are refused by both.
        assert.ok(decoded >= 100, `only ${decoded} of 800 generated documents decode`);
    });

    it("keeps exact positions: a decoded node's offset is its place in the stream", () => {
        const text = "# c\n---\napiVersion: v1\nkind: A\n---\n\nspec:\n  flag: yes\n";
        const docs = decodeKubeYaml(text);
        const second = docs.find((d) => (d.value as Record<string, unknown> | null)?.spec !== undefined)!;
        assert.strictEqual(text.slice(second.start, second.start + 5), "spec:");
        const flag = (second.node as import("yaml").YAMLMap).getIn(["spec", "flag"], true) as import("yaml").Scalar;
        assert.strictEqual(text.slice(flag.range![0], flag.range![1]), "yes");
        assert.deepStrictEqual(second.value, { spec: { flag: true } });
    });
});
