/**
 * Preview twins at the door (pko-stack-preview-only-nonprod through cluster/admission.ts): a production Stack
 * with `spec.preview: true` passes when a Stack of its namespace deploys the same Pulumi stack, and is denied
 * without one; a deployer in another namespace is not judged with it (the rule's notes say so), and
 * `previewTwinNames` names such twins.
 */
import * as assert from "assert";
import { packConfig, packPolicies, parsePackConfig, reconcilePackConfig } from "../../../evaluation/pack-config";
import { judgeAdmission } from "../../../cluster/admission";
import { KObject } from "../../../cluster/kinds";
import { Doc, guideDocs } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";

const RULE = "pko-stack-preview-only-nonprod";

describe("preview twins at the door", function () {
    this.timeout(60_000);
    const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "pulumi");
    const deployer = governed.find((d) => d.kind === "Stack")!;
    const around = governed.filter((d) => d.kind !== "Stack");
    const twin = (ns = deployer.metadata.namespace): Doc => ({
        ...deployer,
        metadata: { ...deployer.metadata, name: `${deployer.metadata.name}-twin`, namespace: ns },
        spec: { ...(deployer.spec as object), preview: true },
    });
    const judged = (object: KObject, cached: KObject[], config = packConfig()) =>
        judgeAdmission({ operation: "CREATE", object }, seededCache(cached), { config, warnOnly: false });
    const ruleFindings = (d: ReturnType<typeof judged>) => d.findings.filter((f) => f.policy === RULE);

    it("passes a twin whose deployer is a Stack of its namespace", () => {
        const d = judged(twin(), [...around, deployer]);
        assert.deepStrictEqual(ruleFindings(d), []);
        assert.strictEqual(d.allowed, true, d.message);
    });

    it("denies the same twin with no deployer, naming the twin and the way out", () => {
        const d = judged(twin(), around);
        assert.strictEqual(d.allowed, false);
        const found = ruleFindings(d);
        assert.strictEqual(found.length, 1);
        assert.strictEqual(found[0].resource, `Stack/pulumi/${deployer.metadata.name}-twin`);
        assert.match(found[0].message, /sets spec\.preview: true, so it never deploys.*previewTwinNames/);
    });

    it("a deployer in another namespace is not judged with it: denied, unless previewTwinNames names it", () => {
        const elsewhere = twin("previews");
        const other = [
            ...around,
            deployer,
            { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "x", namespace: "previews" } },
        ];
        assert.strictEqual(ruleFindings(judged(elsewhere, other)).length, 1);
        const file = parsePackConfig(JSON.stringify({ [RULE]: { previewTwinNames: ["-twin$"] } }), "cfg.json");
        const named = reconcilePackConfig(packPolicies(), file, "cfg.json");
        assert.deepStrictEqual(ruleFindings(judged(elsewhere, other, named)), []);
    });
});
