import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { splitByOrigin } from "../../../../gitops/render/kustomize";

// kustomize's output with origin annotations, as `kustomize build` writes it for a resource file, a generator
// (helmCharts, configMapGenerator) and an object without an origin.
const built = [
    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n" +
        "      path: base/account.yaml\n  name: a\n",
    "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n" +
        "      configuredIn: base/kustomization.yaml\n      configuredBy:\n        apiVersion: builtin\n" +
        "        kind: HelmChartInflationGenerator\n  name: s\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
].join("---\n");

describe("kustomize: rendered objects attributed to files", () => {
    let tmp: string;
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-kustomize-"));
        fs.writeFileSync(path.join(tmp, "kustomization.yml"), "resources: [base]\n");
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it("names the resource file, the generator's kustomization, else the folder's kustomization: never a folder", () => {
        const streams = splitByOrigin(built, "/copy", tmp);
        assert.deepStrictEqual(
            streams.map((s) => path.relative(tmp, s.from)),
            [path.join("base", "account.yaml"), path.join("base", "kustomization.yaml"), "kustomization.yml"],
        );
        for (const s of streams) assert.doesNotMatch(s.text, /config\.kubernetes\.io\/origin/);
    });

    it("names the folder when it has no kustomization file (a Flux path kustomize-controller generated one for)", () => {
        fs.rmSync(path.join(tmp, "kustomization.yml"));
        const [, , last] = splitByOrigin(built, "/copy", tmp);
        assert.strictEqual(last.from, tmp);
    });
});
