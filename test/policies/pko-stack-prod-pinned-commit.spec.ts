import * as assert from "assert";
import { policy } from "../../policies/pko-stack-prod-pinned-commit";
import { SHA, UNKNOWN_WIRE, goodSpec, runResourcePolicy, stackResource } from "../helpers";

function check(spec: unknown, config: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
    return runResourcePolicy(policy, stackResource("app", spec, metadata), config).map((r) => r.message);
}

describe("pko-stack-prod-pinned-commit", () => {
    it("passes production on a full 40-hex commit (either case)", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ commit: SHA.toUpperCase() })), []);
    });

    it("passes non-production on a branch", () => {
        assert.deepStrictEqual(check(goodSpec({ stack: "acme/app/dev", commit: undefined, branch: "main" })), []);
    });

    it("flags a branch on production, with or without a commit", () => {
        assert.match(check(goodSpec({ commit: undefined, branch: "release" }))[0], /tracks a branch.*40-hex/);
        assert.match(check(goodSpec({ branch: "main" }))[0], /tracks a branch/);
    });

    it("flags short, tag-like and missing commits", () => {
        for (const commit of ["a1b2c3d", "v1.2.3", SHA.slice(1), SHA + "0", "g" + SHA.slice(1), ""]) {
            assert.strictEqual(check(goodSpec({ commit })).length, 1, commit);
        }
        assert.match(check(goodSpec({ commit: undefined }))[0], /sets no spec\.commit/);
    });

    it("reports one violation per Stack, listing every problem", () => {
        const m = check(goodSpec({ commit: "abc", branch: "main" }));
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /branch.*not a full 40-hex/);
    });

    it("flags unpinnable sources unless allowed", () => {
        const flux = goodSpec({ projectRepo: undefined, commit: undefined, fluxSource: { sourceRef: { kind: "GitRepository", name: "x" } } });
        assert.match(check(flux)[0], /spec\.fluxSource/);
        assert.deepStrictEqual(check(flux, { allowUnpinnableSources: true }), []);
        const program = goodSpec({ projectRepo: undefined, commit: undefined, programRef: { name: "p" } });
        assert.match(check(program)[0], /spec\.programRef/);
    });

    it("fails closed on unknown commit, branch, stack or spec", () => {
        assert.match(check(goodSpec({ commit: UNKNOWN_WIRE }))[0], /spec\.commit is unknown/);
        assert.match(check(goodSpec({ branch: UNKNOWN_WIRE }))[0], /spec\.branch is unknown/);
        assert.match(check(goodSpec({ stack: UNKNOWN_WIRE, commit: "abc" }))[0], /fails closed/);
        assert.strictEqual(check(UNKNOWN_WIRE).length, 1);
    });

    it("applies to v1alpha1 Stacks", () => {
        const r = stackResource("old", goodSpec({ commit: undefined, branch: "main" }), {}, "kubernetes:pulumi.com/v1alpha1:Stack");
        assert.strictEqual(runResourcePolicy(policy, r).length, 1);
    });
});
