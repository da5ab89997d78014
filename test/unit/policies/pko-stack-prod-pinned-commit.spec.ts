import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-prod-pinned-commit";
import {
    SHA,
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    runStackPolicy,
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

    it("flags programRef unless allowed; leaves a fluxSource to the source it names", () => {
        const flux = goodSpec({
            projectRepo: undefined,
            commit: undefined,
            fluxSource: { sourceRef: { kind: "GitRepository", name: "x" } },
        });
        assert.deepStrictEqual(check(flux), []);
        const program = goodSpec({ projectRepo: undefined, commit: undefined, programRef: { name: "p" } });
        assertFindings(run(program), one(/spec\.programRef/));
        assert.deepStrictEqual(check(program, { allowUnpinnableSources: true }), []);
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

    describe("a Flux source, judged by the source it names", () => {
        const fluxStack = (kind = "GitRepository", name = "fleet", stack = "myorg/app/production") =>
            stackResource(
                "app",
                goodSpec({
                    stack,
                    projectRepo: undefined,
                    commit: undefined,
                    fluxSource: { sourceRef: { apiVersion: "source.toolkit.fluxcd.io/v1", kind, name }, dir: "infra" },
                }),
            );
        const source = (kind: string, spec: Record<string, unknown>, namespace = "pulumi", name = "fleet") => ({
            type: `kubernetes:source.toolkit.fluxcd.io/v1:${kind}`,
            name,
            props: { apiVersion: "source.toolkit.fluxcd.io/v1", kind, metadata: { name, namespace }, spec },
        });
        const judge = (resources: ReturnType<typeof source>[], stack = fluxStack(), config = {}) =>
            runStackPolicy(policy, [stack, ...resources], config);
        const git = (ref: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) =>
            source("GitRepository", { url: "https://github.com/myorg/fleet", ...(ref ? { ref } : {}), ...extra });

        it("passes a GitRepository pinned by a full commit, which wins over every other ref field", () => {
            assert.deepStrictEqual(judge([git({ commit: SHA })]), []);
            assert.deepStrictEqual(
                judge([git({ branch: "main", tag: "v1", semver: ">=1", name: "refs/heads/x", commit: SHA })]),
                [],
            );
            assert.deepStrictEqual(judge([git({ commit: SHA.repeat(2).slice(0, 64) })]), []);
        });

        it("flags a GitRepository on a name, tag, semver range or branch, in source-controller's order", () => {
            const cases: [Record<string, unknown> | undefined, RegExp][] = [
                [{ branch: "main" }, /spec\.ref\.branch "main", a movable ref/],
                [{ tag: "v1.2.3", branch: "main" }, /spec\.ref\.tag "v1\.2\.3"/],
                [{ semver: ">=1.0.0", branch: "main" }, /spec\.ref\.semver ">=1\.0\.0"/],
                [{ name: "refs/tags/v1", tag: "v2", semver: "1.x" }, /spec\.ref\.name "refs\/tags\/v1"/],
                [{ commit: "2b08897" }, /spec\.ref\.commit of GitRepository "pulumi\/fleet" is not a full commit SHA/],
                [undefined, /sets no spec\.ref, so it tracks the master branch/],
            ];
            for (const [ref, message] of cases)
                assertFindings(judge([git(ref)]), [
                    { policy: policy.name, level: "mandatory", resource: "app", message, count: 1 },
                ]);
        });

        it("flags a pinned GitRepository that includes one on a branch", () => {
            const inner = source("GitRepository", { url: "https://x/y", ref: { branch: "main" } }, "pulumi", "lib");
            const outer = git({ commit: SHA }, { include: [{ repository: { name: "lib" }, toPath: "lib" }] });
            assertFindings(
                judge([outer, inner]),
                one(
                    /spec\.include\[0\] of GitRepository "pulumi\/fleet": GitRepository "pulumi\/lib" checks out spec\.ref\.branch/,
                ),
            );
            const pinnedInner = source("GitRepository", { url: "https://x/y", ref: { commit: SHA } }, "pulumi", "lib");
            assert.deepStrictEqual(judge([outer, pinnedInner]), []);
        });

        it("passes an OCIRepository pinned by digest; flags a tag, a semver range or none", () => {
            const stack = fluxStack("OCIRepository");
            const digest = `sha256:${"a".repeat(64)}`;
            assert.deepStrictEqual(
                judge([source("OCIRepository", { url: "oci://x/y", ref: { digest, tag: "v1" } })], stack),
                [],
            );
            assertFindings(
                judge([source("OCIRepository", { url: "oci://x/y", ref: { tag: "v1" } })], stack),
                one(/spec\.ref\.tag "v1", a movable ref/),
            );
            assertFindings(
                judge([source("OCIRepository", { url: "oci://x/y", ref: { semver: "1.x" } })], stack),
                one(/spec\.ref\.semver/),
            );
            assertFindings(judge([source("OCIRepository", { url: "oci://x/y" })], stack), one(/the latest tag/));
        });

        it("flags a Bucket, an unknown source and one in another namespace", () => {
            assertFindings(
                judge([source("Bucket", { bucketName: "b" })], fluxStack("Bucket")),
                one(/cannot be pinned/),
            );
            assertFindings(judge([]), one(/not among the objects judged/));
            assertFindings(
                judge([source("GitRepository", { ref: { commit: SHA } }, "flux-system")]),
                one(/not among the objects judged/),
            );
        });

        it("leaves non-production Stacks alone, and allowUnpinnableSources changes nothing", () => {
            assert.deepStrictEqual(
                judge([git({ branch: "main" })], fluxStack("GitRepository", "fleet", "myorg/app/dev")),
                [],
            );
            assertFindings(
                judge([git({ branch: "main" })], fluxStack(), { allowUnpinnableSources: true }),
                one(/movable ref/),
            );
        });

        it("fails closed when the source's ref is unknown during preview", () => {
            assertFindings(
                judge([git({ commit: UNKNOWN_WIRE })]),
                one(/spec\.ref\.commit of GitRepository "pulumi\/fleet" is unknown during preview/),
            );
        });
    });
});
