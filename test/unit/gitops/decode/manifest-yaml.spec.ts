/**
 * Rendered objects placed in the file they came from (gitops/decode/manifest-yaml.ts): kustomize and Flux give
 * an object back with its name prefixed or suffixed, so the document is the one whose name the rendered name
 * holds; when several names are held (`flagger` and `flagger-grafana` in one file), the longest, and in the
 * object's namespace when two documents share a name.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { originals, parseSource } from "../../../../gitops/decode/manifest-yaml";
import { emptyLoad } from "../../../../gitops/manifests/manifest-objects";

const release = (name: string, ns = "istio-system") =>
    `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  chart: {spec: {chart: ${name}}}\n`;

describe("rendered objects placed in the file they came from", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-placed-"));
        originals.clear();
    });
    afterEach(() => {
        originals.clear();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    /** The line each object of `rendered` (a render's output from `file`) is placed at. */
    const lines = (file: string, rendered: string): [string, number][] => {
        const out = emptyLoad();
        parseSource({ file: "f.yaml", text: rendered, abs: path.join(dir, file), rendered: true }, out, false);
        return out.objects.map((o) => [o.identity, o.line]);
    };

    it("takes the longest written name the rendered name holds, not the first", () => {
        fs.writeFileSync(path.join(dir, "f.yaml"), `${release("flagger")}---\n${release("flagger-grafana")}`);
        // Written order, reversed order, and with a prefix and suffix added.
        assert.deepStrictEqual(lines("f.yaml", `${release("flagger")}---\n${release("flagger-grafana")}`), [
            ["HelmRelease/istio-system/flagger", 1],
            ["HelmRelease/istio-system/flagger-grafana", 9],
        ]);
        assert.deepStrictEqual(lines("f.yaml", `${release("eu-flagger-grafana-v2")}---\n${release("eu-flagger-v2")}`), [
            ["HelmRelease/istio-system/eu-flagger-grafana-v2", 9],
            ["HelmRelease/istio-system/eu-flagger-v2", 1],
        ]);
    });

    it("tells two documents of one name apart by namespace", () => {
        fs.writeFileSync(path.join(dir, "g.yaml"), `${release("web", "a")}---\n${release("web", "b")}`);
        assert.deepStrictEqual(lines("g.yaml", `${release("web", "b")}---\n${release("web", "a")}`), [
            ["HelmRelease/b/web", 9],
            ["HelmRelease/a/web", 1],
        ]);
    });
});
