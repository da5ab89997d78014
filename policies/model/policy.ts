/**
 * Builders that turn a pure rule (a function from a normalized view to messages) into a CrossGuard
 * policy object that can never throw: every input the analyzer can send is turned into plain data
 * first, and an unexpected failure inside a rule becomes a clear violation (fail closed) instead of
 * a gRPC error or, worse, a silently skipped advisory.
 */
import {
    EnforcementLevel,
    PolicyComplianceFramework,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
} from "@pulumi/policy";
import { unknownProperty } from "./config";
import { SettingsState, classifyProduction, Production, programKey, settingsFor } from "./production";
import { JoinedPatch, ResourceLike, StackView, stackPatches, stackView } from "./stack";
import { report } from "./report";
import { WAIVER_CONFIG, WaiverTarget, targetOf, waive } from "./waivers";

export const FRAMEWORK: PolicyComplianceFramework = {
    name: "pko-guard",
    version: "1",
    reference: "https://github.com/pulumi/pulumi-kubernetes-operator",
    specification: "Governed PKO deployments: credentials from Secrets, least-privilege RBAC, production safety, no public S3 ACLs.",
};

/** Metadata every pko-guard policy carries, in this order. */
export interface RuleMeta {
    name: string;
    description: string;
    enforcementLevel: EnforcementLevel;
    severity: Severity;
    remediationSteps: string;
    url?: string;
    /** Extra JSON-schema properties for the policy's config (enforcementLevel is implicit). */
    config?: Record<string, object>;
}

/**
 * A Stack rule's mechanical fix, run at the `remediate` enforcement level: the `spec` fields to set on a Stack
 * the rule would report (undefined: nothing to fix, or the fix is not certain). Only for fixes that cannot
 * deploy something harmful (a refresh before updates, a slower resync); never for what a person must decide
 * (branches and commits, credentials, RBAC). Only the Stack itself is remediated: the stack-level companion
 * that judges patches cannot remediate (the SDK runs stack policies at `remediate` as mandatory). A fix cannot
 * depend on the production settings: the SDK runs only `remediate`-level policies in its Remediate call, before
 * any Analyze, so the settings policy has published nothing for the resource yet (`settingsFor` says so).
 */
export type SpecFix = (view: StackView, config: Record<string, unknown>, ctx: RuleContext) => Record<string, unknown> | undefined;

/** What a rule gets besides its own config: the pack-wide production settings for this request. */
export interface RuleContext {
    production: SettingsState;
}

/** The pack's one production classification of a Stack, as this request's settings say. */
export function classify(view: StackView, ctx: RuleContext): Production {
    return classifyProduction(view, ctx.production);
}

/** A violation message, optionally attached to another resource's URN (stack policies). */
export interface Finding {
    message: string;
    urn?: string;
    /**
     * The field the finding is about, as a path in the Kubernetes object (`spec.branch`,
     * `spec.envRefs.PULUMI_ACCESS_TOKEN`, `subjects[0]`), when the rule knows it. The analyzer has no place
     * for it (CrossGuard reports a message and a URN); in-process evaluators (`pko-guard check`) use it to
     * point at the field's line.
     */
    field?: string;
}

export { FieldAwareReport } from "./report";

/** The properties of a policy's config: its own, and the per-resource waivers every policy accepts. */
function configProperties(meta: RuleMeta): Record<string, object> {
    return { ...(meta.config ?? {}), ...WAIVER_CONFIG };
}

/**
 * The policy's config schema. Every policy has one, closed (`additionalProperties: false`), so that a
 * misspelt property is rejected: by the CLI/harness config check, by the pack at run time (the engine
 * only validates the listed properties), and by tools that read the full schema.
 */
function configSchema(meta: RuleMeta): PolicyConfigSchema {
    return { properties: configProperties(meta) as PolicyConfigSchema["properties"], additionalProperties: false } as PolicyConfigSchema;
}

/**
 * The policy's config as the analyzer hands it over, or a message part saying why it cannot be used.
 * Reading it may throw (a broken analyzer): that propagates to `evaluate`, which fails closed.
 */
function readConfig(meta: RuleMeta, getConfig: () => unknown): Record<string, unknown> | string {
    const c = getConfig();
    if (c === null || typeof c !== "object" || Array.isArray(c)) return "its configuration is not an object";
    const unknown = unknownProperty(meta.name, c as Record<string, unknown>, Object.keys(configProperties(meta)));
    return unknown ?? (c as Record<string, unknown>);
}

/** What the waiver hook needs: the policy's config (undefined when unusable: nothing is waived) and where a finding is. */
interface Waiving {
    config: () => Record<string, unknown> | undefined;
    target: (urn?: string) => WaiverTarget;
}

const NO_WAIVERS: Waiving = { config: () => undefined, target: (urn) => targetOf(undefined, urn) };

/** The config for the waiver hook: a config that cannot be read or is invalid waives nothing (never hides a finding). */
function usableConfig(meta: RuleMeta, getConfig: () => unknown): Record<string, unknown> | undefined {
    try {
        const c = readConfig(meta, getConfig);
        return typeof c === "string" ? undefined : c;
    } catch {
        return undefined;
    }
}

/** The waiver hook's view of a per-resource evaluation: the policy's config and the resource itself. */
function resourceWaiving(meta: RuleMeta, args: ResourceValidationArgs): Waiving {
    const resource = resourceOf(args);
    return { config: () => usableConfig(meta, args.getConfig), target: (urn) => targetOf(resource, urn) };
}

/**
 * The waiver hook's view of a program-level evaluation: the policy's config, and a finding's resource found
 * by URN among the program's resources (indexed once, on the first finding, so that many findings on a large
 * program stay linear).
 */
function programWaiving(meta: RuleMeta, getConfig: () => unknown, resources: () => readonly { urn?: unknown }[] | undefined): Waiving {
    let byUrn: Map<unknown, { urn?: unknown }> | undefined;
    return {
        config: () => usableConfig(meta, getConfig),
        target: (urn) => {
            if (urn === undefined) return targetOf(undefined, urn);
            if (!byUrn) {
                byUrn = new Map();
                for (const r of resources() ?? []) if (!byUrn.has(r.urn)) byUrn.set(r.urn, r);
            }
            return targetOf(byUrn.get(urn) as Parameters<typeof targetOf>[0], urn);
        },
    };
}

function configProblem(meta: RuleMeta, problem: string): string {
    return `${meta.name} cannot evaluate this resource: its policy configuration is invalid: ${problem}. Fix the policy pack configuration.`;
}

/** What every fail-closed message of the wrappers says (tests look for it). */
export const COULD_NOT_EVALUATE = "could not evaluate this resource";

function failClosed(meta: RuleMeta): string {
    return (
        `${meta.name} ${COULD_NOT_EVALUATE} (unexpected input shape); ` +
        `the resource is reported so that a governance gate never passes by accident. Fix: check the manifest's fields.`
    );
}

function isFinding(f: unknown): f is string | Finding {
    return typeof f === "string" || (f !== null && typeof f === "object" && typeof (f as Finding).message === "string");
}

/**
 * Runs a rule and reports what it finds: the one fail-closed path of the pack. Whatever goes wrong
 * (reading an input or the config throws, the rule throws, returns something that is not a list of
 * findings, or a promise) is reported as one fail-closed violation (on `urn` when given), never thrown.
 */
function evaluate(meta: RuleMeta, reportViolation: ReportViolation, run: () => unknown, urn: string | undefined, waiving: Waiving): void {
    let findings: (string | Finding)[];
    let closed = false;
    try {
        const result = run();
        closed = !(Array.isArray(result) && result.every(isFinding));
        findings = closed ? [failClosed(meta)] : (result as (string | Finding)[]);
    } catch {
        closed = true;
        findings = [failClosed(meta)];
    }
    const config = waiving.config();
    for (const f of findings) {
        const at = typeof f === "string" ? urn : (f.urn ?? urn);
        let message = typeof f === "string" ? f : f.message;
        let waived = false;
        // The one waiver hook: a matching waiver marks the message and lowers the finding to advisory (never
        // drops it); see waivers.ts.
        if (config) {
            try {
                ({ message, waived } = waive(meta.name, config, waiving.target(at), message, closed));
            } catch {
                // a broken waiver never hides a finding: the message is reported as it is, at its level
            }
        }
        report(reportViolation, { message, urn: at, field: typeof f === "string" || typeof f.field !== "string" ? undefined : f.field, ...(waived ? { level: "advisory" as const } : {}) });
    }
}

function metaFields(meta: RuleMeta) {
    return {
        name: meta.name,
        description: meta.description,
        enforcementLevel: meta.enforcementLevel,
        severity: meta.severity,
        framework: FRAMEWORK,
        remediationSteps: meta.remediationSteps,
        ...(meta.url ? { url: meta.url } : {}),
        configSchema: configSchema(meta),
    };
}

/** The resource a per-resource evaluation is about, as rules read it. */
function resourceOf(args: ResourceValidationArgs): ResourceLike {
    return { type: args.type, name: args.name, urn: args.urn, props: args.props };
}

/** Runs a check with the policy's config, or reports the config's problem instead (the check never sees a bad config). */
function withConfig<F>(meta: RuleMeta, getConfig: () => unknown, check: (config: Record<string, unknown>) => (string | F)[]): (string | F)[] {
    const config = readConfig(meta, getConfig);
    return typeof config === "string" ? [configProblem(meta, config)] : check(config);
}

/** A `validateResource` that runs `run` on each resource through the one fail-closed path, with the resource's waivers. */
function perResource(meta: RuleMeta, run: (args: ResourceValidationArgs) => unknown): ResourceValidationPolicy["validateResource"] {
    return (args: ResourceValidationArgs, reportViolation: ReportViolation) => evaluate(meta, reportViolation, () => run(args), undefined, resourceWaiving(meta, args));
}

/** A per-resource rule over any resource (the rule decides which types it cares about). */
export function resourceRule(
    meta: RuleMeta,
    check: (resource: ResourceLike, config: Record<string, unknown>, ctx: RuleContext) => (string | Finding)[],
): ResourceValidationPolicy {
    return {
        ...metaFields(meta),
        validateResource: perResource(meta, (args) => withConfig(meta, args.getConfig, (config) => check(resourceOf(args), config, { production: settingsFor(args.urn) }))),
    };
}

/** Findings of the patched Stack that the unpatched one does not have (as a multiset of messages). */
function introduced(before: (string | Finding)[], after: (string | Finding)[]): (string | Finding)[] {
    const text = (f: string | Finding) => (typeof f === "string" ? f : f.message);
    const seen = new Map<string, number>();
    for (const f of before) seen.set(text(f), (seen.get(text(f)) ?? 0) + 1);
    return after.filter((f) => {
        const n = seen.get(text(f)) ?? 0;
        if (n > 0) seen.set(text(f), n - 1);
        return n === 0;
    });
}

/**
 * A rule over PKO Stacks. Stacks are judged per resource (`validateResource`); patches of Stacks
 * (`CustomResourcePatch`, type `...:StackPatch`) need the program to be joined to the Stack they patch,
 * so the same policy also has a program-level companion (`validateStack`) that judges each patch on the
 * merged Stack and reports, on the patch, what the patch introduces (findings of the Stack after the
 * patch that it did not have before). A patch of a Stack the program does not declare is judged on its
 * own fields with production unknown.
 */
export function stackRule(
    meta: RuleMeta,
    check: (view: StackView, config: Record<string, unknown>, ctx: RuleContext) => (string | Finding)[],
    fix?: SpecFix,
): ResourceValidationPolicy & StackValidationPolicy {
    const judge = (view: StackView, getConfig: () => unknown, ctx: RuleContext) => withConfig(meta, getConfig, (config) => check(view, config, ctx));
    return {
        ...metaFields(meta),
        ...(fix ? { remediateResource: remediation(meta, fix) } : {}),
        validateResource: perResource(meta, (args) => {
            const view = stackView(resourceOf(args));
            return view ? judge(view, args.getConfig, { production: settingsFor(args.urn) }) : [];
        }),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) => {
            let joined: JoinedPatch[] = [];
            let resources: ResourceLike[] = [];
            const waiving = programWaiving(meta, args.getConfig, () => resources);
            evaluate(
                meta,
                reportViolation,
                () => {
                    resources = programResources(args.resources);
                    joined = stackPatches(resources);
                    return [];
                },
                undefined,
                waiving,
            );
            if (joined.length === 0) return;
            const ctx = { production: settingsFor(programKey(resources.map((r) => r.urn))) };
            for (const j of joined) {
                evaluate(
                    meta,
                    reportViolation,
                    () => introduced(judge(j.before, args.getConfig, ctx), judge(j.after, args.getConfig, ctx)).map((f) => (typeof f === "string" ? f : f.message)),
                    j.patch.urn,
                    waiving,
                );
            }
        },
    };
}

/**
 * The `remediateResource` of a Stack rule: the Stack's properties with `fix`'s spec fields set, or undefined
 * (no change). Anything it cannot be sure of (not a Stack, an unusable config, a value unknown during
 * preview, any failure) changes nothing: the validation that follows then reports the finding, which the SDK
 * raises to mandatory at this level, so a failed fix never passes silently.
 */
function remediation(meta: RuleMeta, fix: SpecFix): (args: ResourceValidationArgs) => Record<string, unknown> | undefined {
    return (args) => {
        try {
            const view = stackView(resourceOf(args));
            const config = view ? readConfig(meta, args.getConfig) : undefined;
            if (!view || config === undefined || typeof config === "string") return undefined;
            const set = fix(view, config, { production: settingsFor(args.urn) });
            const props = args.props as Record<string, unknown>;
            const spec = props.spec;
            if (!set || Object.keys(set).length === 0 || spec === null || typeof spec !== "object" || Array.isArray(spec)) return undefined;
            return { ...props, spec: { ...(spec as Record<string, unknown>), ...set } };
        } catch {
            return undefined;
        }
    };
}

/** The program's resources as rules read them (the analyzer hands each stack policy its own list). */
function programResources(list: PolicyResource[] | undefined): ResourceLike[] {
    return (list ?? []).map((r: PolicyResource) => ({ type: r.type, name: r.name, urn: r.urn, props: r.props }));
}

/** A stack-level rule that sees every resource of the program. */
export function programRule(
    meta: RuleMeta,
    check: (resources: ResourceLike[], config: Record<string, unknown>, ctx: RuleContext) => Finding[],
): StackValidationPolicy {
    return {
        ...metaFields(meta),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) =>
            evaluate(
                meta,
                reportViolation,
                () =>
                    withConfig(meta, args.getConfig, (config) => {
                        const resources = programResources(args.resources);
                        return check(resources, config, { production: settingsFor(programKey(resources.map((r) => r.urn))) });
                    }),
                undefined,
                programWaiving(meta, args.getConfig, () => args.resources),
            ),
    };
}

/**
 * The settings policy: a policy whose config holds settings every rule shares. The analyzer calls it
 * first in every request (it is listed first); it publishes its settings for that request (`publish`,
 * keyed by the resource's URN or the program) and reports `problems` (invalid settings) on the
 * resources they concern.
 */
export function settingsRule<S>(
    meta: RuleMeta,
    publish: (key: string, config: Record<string, unknown> | string) => S,
    problems: (resource: ResourceLike, published: S) => string[],
): ResourceValidationPolicy & StackValidationPolicy {
    return {
        ...metaFields(meta),
        validateResource: perResource(meta, (args) => problems(resourceOf(args), publish(args.urn, readConfig(meta, args.getConfig)))),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) =>
            evaluate(
                meta,
                reportViolation,
                () => {
                    publish(programKey(programResources(args.resources).map((r) => r.urn)), readConfig(meta, args.getConfig));
                    return [];
                },
                undefined,
                NO_WAIVERS,
            ),
    };
}
