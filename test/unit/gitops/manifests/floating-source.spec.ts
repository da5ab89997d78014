/**
 * The floating-source mark (policies/model/origin.ts FLOATING_SOURCE) is check's own: a manifest that writes the
 * annotation itself has it removed, so a repository can neither forge the mark nor hide behind it.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadManifests } from "../../../../gitops/manifests/load";
import { FLOATING_SOURCE } from "../../../../policies/model/origin";

describe("the floating-source mark", () => {
    let root: string;
    beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-floating-"))));
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("is removed from what a manifest writes", () => {
        fs.writeFileSync(
            path.join(root, "stack.yaml"),
            `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: s\n  annotations:\n    ${FLOATING_SOURCE}: written\n    keep: "yes"\nspec:\n  stack: acme/s/dev\n`,
        );
        const load = loadManifests(["."], { repoRoot: root, cwd: root });
        const annotations = (load.objects[0].object.metadata as { annotations: Record<string, string> }).annotations;
        assert.strictEqual(annotations[FLOATING_SOURCE], undefined);
        assert.strictEqual(annotations.keep, "yes");
    });
});
