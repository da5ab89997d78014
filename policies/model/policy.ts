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
import { ProductionSource, SettingsState, classifyProduction, Production, programKeyOf } from "./production";
import { JoinedPatch, ResourceLike, StackView } from "./stack";
import { report } from "./report";
import { WAIVER_CONFIG, WaiverTarget, applyWaivers, mayWaive, targetOf } from "./waivers";
import { ExampleResource } from "./examples";
import { MessageFacts, encodeMessage, saysFailClosed } from "./message";
import { plainText } from "./prose";
import { Views, computedViews } from "./views";

export const FRAMEWORK: PolicyComplianceFramework = {
    name: "pko-guard",
    version: "1",
    reference: "https://github.com/pulumi/pulumi-kubernetes-operator",
    specification:
        "Governed PKO deployments: credentials from Secrets, least-privilege RBAC, production safety, no public S3 ACLs.",
};

/**
 * Metadata every pko-guard policy carries, in this order. Its prose is `about` alone: the SDK's `description`
 * and `remediationSteps` derive from `about.what` and `about.fix` (metaFields, prose.ts).
 */
export interface RuleMeta {
    name: string;
    enforcementLevel: EnforcementLevel;
    severity: Severity;
    url?: string;
    /** Extra JSON-schema properties for the policy's config (enforcementLevel is implicit). */
    config?: Record<string, object>;
    /** What the rule says about itself (the CLI, `check` and the config check derive everything from it). */
    about: RuleAbout;
}

/**
 * A rule's description of itself, as data next to its code. `pko-guard rules`, `explain` and `init`, the
 * config check (pattern settings, readers of the production settings) and `check`'s kind filter read it;
 * test/unit/meta.spec.ts fails when a rule lacks any of it.
 */
export interface RuleAbout {
    /**
     * What the rule checks, why it matters, and how to fix a finding (`pko-guard explain`): one paragraph each.
     * `what` is also the SDK's description and `fix` its remediation steps, as plain text (prose.ts): both say
     * it whole, in a few lines; details and examples go in `notes`.
     */
    what: string;
    why: string;
    fix: string;
    /** Further paragraphs for `explain` (details, when it fails closed, where findings are reported). */
    notes?: string[];
    /**
     * The kinds of resources the rule reads: Kubernetes kinds as `<group>/<Kind>` (the core group as `core`:
     * `core/Secret`, `pulumi.com/Stack`), other providers' resources by type token (`aws:s3/bucket:Bucket`).
     */
    reads: string[];
    /** Whether the rule reads the production classification (the settings of pko-guard-production). */
    readsProduction: boolean;
    /** The settings of its config that hold regular expressions (RE2, checked before any preview). */
    patternSettings: string[];
    /** A program the rule passes, as the resources the pack sees (shown by `explain`; a test runs it). */
    example: ExampleResource[];
}

/** What a built policy carries about itself: the rule's own description, and the config keys of its waivers. */
export interface DescribedRule {
    about: RuleAbout & { waiverKeys: string[] };
}

/**
 * A Stack rule's mechanical fix, run at the `remediate` enforcement level: the `spec` fields to set on a Stack
 * the rule would report (undefined: nothing to fix, or the fix is not certain). Only for fixes that cannot
 * deploy something harmful (a refresh before updates, a slower resync); never for what a person must decide
 * (branches and commits, credentials, RBAC). Only the Stack itself is remediated: the stack-level companion
 * that judges patches cannot remediate (the SDK runs stack policies at `remediate` as mandatory). A fix cannot
 * depend on the production settings: the SDK runs only `remediate`-level policies in its Remediate call, before
 * any Analyze, so the settings policy has published nothing for the resource yet (`ctx.production` says so).
 */
export type SpecFix = (
    view: StackView,
    config: Record<string, unknown>,
    ctx: RuleContext,
) => Record<string, unknown> | undefined;

/**
 * What a rule gets besides its own config: the pack-wide production settings for this request, and the views it
 * reads of the resources (views.ts: shared by the policies of one evaluation or analyzer request, else computed
 * anew).
 */
export interface RuleContext {
    production: SettingsState;
    views: Views;
}

/**
 * A rule as its module defines it (`export const rule = stackRule(...)`): its name, and `build`, which makes the
 * CrossGuard policy the pack serves. The pack builds every rule with its own production settings source
 * (policies/index.ts `buildPolicies`); each hook of the policy reads, from that source, the settings of the one
 * request it serves, and hands them to the rule as its context. A rule never reads settings any other way.
 */
export interface RuleDefinition<P> {
    readonly name: string;
    readonly build: (settings: ProductionSource) => P & DescribedRule;
}

/** The settings policy as its module defines it: built with the pack's settings sink, which it writes to. */
export interface SettingsDefinition<P, Sink> {
    readonly name: string;
    readonly build: (sink: Sink) => P & DescribedRule;
}

/** The pack's one production classification of a Stack, as this request's settings say. */
export function classify(view: StackView, ctx: RuleContext): Production {
    return classifyProduction(view, ctx.production);
}

/** A violation message, optionally attached to another resource's URN (stack policies). */
export interface RuleFinding {
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

/** A finding as in-process evaluators get it: its facts as data (the engine gets them encoded in the message). */
export interface ReportedFinding extends MessageFacts {
    urn?: string;
    field?: string;
}

/**
 * A violation reporter that also takes findings as data. In-process evaluators (`check`, the manifest leg)
 * pass one with `finding`; the analyzer's plain `ReportViolation` gets the encoded message and the URN.
 */
export type DataReport = ReportViolation & {
    finding?: (f: ReportedFinding) => void;
};

/** The properties of a policy's config: its own, and the per-resource waivers every policy accepts. */
function configProperties(meta: RuleMeta): Record<string, object> {
    return { ...meta.config, ...WAIVER_CONFIG };
}

/** The names of a policy's config properties (read on every call: computed once per policy). */
const configNames = new WeakMap<RuleMeta, string[]>();

function configPropertyNames(meta: RuleMeta): string[] {
    let names = configNames.get(meta);
    if (names === undefined) {
        names = Object.keys(configProperties(meta));
        configNames.set(meta, names);
    }
    return names;
}

/**
 * The policy's config schema. Every policy has one, closed (`additionalProperties: false`), so that a
 * misspelt property is rejected: by the CLI/harness config check, by the pack at run time (the engine
 * only validates the listed properties), and by tools that read the full schema.
 */
function configSchema(meta: RuleMeta): PolicyConfigSchema {
    return {
        properties: configProperties(meta) as PolicyConfigSchema["properties"],
        additionalProperties: false,
    } as PolicyConfigSchema;
}

/**
 * The policy's config as the analyzer hands it over, or a message part saying why it cannot be used.
 * Reading it may throw (a broken analyzer): that propagates to `evaluate`, which fails closed.
 */
function readConfig(meta: RuleMeta, getConfig: () => unknown): Record<string, unknown> | string {
    const c = getConfig();
    if (c === null || typeof c !== "object" || Array.isArray(c)) return "its configuration is not an object";
    const unknown = unknownProperty(meta.name, c as Record<string, unknown>, configPropertyNames(meta));
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
function programWaiving(
    meta: RuleMeta,
    getConfig: () => unknown,
    resources: () => readonly { urn?: unknown }[] | undefined,
): Waiving {
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

function failClosed(meta: RuleMeta, error?: unknown): string {
    // A rule that throws has a bug (rules handle every input): say so, by the error's kind only (its message
    // may quote the input); PKO_GUARD_DEBUG=1 prints the error itself.
    const why =
        error === undefined
            ? "unexpected input shape"
            : `the rule failed on this input: ${errorKind(error)}; PKO_GUARD_DEBUG=1 prints its stack`;
    return `${meta.name} ${COULD_NOT_EVALUATE} (${why}); the resource is reported so that a governance gate never passes by accident. Fix: check the manifest's fields.`;
}

function errorKind(e: unknown): string {
    return e instanceof Error && /^[A-Za-z]{1,40}$/.test(e.name) ? e.name : "error";
}

/** Under PKO_GUARD_DEBUG=1, an error that is a bug (a rule's, a waiver's) is printed: its first line and stack. */
function debugError(what: string, e: unknown): void {
    if (!process.env.PKO_GUARD_DEBUG) return;
    const first = String(e instanceof Error ? e.message : e).split("\n")[0];
    process.stderr.write(`pko-guard: ${what}: ${first}\n${e instanceof Error ? (e.stack ?? "") : ""}\n`);
}

function isFinding(f: unknown): f is string | RuleFinding {
    return (
        typeof f === "string" || (f !== null && typeof f === "object" && typeof (f as RuleFinding).message === "string")
    );
}

/**
 * Runs a rule and reports what it finds: the one fail-closed path of the pack. Whatever goes wrong
 * (reading an input or the config throws, the rule throws, returns something that is not a list of
 * findings, or a promise) is reported as one fail-closed violation (on `urn` when given), never thrown.
 */
function evaluate(
    meta: RuleMeta,
    reportViolation: ReportViolation,
    run: () => unknown,
    urn: string | undefined,
    waivingOf: () => Waiving,
): void {
    let findings: (string | RuleFinding)[];
    let closed = false;
    try {
        const result = run();
        closed = !(Array.isArray(result) && result.every(isFinding));
        findings = closed ? [failClosed(meta)] : (result as (string | RuleFinding)[]);
    } catch (e) {
        closed = true;
        findings = [failClosed(meta, e)];
        debugError(`${meta.name} threw`, e);
    }
    // Nothing found (the common case): the waiver hook and its config are not needed.
    if (findings.length === 0) return;
    const asData = (reportViolation as DataReport).finding;
    const waiving = waivingOf();
    const config = waiving.config();
    for (const f of findings) {
        const at = typeof f === "string" ? urn : (f.urn ?? urn);
        const field = typeof f === "string" || typeof f.field !== "string" ? undefined : f.field;
        let facts: MessageFacts = { text: typeof f === "string" ? f : f.message, failClosed: false };
        facts.failClosed = closed || saysFailClosed(facts.text);
        // The one waiver hook: a matching waiver marks the finding waived (never drops it); see waivers.ts.
        if (config) {
            try {
                // A config without waivers waives nothing: the finding's resource is not looked up.
                if (mayWaive(config))
                    facts = {
                        ...facts,
                        ...applyWaivers(meta.name, config, waiving.target(at), facts.text, facts.failClosed),
                    };
            } catch (e) {
                // A broken waiver never hides a finding, and is never silent: the finding says its waivers failed.
                facts = {
                    ...facts,
                    text: `${facts.text} (its waivers could not be checked: ${errorKind(e)}; the finding is not waived)`,
                };
                debugError(`${meta.name}: checking the waivers threw`, e);
            }
        }
        if (typeof asData === "function") {
            const data: ReportedFinding = { ...facts };
            if (at !== undefined) data.urn = at;
            if (field !== undefined) data.field = field;
            asData(data);
        }
        // Through the engine: the encoded message, and a waived finding at its true level, advisory (report.ts).
        else
            report(reportViolation, {
                message: encodeMessage(facts),
                urn: at,
                ...(facts.waiver ? { level: "advisory" as const } : {}),
            });
    }
}

function metaFields(meta: RuleMeta) {
    return {
        name: meta.name,
        description: plainText(meta.about.what),
        enforcementLevel: meta.enforcementLevel,
        severity: meta.severity,
        framework: FRAMEWORK,
        remediationSteps: plainText(meta.about.fix),
        ...(meta.url ? { url: meta.url } : {}),
        configSchema: configSchema(meta),
        about: { ...meta.about, waiverKeys: Object.keys(WAIVER_CONFIG) },
    };
}

/**
 * The SDK's arguments as the evaluation seam extends them (evaluation/request-cache.ts: the pack's policies in the
 * analyzer, and the in-process evaluator): with the views every policy of one request reads. A hook called without
 * them (a policy on its own) computes its own.
 */
export interface WithViews {
    views: Views;
}

function viewsOf(args: object): Views {
    return (args as Partial<WithViews>).views ?? computedViews;
}

/** The resource a per-resource evaluation is about, as rules read it. */
function resourceOf(args: ResourceValidationArgs): ResourceLike {
    return { type: args.type, name: args.name, urn: args.urn, props: args.props };
}

/** Runs a check with the policy's config, or reports the config's problem instead (the check never sees a bad config). */
function withConfig<F>(
    meta: RuleMeta,
    getConfig: () => unknown,
    check: (config: Record<string, unknown>) => (string | F)[],
): (string | F)[] {
    const config = readConfig(meta, getConfig);
    return typeof config === "string" ? [configProblem(meta, config)] : check(config);
}

/** A `validateResource` that runs `run` on each resource through the one fail-closed path, with the resource's waivers. */
function perResource(
    meta: RuleMeta,
    run: (args: ResourceValidationArgs) => unknown,
): (args: ResourceValidationArgs, reportViolation: ReportViolation) => void {
    return (args: ResourceValidationArgs, reportViolation: ReportViolation) =>
        evaluate(
            meta,
            reportViolation,
            () => run(args),
            undefined,
            () => resourceWaiving(meta, args),
        );
}

/** A per-resource rule over any resource (the rule decides which types it cares about). */
export function resourceRule(
    meta: RuleMeta,
    check: (resource: ResourceLike, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
): RuleDefinition<ResourceValidationPolicy> {
    return { name: meta.name, build: (settings) => resourcePolicy(meta, check, settings) };
}

function resourcePolicy(
    meta: RuleMeta,
    check: (resource: ResourceLike, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
    settings: ProductionSource,
): ResourceValidationPolicy & DescribedRule {
    return {
        ...metaFields(meta),
        validateResource: perResource(meta, (args) =>
            withConfig(meta, args.getConfig, (config) =>
                check(resourceOf(args), config, { production: settings.production(args.urn), views: viewsOf(args) }),
            ),
        ),
    };
}

/** Findings of the patched Stack that the unpatched one does not have (as a multiset of messages). */
function introduced(before: (string | RuleFinding)[], after: (string | RuleFinding)[]): (string | RuleFinding)[] {
    const text = (f: string | RuleFinding) => (typeof f === "string" ? f : f.message);
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
    check: (view: StackView, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
    fix?: SpecFix,
): RuleDefinition<ResourceValidationPolicy & StackValidationPolicy> {
    return { name: meta.name, build: (settings) => stackPolicy(meta, check, fix, settings) };
}

function stackPolicy(
    meta: RuleMeta,
    check: (view: StackView, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
    fix: SpecFix | undefined,
    settings: ProductionSource,
): ResourceValidationPolicy & StackValidationPolicy & DescribedRule {
    const judge = (view: StackView, getConfig: () => unknown, ctx: RuleContext) =>
        withConfig(meta, getConfig, (config) => check(view, config, ctx));
    const hooks = {
        validateResource: perResource(meta, (args) => {
            const views = viewsOf(args);
            const view = views.view(resourceOf(args), "Stack");
            return view ? judge(view, args.getConfig, { production: settings.production(args.urn), views }) : [];
        }),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) => {
            let joined: JoinedPatch[] = [];
            let resources: ResourceLike[] = [];
            // Built on the first finding only (most programs have none here); then shared by the patches' evaluations.
            let waiving: Waiving | undefined;
            const waivingOf = () => (waiving ??= programWaiving(meta, args.getConfig, () => resources));
            let key: string | undefined;
            const views = viewsOf(args);
            evaluate(
                meta,
                reportViolation,
                () => {
                    resources = programResources(args.resources);
                    key = programKeyOf(resources);
                    joined = views.stackPatches(resources);
                    return [];
                },
                undefined,
                waivingOf,
            );
            if (joined.length === 0) return;
            const ctx = { production: settings.production(key), views };
            for (const j of joined) {
                evaluate(
                    meta,
                    reportViolation,
                    () =>
                        introduced(judge(j.before, args.getConfig, ctx), judge(j.after, args.getConfig, ctx)).map(
                            (f) => (typeof f === "string" ? f : f.message),
                        ),
                    j.patch.urn,
                    waivingOf,
                );
            }
        },
    };
    return { ...metaFields(meta), ...(fix ? { remediateResource: remediation(meta, fix, settings) } : {}), ...hooks };
}

/**
 * The `remediateResource` of a Stack rule: the Stack's properties with `fix`'s spec fields set, or undefined
 * (no change). Anything it cannot be sure of (not a Stack, an unusable config, a value unknown during
 * preview, any failure) changes nothing: the validation that follows then reports the finding, which the SDK
 * raises to mandatory at this level, so a failed fix never passes silently.
 */
function remediation(
    meta: RuleMeta,
    fix: SpecFix,
    settings: ProductionSource,
): (args: ResourceValidationArgs) => Record<string, unknown> | undefined {
    return (args) => {
        try {
            const views = viewsOf(args);
            const view = views.view(resourceOf(args), "Stack");
            const config = view ? readConfig(meta, args.getConfig) : undefined;
            if (!view || config === undefined || typeof config === "string") return undefined;
            const set = fix(view, config, { production: settings.production(args.urn), views });
            const props = args.props as Record<string, unknown>;
            const spec = props.spec;
            if (
                !set ||
                Object.keys(set).length === 0 ||
                spec === null ||
                typeof spec !== "object" ||
                Array.isArray(spec)
            )
                return undefined;
            return { ...props, spec: { ...(spec as Record<string, unknown>), ...set } };
        } catch {
            return undefined;
        }
    };
}

/**
 * The program's resources as rules read them (type, name, URN, props: the analyzer hands each stack policy
 * its own list, which rules only read).
 */
function programResources(list: PolicyResource[] | undefined): ResourceLike[] {
    return list ?? [];
}

/** A stack-level rule that sees every resource of the program. */
export function programRule(
    meta: RuleMeta,
    check: (resources: ResourceLike[], config: Record<string, unknown>, ctx: RuleContext) => RuleFinding[],
): RuleDefinition<StackValidationPolicy> {
    return { name: meta.name, build: (settings) => programPolicy(meta, check, settings) };
}

function programPolicy(
    meta: RuleMeta,
    check: (resources: ResourceLike[], config: Record<string, unknown>, ctx: RuleContext) => RuleFinding[],
    settings: ProductionSource,
): StackValidationPolicy & DescribedRule {
    return {
        ...metaFields(meta),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) =>
            evaluate(
                meta,
                reportViolation,
                () =>
                    withConfig(meta, args.getConfig, (config) => {
                        const resources = programResources(args.resources);
                        const key = programKeyOf(resources);
                        return check(resources, config, { production: settings.production(key), views: viewsOf(args) });
                    }),
                undefined,
                () => programWaiving(meta, args.getConfig, () => args.resources),
            ),
    };
}

/**
 * The settings policy: a policy whose config holds settings every rule shares. The pack places it first
 * (policies/index.ts), so the analyzer calls it first in every request; it publishes its settings for that
 * request to the pack's sink (`publish`, keyed by the resource's URN or the program) and reports `problems`
 * (invalid settings) on the resources they concern.
 */
export function settingsRule<S, Sink>(
    meta: RuleMeta,
    publish: (sink: Sink, key: string, config: Record<string, unknown> | string) => S,
    problems: (resource: ResourceLike, published: S) => string[],
): SettingsDefinition<ResourceValidationPolicy & StackValidationPolicy, Sink> {
    return {
        name: meta.name,
        build: (sink) => settingsPolicy(meta, (key, config) => publish(sink, key, config), problems),
    };
}

function settingsPolicy<S>(
    meta: RuleMeta,
    publish: (key: string, config: Record<string, unknown> | string) => S,
    problems: (resource: ResourceLike, published: S) => string[],
): ResourceValidationPolicy & StackValidationPolicy & DescribedRule {
    const perResourceRule = perResource(meta, (args) =>
        problems(resourceOf(args), publish(args.urn, readConfig(meta, args.getConfig))),
    );
    return {
        ...metaFields(meta),
        validateResource: perResourceRule,
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) =>
            evaluate(
                meta,
                reportViolation,
                () => {
                    const key = programKeyOf(programResources(args.resources));
                    publish(key, readConfig(meta, args.getConfig));
                    return [];
                },
                undefined,
                () => NO_WAIVERS,
            ),
    };
}
