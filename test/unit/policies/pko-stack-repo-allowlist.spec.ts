import * as assert from "assert";
import { rule as policy } from "../../../policies/pko-stack-repo-allowlist";
import {
    UNKNOWN_WIRE,
    goodSpec,
    runResourcePolicy,
    stackResource,
    ExpectedFinding,
    assertFindings,
    messagesOn,
    onlyMessage,
} from "../../support/helpers";

const run = (spec: unknown, config: Record<string, unknown> = {}) =>
    runResourcePolicy(policy, stackResource("app", spec), config);
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "app", message },
];
/** The messages of an evaluation, which may only be this policy's mandatory findings on the Stack. */
const check = (...a: Parameters<typeof run>) => messagesOn(run(...a), policy.name, "mandatory", "app");
const acme = { allowedRepoPatterns: ["^https://github\\.com/acme/"] };

describe("pko-stack-repo-allowlist", () => {
    it("passes any https/ssh repository without an allowlist, and allowlisted ones with it", () => {
        assert.deepStrictEqual(check(goodSpec()), []);
        assert.deepStrictEqual(check(goodSpec({ projectRepo: "git@github.com:x/y.git" })), []);
        assert.deepStrictEqual(check(goodSpec(), acme), []);
    });
    it("flags plaintext http and repositories outside the allowlist, without echoing credentials", () => {
        assertFindings(run(goodSpec({ projectRepo: "http://github.com/acme/app" })), one(/plaintext http/));
        const m = check(goodSpec({ projectRepo: "https://bot:hunter2@github.com/evil/app" }), acme);
        assert.strictEqual(m.length, 1);
        assert.ok(!m[0].includes("hunter2"));
        for (const [repo, shown] of [
            ["https://user:p@ss-hunter2@github.com/evil/app", "https://github.com/evil/app"],
            ["https://github.com/evil/app.git?access_token=hunter2#frag-hunter2", "https://github.com/evil/app.git"],
            ["git@gitlab.example.com:evil/app.git", "gitlab.example.com:evil/app.git"],
            [`https://github.com/evil/ghp_${"x".repeat(36)}`, "(URL not shown)"],
        ]) {
            const msg = onlyMessage(check(goodSpec({ projectRepo: repo }), acme));
            assert.ok(msg.includes(`"${shown}"`), msg);
            assert.ok(!msg.includes("hunter2") && !msg.includes("ghp_"), msg);
        }
    });
    it("allows Flux and Program sources only when configured", () => {
        const flux = goodSpec({ projectRepo: undefined, commit: undefined, fluxSource: { sourceRef: { name: "x" } } });
        assert.match(onlyMessage(check(flux)), /spec\.fluxSource/);
        assert.deepStrictEqual(check(flux, { allowFluxSource: true }), []);
        const prog = goodSpec({ projectRepo: undefined, commit: undefined, programRef: { name: "p" } });
        assert.match(onlyMessage(check(prog)), /spec\.programRef/);
        assert.deepStrictEqual(check(prog, { allowProgramRef: true }), []);
    });
    it("fails closed on unknown repositories and reports invalid patterns", () => {
        assertFindings(run(goodSpec({ projectRepo: UNKNOWN_WIRE })), one(/fails closed/));
        assertFindings(run(goodSpec(), { allowedRepoPatterns: ["["] }), one(/not a valid RE2 regular expression/));
    });
});

describe("pko-stack-repo-allowlist: the workspace template's source", () => {
    it("refuses a workspace template that replaces the Stack's source, and fails closed when it is unknown", () => {
        const run = (workspaceTemplate: unknown) => check(goodSpec({ workspaceTemplate }));
        assert.deepStrictEqual(run({ spec: { image: "pulumi/pulumi:latest-nonroot" } }), []);
        for (const source of ["git", "flux", "local"]) {
            const m = run({
                spec: {
                    [source]: source === "git" ? { url: "https://github.com/evil/app", ref: "main" } : { dir: "x" },
                },
            });
            assert.strictEqual(m.length, 1, source);
            assert.match(
                m[0],
                new RegExp(`spec\\.workspaceTemplate\\.spec\\.${source} replaces the Stack's program source`),
            );
        }
        assert.match(onlyMessage(run(UNKNOWN_WIRE)), /fails closed/);
        assert.match(onlyMessage(run({ spec: UNKNOWN_WIRE })), /fails closed/);
    });
});
