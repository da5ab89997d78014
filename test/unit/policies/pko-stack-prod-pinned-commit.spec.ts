import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-prod-pinned-commit";
import {
    SHA,
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    stackResource,
    ExpectedFinding,
    assertFindings,
} from "../../support/helpers";

function run(spec: unknown, config: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
    return runResourcePolicy(policy, stackResource("app", spec, metadata), config);
}
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "app", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);

describe("pko-stack-prod-pinned-commit", () => {
    it("passes production on a full 40-hex commit (either case)", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ commit: SHA.toUpperCase() })), []);
    });

    it("passes non-production on a branch", () => {
        assert.deepStrictEqual(check(goodSpec({ stack: "acme/app/dev", commit: undefined, branch: "main" })), []);
    });

    it("flags a branch on production, with or without a commit", () => {
        assertFindings(run(goodSpec({ commit: undefined, branch: "release" })), one(/tracks a branch.*40-hex/));
        assertFindings(run(goodSpec({ branch: "main" })), one(/tracks a branch/));
    });

    it("flags short, tag-like and missing commits", () => {
        for (const commit of ["a1b2c3d", "v1.2.3", SHA.slice(1), SHA + "0", "g" + SHA.slice(1), ""]) {
            assert.strictEqual(check(goodSpec({ commit })).length, 1, commit);
        }
        assertFindings(run(goodSpec({ commit: undefined })), one(/sets no spec\.commit/));
    });

    it("flags a production Stack that check read from a source whose reference can move, pinned or not", () => {
        const floating = {
            annotations: {
                "pko-guard/floating-source": 'https://git.example.com/stacks at "main", resolved to ' + SHA,
            },
        };
        assertFindings(
            run(goodSpec(), {}, floating),
            one(
                /read from https:\/\/git\.example\.com\/stacks at "main", resolved to [0-9a-f]{40}, a reference that can move/,
            ),
        );
        assert.deepStrictEqual(check(goodSpec({ stack: "acme/app/dev" }), {}, floating), []);
        assert.deepStrictEqual(check(goodSpec(), {}, { annotations: { "pko-guard/floating-source": "" } }), []);
    });

    it("reports one violation per Stack, listing every problem", () => {
        const m = check(goodSpec({ commit: "abc", branch: "main" }));
        assert.strictEqual(m.length, 1);
        assert.match(m[0], /branch.*not a full 40-hex/);
    });

    it("flags unpinnable sources unless allowed", () => {
        const flux = goodSpec({
            projectRepo: undefined,
            commit: undefined,
            fluxSource: { sourceRef: { kind: "GitRepository", name: "x" } },
        });
        assertFindings(run(flux), one(/spec\.fluxSource/));
        assert.deepStrictEqual(check(flux, { allowUnpinnableSources: true }), []);
        const program = goodSpec({ projectRepo: undefined, commit: undefined, programRef: { name: "p" } });
        assertFindings(run(program), one(/spec\.programRef/));
    });

    it("fails closed on unknown commit, branch, stack or spec", () => {
        assertFindings(run(goodSpec({ commit: UNKNOWN_WIRE })), one(/spec\.commit is unknown/));
        assertFindings(run(goodSpec({ branch: UNKNOWN_WIRE })), one(/spec\.branch is unknown/));
        assertFindings(run(goodSpec({ stack: UNKNOWN_WIRE, commit: "abc" })), one(/fails closed/));
        assert.strictEqual(check(UNKNOWN_WIRE).length, 1);
    });

    it("applies to v1alpha1 Stacks", () => {
        const r = stackResource(
            "old",
            goodSpec({ commit: undefined, branch: "main" }),
            {},
            "kubernetes:pulumi.com/v1alpha1:Stack",
        );
        assert.strictEqual(runResourcePolicy(policy, r).length, 1);
    });
});
