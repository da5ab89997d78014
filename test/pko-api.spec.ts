/**
 * The committed PKO v2.9.0 CRDs (schemas/pko/v2.9.0) are what their PROVENANCE.md says they are, and
 * every security-relevant-looking field they declare is listed in the README's field table.
 */
import * as assert from "assert";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { PKO_CRD_DIR, PKO_CRD_FILES, loadPkoCrds } from "../harness/pko-crds";
import * as YAML from "yaml";

describe("PKO v2.9.0 API as data", () => {
    const provenance = fs.readFileSync(path.join(PKO_CRD_DIR, "PROVENANCE.md"), "utf8");

    it("each committed CRD matches the SHA-256 PROVENANCE.md records, and names the controller-gen it pins", () => {
        for (const file of PKO_CRD_FILES) {
            const text = fs.readFileSync(path.join(PKO_CRD_DIR, file), "utf8");
            const sum = crypto.createHash("sha256").update(text).digest("hex");
            assert.ok(provenance.includes(`${sum}  ${file}`), `${file}: SHA-256 ${sum} is not the one PROVENANCE.md records`);
            const crd = YAML.parse(text);
            assert.strictEqual(crd.metadata.annotations["controller-gen.kubebuilder.io/version"], "v0.16.5", file);
            assert.ok(!text.includes("description:"), `${file} carries descriptions (generate with maxDescLen=0)`);
        }
        assert.ok(provenance.includes("b713fae5a35041d899b0f64151a151f3df068ad1"));
    });

    it("serves Stack v1 and v1alpha1, Program v1, Workspace and Update v1alpha1", () => {
        const served = [...loadPkoCrds()].filter(([, v]) => v.served).map(([k]) => k).sort();
        assert.deepStrictEqual(served, ["auto.pulumi.com/v1alpha1/Update", "auto.pulumi.com/v1alpha1/Workspace", "pulumi.com/v1/Program", "pulumi.com/v1/Stack", "pulumi.com/v1alpha1/Stack"]);
    });
});
