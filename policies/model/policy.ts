/**
 * Builders that turn a pure rule (a function from a normalized view to messages) into a CrossGuard
 * policy object that can never throw: every input the analyzer can send is turned into plain data
 * first, and an unexpected failure inside a rule becomes a clear violation (fail closed) instead of
 * a gRPC error or, worse, a silently skipped advisory.
 */
import {
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
} from "@pulumi/policy";
import { ProductionSource, SettingsState, classifyInContext, Production, programKeyOf } from "./production";
import { NO_REVIEW, ReviewContext, ScopeContext, sameStack } from "./review";
import { JoinedPatch, ResourceLike, StackView } from "./stack";
import { DescribedRule, RuleMeta, metaFields, readConfig } from "./rule-meta";
import {
    RuleFinding,
    Waiving,
    NO_WAIVERS,
    configProblem,
    evaluate,
    programWaiving,
    resourceOf,
    resourceWaiving,
} from "./fail-closed";
import { Views, computedViews } from "./views";

// What rules and the layers above read of a rule's metadata and findings, from the modules that define them.
export { FRAMEWORK } from "./rule-meta";
export type { RuleAbout, DescribedRule, RuleMeta } from "./rule-meta";
export { COULD_NOT_EVALUATE } from "./fail-closed";
export type { DataReport, ReportedFinding, RuleFinding } from "./fail-closed";

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
 * What a rule gets besides its own config: the pack-wide production settings for this request, the views it
 * reads of the resources (views.ts: shared by the policies of one evaluation or analyzer request, else computed
 * anew), and what the evaluation knows besides the resources (review.ts: the cluster door's earlier versions,
 * other Stacks and requester; nothing in a preview).
 */
export interface RuleContext {
    production: SettingsState;
    views: Views;
    review: ReviewContext;
    /** The scope a program-level hook judges, when the evaluation has several (review.ts); else absent. */
    scope?: ScopeContext;
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

/**
 * The pack's one production classification of a Stack, as this request's settings say, with the context the
 * evaluation has (production.ts `classifyInContext`): its earlier version, and the other Stacks of its stack.
 */
export function classify(view: StackView, ctx: RuleContext): Production {
    const { review, views } = ctx;
    const before = view.urn === undefined ? undefined : review.earlier.get(view.urn);
    const name = view.stack;
    const peers: StackView[] = [];
    if (typeof name === "string")
        for (const r of review.stacksNaming(name)) {
            if (r.urn !== undefined && r.urn === view.urn) continue;
            const peer = views.view(r, "Stack");
            if (peer && typeof peer.stack === "string" && sameStack(peer.stack, name)) peers.push(peer);
        }
    if (!before && peers.length === 0) return classifyInContext(view, ctx.production, NO_PEERS);
    return classifyInContext(view, ctx.production, {
        earlier: before ? views.view(before, "Stack") : undefined,
        peers,
    });
}

const NO_PEERS = { peers: [] };

/**
 * The SDK's arguments as the evaluation seam extends them (evaluation/request-cache.ts: the pack's policies in the
 * analyzer, and the in-process evaluator): with the views every policy of one request reads. A hook called without
 * them (a policy on its own) computes its own.
 */
export interface WithViews {
    views: Views;
    /** What the evaluation knows besides the resources (review.ts); none when absent. */
    review?: ReviewContext;
    /** The scope of a stack hook's call among several (review.ts); none when absent. */
    scope?: ScopeContext;
}

function viewsOf(args: object): Views {
    return (args as Partial<WithViews>).views ?? computedViews;
}

function reviewOf(args: object): ReviewContext {
    return (args as Partial<WithViews>).review ?? NO_REVIEW;
}

/** A rule's context for one hook call: the request's settings, and the views and review its arguments carry. */
function contextOf(args: object, production: SettingsState): RuleContext {
    const scope = (args as Partial<WithViews>).scope;
    return scope
        ? { production, views: viewsOf(args), review: reviewOf(args), scope }
        : { production, views: viewsOf(args), review: reviewOf(args) };
}

/**
 * A policy's SDK fields and `about`, derived from its metadata once, where the rule is defined: the pack is built
 * anew for every in-process evaluation (policies/index.ts), and the fields never differ between builds.
 */
type MetaFields = ReturnType<typeof metaFields>;

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
    const fields = metaFields(meta);
    return { name: meta.name, build: (settings) => resourcePolicy(meta, fields, check, settings) };
}

function resourcePolicy(
    meta: RuleMeta,
    fields: MetaFields,
    check: (resource: ResourceLike, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
    settings: ProductionSource,
): ResourceValidationPolicy & DescribedRule {
    return {
        ...fields,
        validateResource: perResource(meta, (args) =>
            withConfig(meta, args.getConfig, (config) =>
                check(resourceOf(args), config, contextOf(args, settings.production(args.urn))),
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
    program?: ProgramCheck,
): RuleDefinition<ResourceValidationPolicy & StackValidationPolicy> {
    const fields = metaFields(meta);
    return { name: meta.name, build: (settings) => stackPolicy(meta, fields, check, fix, settings, program) };
}

/**
 * What a Stack rule judges of a Stack that only the program's other resources decide (the Flux source a Stack's
 * fluxSource names, say): run in the stack-level hook, its findings on the Stacks they are about (`urn`).
 */
export type ProgramCheck = (
    resources: ResourceLike[],
    config: Record<string, unknown>,
    ctx: RuleContext,
) => RuleFinding[];

function stackPolicy(
    meta: RuleMeta,
    fields: MetaFields,
    check: (view: StackView, config: Record<string, unknown>, ctx: RuleContext) => (string | RuleFinding)[],
    fix: SpecFix | undefined,
    settings: ProductionSource,
    program?: ProgramCheck,
): ResourceValidationPolicy & StackValidationPolicy & DescribedRule {
    const judge = (view: StackView, getConfig: () => unknown, ctx: RuleContext) =>
        withConfig(meta, getConfig, (config) => check(view, config, ctx));
    const hooks = {
        validateResource: perResource(meta, (args) => {
            const views = viewsOf(args);
            const view = views.view(resourceOf(args), "Stack");
            return view ? judge(view, args.getConfig, contextOf(args, settings.production(args.urn))) : [];
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
            const ctx = contextOf(args, settings.production(key));
            if (program)
                evaluate(
                    meta,
                    reportViolation,
                    () => withConfig(meta, args.getConfig, (config) => program(resources, config, ctx)),
                    undefined,
                    waivingOf,
                );
            if (joined.length === 0) return;
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
    return { ...fields, ...(fix ? { remediateResource: remediation(meta, fix, settings) } : {}), ...hooks };
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
            const set = fix(view, config, contextOf(args, settings.production(args.urn)));
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
    const fields = metaFields(meta);
    return { name: meta.name, build: (settings) => programPolicy(meta, fields, check, settings) };
}

function programPolicy(
    meta: RuleMeta,
    fields: MetaFields,
    check: (resources: ResourceLike[], config: Record<string, unknown>, ctx: RuleContext) => RuleFinding[],
    settings: ProductionSource,
): StackValidationPolicy & DescribedRule {
    return {
        ...fields,
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) =>
            evaluate(
                meta,
                reportViolation,
                () =>
                    withConfig(meta, args.getConfig, (config) => {
                        const resources = programResources(args.resources);
                        const key = programKeyOf(resources);
                        return check(resources, config, contextOf(args, settings.production(key)));
                    }),
                undefined,
                () => programWaiving(meta, args.getConfig, () => args.resources),
            ),
    };
}

/** What the settings policy sees of a resource besides the settings it publishes: the views and the review. */
export type SettingsSight = Omit<RuleContext, "production">;

/**
 * The settings policy: a policy whose config holds settings every rule shares. The pack places it first
 * (policies/index.ts), so the analyzer calls it first in every request; it publishes its settings for that
 * request to the pack's sink (`publish`, keyed by the resource's URN or the program) and reports `problems`
 * (invalid settings) on the resources they concern.
 */
export function settingsRule<S, Sink>(
    meta: RuleMeta,
    publish: (sink: Sink, key: string, config: Record<string, unknown> | string) => S,
    problems: (resource: ResourceLike, published: S, seen: SettingsSight) => (string | RuleFinding)[],
): SettingsDefinition<ResourceValidationPolicy & StackValidationPolicy, Sink> {
    const fields = metaFields(meta);
    return {
        name: meta.name,
        build: (sink) => settingsPolicy(meta, fields, (key, config) => publish(sink, key, config), problems),
    };
}

function settingsPolicy<S>(
    meta: RuleMeta,
    fields: MetaFields,
    publish: (key: string, config: Record<string, unknown> | string) => S,
    problems: (resource: ResourceLike, published: S, seen: SettingsSight) => (string | RuleFinding)[],
): ResourceValidationPolicy & StackValidationPolicy & DescribedRule {
    const perResourceRule = perResource(meta, (args) =>
        problems(resourceOf(args), publish(args.urn, readConfig(meta, args.getConfig)), {
            views: viewsOf(args),
            review: reviewOf(args),
        }),
    );
    return {
        ...fields,
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
