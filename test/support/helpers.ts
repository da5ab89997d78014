/**
 * Test helpers: evaluate a policy exactly as the analyzer would, without starting a server. Resource
 * properties are given in the engine's wire form (or plain), converted to a protobuf Struct, and
 * deserialized and proxied by @pulumi/policy's own code, so secrets arrive unwrapped and unknown values
 * throw when read, just as in `pulumi preview`.
 */
import * as assert from "assert";
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { ReportedFinding } from "../../policies/model/policy";

const structPb = require("google-protobuf/google/protobuf/struct_pb");
const { deserializeProperties } = require("@pulumi/policy/deserialize");
const { unknownCheckingProxy } = require("@pulumi/policy/proxy");

export const UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export const STACK_TYPE = "kubernetes:pulumi.com/v1:Stack";

/** Wraps a value as the engine serializes a secret. */
export function secret(value: unknown): unknown {
    return { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value };
}

/** Turns wire-form properties into what a policy's `props` is during preview. */
export function analyzerProps(wire: unknown): unknown {
    // JSON drops undefined fields, as a program's serialization does.
    const struct = structPb.Struct.fromJavaScript(JSON.parse(JSON.stringify(wire ?? {})));
    return unknownCheckingProxy(deserializeProperties(struct, false));
}

export interface TestResource {
    type: string;
    name: string;
    props: unknown;
    /** The URN, when the test needs a particular one (default: a top-level resource of stack `dev`). */
    urn?: string;
}

function urnOf(r: TestResource): string {
    return r.urn ?? `urn:pulumi:dev::test::${r.type}::${r.name}`;
}

export interface Reported {
    message: string;
    /** The URN the policy reported the finding on, when it named one. */
    urn?: string;
    /** The policy that reported it. */
    policy: string;
    /** The finding's level: its own when the policy reported one, else the policy's. */
    level: string;
    /** The name of the resource it is about (from its URN, or the evaluated resource's). */
    resource: string;
}

/** What the analyzer's reportViolation receives: a message (and URN), or an object with its own level. */
function reporter(
    policy: { name: string; enforcementLevel?: string },
    out: Reported[],
    defaultUrn: string | undefined,
    data?: ReportedFinding[],
) {
    const report = (violation: any, urn?: string) => {
        const object = typeof violation === "object" && violation !== null;
        const message = object ? String(violation.message) : String(violation);
        const at: string | undefined = object ? (violation.urn ?? urn) : urn;
        const about = at ?? defaultUrn ?? "";
        out.push({
            message,
            urn: at,
            policy: policy.name,
            level: String((object && violation.enforcementLevel) || policy.enforcementLevel || "advisory"),
            resource: about.slice(about.lastIndexOf("::") + 2),
        });
    };
    // With `data`, the in-process reporter: findings as data (policies/model/policy.ts DataReport).
    return data ? Object.assign(report, { finding: (f: ReportedFinding) => data.push(f) }) : report;
}

/** One expected finding of an evaluation; `count` (default 1) findings must match it. */
export interface ExpectedFinding {
    policy: string;
    level: "mandatory" | "advisory";
    /** The resource's name. */
    resource: string;
    /** What the message must say. */
    message: RegExp;
    count?: number;
}

/**
 * Asserts the exact findings of an evaluation: each expectation is met by exactly `count` findings of
 * that policy, level and resource whose message matches, and nothing else is reported. A clean result
 * is `assertFindings(r, [])`.
 */
export function assertFindings(reported: Reported[], expected: ExpectedFinding[]): void {
    const left = [...reported];
    const problems: string[] = [];
    for (const e of expected) {
        const want = e.count ?? 1;
        const matches = left.filter(
            (r) =>
                r.policy === e.policy && r.level === e.level && r.resource === e.resource && e.message.test(r.message),
        );
        if (matches.length !== want)
            problems.push(
                `expected ${want} x ${e.policy} (${e.level}) on ${e.resource} matching ${e.message}, got ${matches.length}`,
            );
        for (const m of matches) left.splice(left.indexOf(m), 1);
    }
    for (const r of left) problems.push(`unexpected ${r.policy} (${r.level}) on ${r.resource}: ${r.message}`);
    assert.deepStrictEqual(
        problems,
        [],
        `findings:\n${reported.map((r) => `  ${r.policy} (${r.level}) on ${r.resource}: ${r.message}`).join("\n")}`,
    );
}

/**
 * The messages of an evaluation that may report only as `policy`, at `level`, on `resource`: for specs that
 * go on to read the messages' text. Fails on any finding of another policy, level or resource.
 */
export function messagesOn(
    reported: Reported[],
    policy: string,
    level: ExpectedFinding["level"],
    resource: string,
): string[] {
    const stray = reported.filter((r) => r.policy !== policy || r.level !== level || r.resource !== resource);
    assert.deepStrictEqual(
        stray.map((r) => `${r.policy} (${r.level}) on ${r.resource}: ${r.message}`),
        [],
        `only ${policy} (${level}) on ${resource} may report`,
    );
    return reported.map((r) => r.message);
}

/** The message of an evaluation that must report exactly one finding. */
export function onlyMessage(messages: string[]): string {
    assert.strictEqual(messages.length, 1, `expected exactly one finding, got:\n${messages.join("\n")}`);
    return messages[0];
}

/** A rule as its module exports it (`rule`, built here), or a policy of the built catalogue pack (`policies`). */
export type Runnable<P> = P | { name: string; build: (settings: never) => P };

/**
 * The policy to run and the settings policy that publishes the production settings it reads, as a pack holds
 * them. A rule is built into a pack of its own, with a new settings channel (policies/index.ts), so nothing
 * another run published can reach it; a policy of the catalogue pack reads that pack's settings, which its own
 * settings policy publishes. The settings policy runs first, as the analyzer runs it in every request, with
 * `settings` as its config; `null` leaves it out (as when it is disabled), for a rule only. Its own reports
 * are not returned.
 */
function inPack<P>(policy: Runnable<P>, settings: Record<string, unknown> | null): { run: P; settingsPolicy?: any } {
    const { rule: settingsRule } = require("../../policies/pko-guard-production");
    const built = policy as { build?: (settings: unknown) => P };
    if (typeof built.build === "function") {
        const { productionChannel } = require("../../policies/model/production");
        const channel = productionChannel();
        return {
            run: built.build(channel),
            settingsPolicy: settings === null ? undefined : settingsRule.build(channel),
        };
    }
    if (settings === null) throw new Error("settings: null needs a rule as its module exports it (a pack of its own)");
    const { policies } = require("../../policies");
    return { run: policy as P, settingsPolicy: policies.find((p: { name: string }) => p.name === settingsRule.name) };
}

/** A resource as a policy sees it, in a resource's arguments and in a stack's list alike. */
function policyResource(r: TestResource) {
    return {
        type: r.type,
        name: r.name,
        urn: urnOf(r),
        props: analyzerProps(r.props) as Record<string, any>,
        opts: {} as any,
        isType: () => false,
        asType: () => undefined,
    };
}
const notApplicable = (): never => {
    throw new Error("notApplicable");
};

/**
 * Runs a resource policy over one resource; returns what it reported. Throws if the policy throws.
 * `settings` is the pack-wide production settings (pko-guard-production's config).
 */
export function runResourcePolicy(
    rule: Runnable<ResourceValidationPolicy>,
    r: TestResource,
    config: Record<string, unknown> = {},
    settings: Record<string, unknown> | null = {},
    data?: ReportedFinding[],
): Reported[] {
    const { run, settingsPolicy } = inPack(rule, settings);
    if (settingsPolicy) validateResource(settingsPolicy, r, settings!);
    return validateResource(run, r, config, data);
}

/** Runs a built resource policy's validations over one resource, as the analyzer calls them. */
function validateResource(
    policy: ResourceValidationPolicy,
    r: TestResource,
    config: Record<string, unknown>,
    data?: ReportedFinding[],
): Reported[] {
    const out: Reported[] = [];
    const validations = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
    for (const validate of validations) {
        if (!validate) continue;
        synchronous(
            policy.name,
            validate(
                { ...policyResource(r), stackTags: new Map(), getConfig: <T>() => config as T, notApplicable } as any,
                reporter(policy, out, urnOf(r), data),
            ),
        );
    }
    return out;
}

/** A hook's answer: never a promise (evaluation/evaluate.ts fails a policy whose hook returns one). */
function synchronous(policy: string, answer: void | Promise<void>): void {
    if (answer instanceof Promise) throw new Error(`${policy}: a hook answered with a promise; rules are synchronous`);
}

/** Runs a stack policy over a set of resources (`settings` as for runResourcePolicy). */
export function runStackPolicy(
    rule: Runnable<StackValidationPolicy>,
    resources: TestResource[],
    config: Record<string, unknown> = {},
    settings: Record<string, unknown> | null = {},
    data?: ReportedFinding[],
): Reported[] {
    const { run, settingsPolicy } = inPack(rule, settings);
    if (settingsPolicy) validateStack(settingsPolicy, resources, settings!);
    return validateStack(run, resources, config, data);
}

/** Runs a built stack policy over a set of resources, as the analyzer calls it. */
function validateStack(
    policy: StackValidationPolicy,
    resources: TestResource[],
    config: Record<string, unknown>,
    data?: ReportedFinding[],
): Reported[] {
    const out: Reported[] = [];
    synchronous(
        policy.name,
        policy.validateStack(
            {
                resources: resources.map((r) => ({ ...policyResource(r), dependencies: [], propertyDependencies: {} })),
                stackTags: new Map(),
                getConfig: <T>() => config as T,
                notApplicable,
            } as any,
            reporter(policy, out, undefined, data),
        ),
    );
    return out;
}

/** A PKO Stack resource in wire form. */
export function stackResource(
    name: string,
    spec: unknown,
    metadata: Record<string, unknown> = {},
    type = STACK_TYPE,
): TestResource {
    return {
        type,
        name,
        props: {
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: { name, namespace: "pulumi", ...metadata },
            spec,
        },
    };
}

export const SHA = "2b0889718d3e63feeb6079ccd5e4488d8601e353";

/** A known-good Stack spec: token from a Secret, pinned commit, no destroyOnFinalize. */
export function goodSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        stack: "acme/app/prod",
        projectRepo: "https://github.com/acme/app",
        commit: SHA,
        envRefs: {
            PULUMI_ACCESS_TOKEN: { type: "Secret", secret: { name: "pulumi-access-token", key: "accessToken" } },
        },
        ...overrides,
    };
}

/**
 * The real-leg toolchain for a test, or: skip the test when PKO_GUARD_SKIP_REAL=1 (reported as pending,
 * never as passing), else fail with the fix. A missing toolchain never makes a real-leg test pass.
 */
export function requireToolchain(ctx: Mocha.Context): import("../../support/toolchain").Toolchain {
    const { findToolchain } = require("../../support/toolchain") as typeof import("../../support/toolchain");
    try {
        return findToolchain();
    } catch {
        if (process.env.PKO_GUARD_SKIP_REAL === "1") ctx.skip();
        throw new Error("the Pulumi toolchain is not installed: run npm run setup (or set PKO_GUARD_SKIP_REAL=1)");
    }
}
