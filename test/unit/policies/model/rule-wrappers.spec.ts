/**
 * The never-throw wrappers every policy is built with: whatever a rule does wrong is reported as one
 * fail-closed violation (a governance gate never passes by accident), and nothing reaches the SDK as an
 * exception.
 */
import * as assert from "assert";
import { ResourceValidationPolicy } from "@pulumi/policy";
import { policies } from "../../../../policies";
import { COULD_NOT_EVALUATE, programRule, resourceRule, stackRule } from "../../../../policies/model/policy";
import { UNKNOWN, plain } from "../../../../policies/model/values";
import { productionChannel } from "../../../../policies/model/production";
import { ReportedFinding } from "../../../../policies/model/policy";
import {
    ExpectedFinding,
    assertFindings,
    goodSpec,
    runResourcePolicy,
    runStackPolicy,
    stackResource,
} from "../../../support/helpers";

const meta = {
    name: "test-rule",
    enforcementLevel: "mandatory" as const,
    severity: "high" as const,
    about: {
        what: "w",
        why: "w",
        fix: "f",
        reads: ["pulumi.com/Stack"],
        readsProduction: false,
        patternSettings: [],
        example: [],
    },
};
const resource = { type: "kubernetes:core/v1:ConfigMap", name: "c", props: { data: { a: "b" } } };
/** The one finding of `policy` (mandatory) on `on`. */
const one = (message: RegExp, policy = "test-rule", on = "c"): ExpectedFinding[] => [
    { policy, level: "mandatory", resource: on, message },
];
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("rule wrappers", () => {
    const misbehaving: [string, () => unknown][] = [
        [
            "throws",
            () => {
                throw new TypeError("boom");
            },
        ],
        ["returns undefined", () => undefined],
        ["returns a promise", () => Promise.resolve([])],
        ["returns a list holding null", () => ["fine", null]],
        ["returns a finding without a message", () => [{ urn: "u" }]],
    ];
    for (const [what, check] of misbehaving) {
        it(`a rule that ${what} is reported once, fail-closed, in both wrappers`, () => {
            assertFindings(
                runResourcePolicy(resourceRule(meta, check as never), resource),
                one(new RegExp(`^test-rule ${literally(COULD_NOT_EVALUATE)}`)),
            );
            // A program rule's failure is about the program, on no resource of it.
            assertFindings(
                runStackPolicy(programRule(meta, check as never), [resource]),
                one(new RegExp(`^test-rule ${literally(COULD_NOT_EVALUATE)}`), "test-rule", ""),
            );
        });
    }

    it("a rule that throws says so (by the error's kind, never its text), and PKO_GUARD_DEBUG=1 prints its first line and stack", () => {
        const rule = resourceRule(meta, () => {
            throw new TypeError("boom: secret-looking text\nsecond line");
        });
        const printed: string[] = [];
        const write = process.stderr.write;
        const before = process.env.PKO_GUARD_DEBUG;
        (process.stderr as { write: unknown }).write = (s: string) => (printed.push(String(s)), true);
        try {
            delete process.env.PKO_GUARD_DEBUG;
            const quiet = runResourcePolicy(rule, resource);
            assertFindings(quiet, one(/the rule failed on this input: TypeError/));
            assert.doesNotMatch(quiet[0].message, /boom/);
            assert.deepStrictEqual(printed, []);
            process.env.PKO_GUARD_DEBUG = "1";
            runResourcePolicy(rule, resource);
        } finally {
            (process.stderr as { write: unknown }).write = write;
            if (before === undefined) delete process.env.PKO_GUARD_DEBUG;
            else process.env.PKO_GUARD_DEBUG = before;
        }
        const out = printed.join("");
        assert.match(out, /^pko-guard: test-rule threw: boom: secret-looking text\n/);
        assert.match(out, /TypeError: boom[\s\S]*at /);
    });

    it("a waiver that throws is reported on the finding, which stays unwaived", () => {
        const broken = {
            waivers: [
                {
                    get resource(): string {
                        throw new Error("bad waiver");
                    },
                    reason: "r",
                },
            ],
        };
        const r = runResourcePolicy(
            resourceRule(meta, () => ["finding"]),
            resource,
            broken,
        );
        assertFindings(r, one(/^finding \(its waivers could not be checked: Error; the finding is not waived\)$/));
    });

    it("a resource whose metadata is unknown during preview is still matched against waivers (the SDK's proxy is never read)", () => {
        // The engine's sentinel for a value unknown during preview: the whole metadata is computed.
        const computed = {
            type: "kubernetes:core/v1:ConfigMap",
            name: "c",
            props: { kind: "ConfigMap", metadata: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" },
        };
        const data: ReportedFinding[] = [];
        const r = runResourcePolicy(
            resourceRule(meta, () => ["finding"]),
            computed,
            { waivers: [{ resource: "c", reason: "judged in review", expires: "2099-12-31" }] },
            {},
            data,
        );
        // Waived: the finding is kept as data with its waiver (and never reported as a violation).
        assert.deepStrictEqual(r, []);
        assert.deepStrictEqual(data, [
            { text: "finding", failClosed: false, waiver: { reason: "judged in review", expires: "2099-12-31" } },
        ]);
    });

    it("derives the SDK's description and remediation steps from `about`: what and fix as plain text", () => {
        const p = resourceRule(
            { ...meta, about: { ...meta.about, what: "every `spec.x` is\nset.", fix: "`spec.x: true`, always." } },
            () => [],
        ).build(productionChannel());
        assert.strictEqual(p.description, "Every spec.x is set.");
        assert.strictEqual(p.remediationSteps, "spec.x: true, always.");
    });

    it("passes findings through unchanged", () => {
        const r = runResourcePolicy(
            resourceRule(meta, () => ["one", { message: "two" }]),
            resource,
        );
        assert.deepStrictEqual(
            r.map((x) => x.message),
            ["one", "two"],
        );
        assert.deepStrictEqual(
            runStackPolicy(
                programRule(meta, () => []),
                [resource],
            ),
            [],
        );
    });

    describe("one fail-closed path: an input a rule cannot read is never absent, default or not-a-Stack", () => {
        /** Calls a policy's validateResource with a raw props object (no SDK proxy), as a broken input would arrive. */
        function raw(
            policy: ResourceValidationPolicy,
            props: unknown,
            getConfig: () => unknown = () => ({}),
        ): string[] {
            const out: string[] = [];
            // The settings policy runs first in every request, as in the analyzer.
            const settings = policies[0] as ResourceValidationPolicy;
            (settings.validateResource as (...args: any[]) => void)(
                {
                    type: "kubernetes:pulumi.com/v1:Stack",
                    name: "app",
                    urn: "urn:pulumi:dev::t::kubernetes:pulumi.com/v1:Stack::app-raw",
                    props: {},
                    getConfig: () => ({}),
                    notApplicable: () => undefined,
                },
                () => undefined,
            );
            (policy.validateResource as (...args: any[]) => void)(
                {
                    type: "kubernetes:pulumi.com/v1:Stack",
                    name: "app",
                    urn: "urn:pulumi:dev::t::kubernetes:pulumi.com/v1:Stack::app-raw",
                    props,
                    getConfig,
                    notApplicable: () => undefined,
                },
                (m: string) => out.push(m),
            );
            return out;
        }
        const throwing = (at: string) =>
            new Proxy(
                { apiVersion: "pulumi.com/v1", kind: "Stack", metadata: { name: "app" }, spec: goodSpec() },
                {
                    get(target, key) {
                        if (key === at) throw new Error("unreadable");
                        return (target as any)[key];
                    },
                },
            );
        const rules = policies.filter(
            (p) => "validateResource" in p && p.name.startsWith("pko-stack-"),
        ) as ResourceValidationPolicy[];

        it('a Stack whose properties throw when read is reported fail-closed by every Stack rule (it was "not a Stack")', () => {
            for (const p of rules) {
                for (const at of ["kind", "spec", "__getSpecialProxyTarget"]) {
                    const m = raw(p, throwing(at));
                    assert.strictEqual(m.length, 1, `${p.name} / ${at}`);
                    assert.ok(m[0].startsWith(`${p.name} ${COULD_NOT_EVALUATE}`), m[0]);
                }
            }
        });

        it("reading the policy config throws: fail closed, never an empty config", () => {
            for (const p of rules) {
                const m = raw(p, { apiVersion: "pulumi.com/v1", kind: "Stack", spec: goodSpec() }, () => {
                    throw new Error("no config");
                });
                assert.strictEqual(m.length, 1, p.name);
                assert.ok(m[0].includes(COULD_NOT_EVALUATE), m[0]);
            }
        });

        it("values that cannot be represented (too deep, cyclic, functions, NaN) become UNKNOWN, not absent", () => {
            let deep: any = "x";
            for (let i = 0; i < 80; i++) deep = { d: deep };
            const cyclic: any = { a: 1 };
            cyclic.self = cyclic;
            const v = plain({ deep, cyclic, fn: () => 1, nan: NaN }) as any;
            let cur = v.deep;
            for (let i = 0; i < 64 && cur !== UNKNOWN; i++) cur = cur.d;
            assert.strictEqual(cur, UNKNOWN);
            assert.strictEqual(v.cyclic.self, UNKNOWN);
            assert.strictEqual(v.fn, UNKNOWN);
            assert.strictEqual(v.nan, UNKNOWN);
            // A production Stack whose commit is unreadable fails closed.
            const commit: any = { toString: () => "x" };
            const m = raw(policies.find((p) => p.name === "pko-stack-prod-pinned-commit") as ResourceValidationPolicy, {
                apiVersion: "pulumi.com/v1",
                kind: "Stack",
                spec: { ...goodSpec(), commit: [commit, () => 1][1] },
            });
            assert.strictEqual(m.length, 1);
            assert.match(m[0], /spec\.commit is unknown/);
        });

        it("an unknown property in a policy's config is reported with the closest valid name", () => {
            const p = policies.find((x) => x.name === "pko-stack-prod-pinned-commit") as ResourceValidationPolicy;
            const m = runResourcePolicy(p, stackResource("app", goodSpec({ branch: "main" })), {
                allowUnpinableSources: true,
            });
            assertFindings(
                m,
                one(
                    /policy configuration is invalid: unknown property "allowUnpinableSources" \(did you mean allowUnpinnableSources\?\)/,
                    p.name,
                    "app",
                ),
            );
            const ruled = stackRule({ ...meta, config: {} }, () => []);
            assertFindings(
                runResourcePolicy(ruled, stackResource("app", goodSpec()), { x: 1 }),
                one(/unknown property "x" \(valid: waivers, allowAnnotationWaivers\)/, "test-rule", "app"),
            );
        });

        it("every policy's config schema is closed (additionalProperties: false)", () => {
            for (const p of policies) assert.strictEqual((p.configSchema as any)?.additionalProperties, false, p.name);
        });
    });
});
