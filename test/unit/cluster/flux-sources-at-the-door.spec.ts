/**
 * Flux sources at the door (pko-stack-prod-pinned-commit through cluster/admission.ts): a production Stack that
 * deploys from a Flux source is judged with the GitRepository or OCIRepository of its namespace that it names, so
 * a change to the source that unpins it (a commit replaced by a branch) is refused like the Stack tracking a
 * branch itself, and a Stack whose source is pinned passes.
 */
import * as assert from "assert";
import { packPolicies, parsePackConfig, reconcilePackConfig } from "../../../evaluation/pack-config";
import { judgeAdmission } from "../../../cluster/admission";
import { KObject } from "../../../cluster/kinds";
import { Doc, guideDocs } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";
import { SHA } from "../../support/helpers";

const RULE = "pko-stack-prod-pinned-commit";

describe("Flux sources at the door", function () {
    this.timeout(60_000);
    const governed = guideDocs("gitops-guide-governed", "manifests/production/stack.yaml", "pulumi");
    const written = governed.find((d) => d.kind === "Stack")!;
    const around = governed.filter((d) => d.kind !== "Stack");
    const spec = { ...(written.spec as Record<string, unknown>) };
    delete spec.projectRepo;
    delete spec.commit;
    delete spec.branch;
    const stack: Doc = {
        ...written,
        spec: {
            ...spec,
            fluxSource: {
                sourceRef: { apiVersion: "source.toolkit.fluxcd.io/v1", kind: "GitRepository", name: "program" },
                dir: "infra",
            },
        },
    };
    const source = (ref: Record<string, unknown>, namespace = "pulumi"): Doc => ({
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "GitRepository",
        metadata: { name: "program", namespace },
        spec: { interval: "5m", url: "https://github.com/myorg/program", ref },
    });
    const config = reconcilePackConfig(
        packPolicies(),
        parsePackConfig(JSON.stringify({ "pko-stack-repo-allowlist": { allowFluxSource: true } }), "cfg.json"),
        "cfg.json",
    );
    const judged = (operation: string, object: KObject, cached: KObject[], oldObject?: KObject) =>
        judgeAdmission({ operation, object, oldObject }, seededCache(cached), { config, warnOnly: false });
    const ruleFindings = (d: ReturnType<typeof judged>) => d.findings.filter((f) => f.policy === RULE);

    it("refuses an update that moves a production Stack's GitRepository from a commit to a branch", () => {
        const pinned = source({ commit: SHA });
        const d = judged("UPDATE", source({ branch: "main" }), [...around, stack, pinned], pinned);
        assert.strictEqual(d.allowed, false, "an unpinning update must be refused");
        const found = ruleFindings(d);
        assert.strictEqual(found.length, 1);
        assert.strictEqual(found[0].resource, `Stack/pulumi/${written.metadata.name}`);
        assert.match(found[0].message, /GitRepository "pulumi\/program" checks out spec\.ref\.branch "main"/);
    });

    it("passes an update that keeps it pinned, and a Stack created on a pinned source", () => {
        const pinned = source({ commit: SHA });
        const moved = source({ commit: SHA.split("").reverse().join(""), branch: "main" });
        assert.deepStrictEqual(ruleFindings(judged("UPDATE", moved, [...around, stack, pinned], pinned)), []);
        assert.deepStrictEqual(ruleFindings(judged("CREATE", stack, [...around, pinned])), []);
    });

    it("refuses a Stack created on a branch source, or on a source of another namespace", () => {
        const onBranch = ruleFindings(judged("CREATE", stack, [...around, source({ branch: "main" })]));
        assert.strictEqual(onBranch.length, 1);
        assert.match(onBranch[0].message, /spec\.ref\.branch "main", a movable ref/);
        const elsewhere = ruleFindings(judged("CREATE", stack, [...around, source({ commit: SHA }, "flux-system")]));
        assert.strictEqual(elsewhere.length, 1);
        assert.match(elsewhere[0].message, /not among the objects judged/);
    });
});
