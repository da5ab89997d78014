/**
 * In-process evaluation of the pack's own policy objects (a pack built by policies/index.ts `buildPolicies`),
 * shared by `pko-guard check` and the harness's manifest leg. Each policy gets the arguments and configuration the
 * analyzer would build (Struct round trip, ./struct.ts; the SDK's unknown-checking proxy; reconcilePackConfig);
 * disabled policies are skipped and `remediate` reports as `mandatory`, as the analyzer does.
 */
import { Policy, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { Rule, buildPolicies } from "../policies/index";
import { MessageFacts, decodeMessage, encodeMessage } from "../policies/model/message";
import { DataReport } from "../policies/model/policy";
import { SETTINGS_POLICY } from "../policies/model/production";
import { Level, Row, normalizeMessage, row } from "./rows";
import { PackConfig } from "./pack-config";
import { policySdk } from "./policy-sdk";
import { wireCopy } from "./struct";
import { evaluationViews, sharingViews } from "./request-cache";
import { NO_REVIEW, ReviewContext, ScopeContext } from "../policies/model/review";
import { Views } from "../policies/model/views";
import { ResourceLike } from "../policies/model/stack";

/** A resource to evaluate: what the engine would send the analyzer for it. */
export interface EvalResource {
    type: string;
    name: string;
    urn: string;
    /** Plain JSON properties (a manifest object, or a program's inputs in wire form). */
    props: Record<string, unknown>;
    /**
     * True when `props` is never mutated (a live object as the cluster cache holds it): its deserialized copy
     * is then made once and reused by every evaluation that judges the same object.
     */
    immutable?: boolean;
    /**
     * The scope whose stack-level (cross-object) rules see it: resources of one scope are one program to those
     * rules, as if each scope were its own preview (`check`: the cluster an object lands in). Unset: one scope.
     */
    scope?: string;
    /** The scope as messages name it (`in cluster "..."`); given when resources have a `scope`. */
    scopeName?: string;
}

/**
 * A violation row as the analyzer would give it (its message encoded as the engine carries it), with the
 * finding's facts as data (text, waiver, fail-closed) and the field the rule named when it gave one.
 */
export interface EvalRow extends Row {
    facts: MessageFacts;
    field?: string;
}

function isResourcePolicy<P extends Policy>(p: P): p is P & ResourceValidationPolicy {
    const v = (p as { validateResource?: unknown }).validateResource;
    return typeof v === "function" || Array.isArray(v);
}

function isStackPolicy<P extends Policy>(p: P): p is P & StackValidationPolicy {
    return typeof (p as { validateStack?: unknown }).validateStack === "function";
}

/**
 * What a policy's `props` is in `pulumi preview`: the SDK's deserialization of the wire Struct (./struct.ts), proxied.
 * The deserializer copies plain data as it is, so it runs only on a copy that holds a special value (`special`).
 */
export function analyzerProps(props: Record<string, unknown>): Record<string, unknown> {
    const { wire, special } = wireCopy(props);
    const { unknownCheckingProxy, deserializeProperties } = policySdk();
    return unknownCheckingProxy(special ? deserializeProperties({ toJavaScript: () => wire }, false) : wire);
}

/** Deserialized copies of immutable props, kept while the props object lives. */
const reused = new WeakMap<object, Record<string, unknown>>();

/**
 * One deserialized copy per resource, read by every policy (so what the rules derive from it, which depends on the
 * value alone, is derived once: `views`); for immutable props, one copy for every evaluation.
 */
function sharedProps(r: EvalResource): Record<string, unknown> {
    const known = r.immutable ? reused.get(r.props) : undefined;
    if (known) return known;
    const copy = analyzerProps(r.props);
    if (r.immutable) reused.set(r.props, copy);
    return copy;
}

/**
 * What the rules derive from the resources, shared by every policy of an evaluation (./request-cache.ts): kept
 * by the identity of the copies above and of the evaluation's resource list, so the derived data of an immutable
 * copy serves every evaluation that reads it, and nothing else outlives its evaluation. Every hook gets them in
 * its arguments (policies/model/policy.ts `WithViews`).
 */
const views = sharingViews();

/**
 * The views of an evaluation: the shared ones when an immutable copy may be read again by a later evaluation;
 * else the evaluation's own, kept in strong maps and dropped with it (its copies are its own, so no other
 * evaluation could find what is derived from them, and weak maps of every object of a large run cost the
 * collector).
 */
function viewsOf(resources: EvalResource[]): Views {
    return resources.some((r) => r.immutable === true) ? views : evaluationViews();
}

function levelOf(config: PackConfig, p: Policy): Level {
    const level = config[p.name]?.enforcementLevel ?? p.enforcementLevel ?? "advisory";
    return level === "remediate" ? "mandatory" : level;
}

/**
 * Which hooks an evaluation runs: both (the default), or only the per-resource or only the stack-level ones.
 * A resource hook's findings depend on its resource and the config alone, so `check` may run them over parts of
 * a repository in parallel and the stack hooks once over all of it (gitops/manifests/parallel.ts); the rows of
 * `resource` then `stack` over the same resources, sorted, are those of `all`.
 */
export type Hooks = "all" | "resource" | "stack";

/**
 * Evaluates every enabled policy over the resources (each resource policy per resource, each stack policy
 * once over all of them) with a reconciled pack config; returns rows in the analyzer's shape. `only` limits
 * the run to the named policies (admission re-evaluates the cluster as it was for those alone). `review` is what
 * the evaluation knows besides the resources (policies/model/review.ts: the cluster door's earlier versions, other
 * Stacks and requester), handed to every hook with the views; none by default, as in a preview.
 */
export function evaluatePack(
    resources: EvalResource[],
    config: PackConfig,
    only?: ReadonlySet<string>,
    hooks: Hooks = "all",
    review: ReviewContext = NO_REVIEW,
): EvalRow[] {
    // One evaluation is one request, of a pack of its own: its settings channel starts empty and is dropped
    // with it, so no evaluation reads the settings another published (policies/index.ts).
    const rows: EvalRow[] = [];
    evaluateRequest(buildPolicies(), resources, config, only, hooks, review, { resource: rows, stack: rows });
    return rows;
}

/** A run's rows by hook kind. */
export interface RowsByHook {
    resource: EvalRow[];
    stack: EvalRow[];
}

/**
 * The part of a run split over threads that stays on this one: the resource hooks over the first `first` of
 * `resources` and the stack hooks over all of them, in one request, so that each resource's wire copy and views
 * are made once rather than once for each kind of hook; the rows of each kind apart.
 */
export function evaluateFirstPart(resources: EvalResource[], config: PackConfig, first: number): RowsByHook {
    const out: RowsByHook = { resource: [], stack: [] };
    evaluateRequest(buildPolicies(), resources, config, undefined, "all", NO_REVIEW, out, first);
    return out;
}

function evaluateRequest(
    policies: Rule[],
    resources: EvalResource[],
    config: PackConfig,
    only: ReadonlySet<string> | undefined,
    hooks: Hooks,
    review: ReviewContext,
    out: RowsByHook,
    resourceCount = resources.length,
): void {
    const request = analyzerRequest(resources, review);
    // A filtered run still runs the settings policy: it publishes this request's production settings, which
    // the rules read (without it every Stack's classification would be unknown in a filtered run).
    const runs = only && new Set([...only, SETTINGS_POLICY]);
    for (const p of policies) {
        if (runs && !runs.has(p.name)) continue;
        const level = levelOf(config, p);
        if (level === "disabled") continue;
        const properties = config[p.name]?.properties ?? {};
        if (hooks !== "stack" && isResourcePolicy(p))
            runResourceHooks(p, request, policyRun(p, level, properties, out.resource), resourceCount);
        if (hooks !== "resource" && isStackPolicy(p))
            runStackHook(p, request, policyRun(p, level, properties, out.stack));
    }
}

/** What the SDK does not use in pko-guard's hooks, the same for every call. */
const NO_OPTS = { protect: false, ignoreChanges: [], aliases: [], customTimeouts: {}, additionalSecretOutputs: [] };
const isType = () => false;
const asType = () => undefined;

/** One request as the analyzer hands it to the policies: each resource's arguments, one list a scope for the stack hooks. */
interface AnalyzerRequest {
    args: { type: string; name: string; urn: string; props: Record<string, unknown>; opts: typeof NO_OPTS }[];
    /** The resources of each scope: one program to the stack hooks (EvalResource.scope), with its name. */
    stackScopes: { name?: string; resources: object[] }[];
    review: ReviewContext;
    views: Views;
}

function analyzerRequest(resources: EvalResource[], review: ReviewContext): AnalyzerRequest {
    const args = resources.map((r) => ({
        type: r.type,
        name: r.name,
        urn: r.urn,
        props: sharedProps(r),
        opts: NO_OPTS,
    }));
    // One list a scope for every stack policy, as one AnalyzeStack request would give them.
    const scopes = new Map<string | undefined, { name?: string; resources: object[] }>();
    args.forEach((a, i) => {
        const stackResource = {
            type: a.type,
            name: a.name,
            urn: a.urn,
            props: a.props,
            opts: a.opts,
            isType,
            asType,
            dependencies: [],
            propertyDependencies: {},
        };
        const scope = resources[i].scope;
        const list = scopes.get(scope);
        if (list) list.resources.push(stackResource);
        else scopes.set(scope, { name: resources[i].scopeName, resources: [stackResource] });
    });
    return {
        args,
        stackScopes: scopes.size > 0 ? [...scopes.values()] : [{ resources: [] }],
        review,
        views: viewsOf(resources),
    };
}

/** One policy's run: its config, how it reports into `rows`, and the analyzer's handling of what its hooks throw. */
interface PolicyRun {
    getConfig: <T>() => T;
    notApplicable: (reason?: string) => never;
    /** A reporter whose findings without a URN are about `fallbackUrn()` (policies report synchronously). */
    report: (fallbackUrn: () => string) => DataReport;
    /** Runs a hook about `urn` as the analyzer does. */
    guard: (urn: string, run: () => unknown) => void;
}

function policyRun(p: Rule, level: Level, properties: Record<string, unknown>, rows: EvalRow[]): PolicyRun {
    const push = rowPusher(p, level, rows);
    return {
        getConfig: <T>() => properties as T,
        notApplicable: (reason?: string) => {
            throw Object.assign(new Error(reason ?? "not applicable"), { notApplicable: true });
        },
        report: (fallbackUrn) => {
            const out = ((message: string, urn?: string) =>
                push(
                    decodeMessage(normalizeMessage(message, p.description)),
                    urn ?? fallbackUrn(),
                    undefined,
                )) as DataReport;
            out.finding = (f) =>
                push(
                    { text: f.text, failClosed: f.failClosed, ...(f.waiver ? { waiver: f.waiver } : {}) },
                    f.urn ?? fallbackUrn(),
                    f.field,
                );
            return out;
        },
        guard: (urn, run) => guarded(push, urn, run),
    };
}

type PushRow = (facts: MessageFacts, urn: string, field: string | undefined, at?: Level) => void;

/**
 * Adds a policy's finding to `rows`; a waived finding is at its true level, advisory, as the pack reports it through
 * the engine (report.ts).
 */
function rowPusher(p: Rule, level: Level, rows: EvalRow[]): PushRow {
    return (facts, urn, field, at = facts.waiver ? "advisory" : level) => {
        // Built by assignment, not as a spread literal: support/shapes.ts.
        const r = row(p.name, urn, at, normalizeMessage(encodeMessage(facts), p.description)) as EvalRow;
        r.facts = facts;
        if (field !== undefined) r.field = field;
        rows.push(r);
    };
}

/**
 * What the analyzer does when a policy reads an unknown value: an advisory diagnostic, never a pass. A hook that
 * answers with a promise is not waited for: it fails the policy (the rules are synchronous), and its outcome is dropped.
 */
function guarded(push: PushRow, urn: string, run: () => unknown): void {
    try {
        const out = run();
        if (out instanceof Promise) {
            out.catch(() => undefined);
            throw new Error("an asynchronous policy hook is not supported");
        }
    } catch (e) {
        if ((e as { notApplicable?: boolean }).notApplicable) return;
        const { UnknownValueError } = policySdk();
        const reason = e instanceof UnknownValueError ? "can't run policy during preview" : "policy failed";
        push(
            decodeMessage(`${reason}: ${String((e as Error).message).split("\n")[0]}`),
            urn,
            undefined,
            e instanceof UnknownValueError ? "advisory" : "mandatory",
        );
    }
}

/** Every resource through the policy's resource hooks, with the views every policy of the evaluation shares. */
function runResourceHooks(
    p: Rule & ResourceValidationPolicy,
    request: AnalyzerRequest,
    run: PolicyRun,
    count: number,
): void {
    const validations = Array.isArray(p.validateResource) ? p.validateResource : [p.validateResource];
    const { getConfig, notApplicable } = run;
    const stackTags = new Map<string, string>();
    // One reporter for all of the policy's calls (not two closures made for each resource).
    let judged = "";
    const reportResource = run.report(() => judged);
    for (let i = 0; i < count; i++) {
        const a = request.args[i];
        for (const validate of validations) {
            if (!validate) continue;
            const resourceArgs = {
                type: a.type,
                name: a.name,
                urn: a.urn,
                props: a.props,
                opts: a.opts,
                isType,
                asType,
                getConfig,
                notApplicable,
                stackTags,
                views: request.views,
                review: request.review,
            };
            judged = a.urn;
            run.guard(a.urn, () => validate(resourceArgs as never, reportResource));
        }
    }
}

/**
 * Where a stack hook's scope stands among the evaluation's scopes (review.ts `ScopeContext`): given only when
 * there are several, each named.
 */
function scopeContext(request: AnalyzerRequest, index: number): ScopeContext | undefined {
    const all = request.stackScopes;
    const name = all[index].name;
    if (all.length < 2 || name === undefined) return undefined;
    const others = all.flatMap((s, i) =>
        i === index || s.name === undefined ? [] : [{ name: s.name, resources: s.resources as ResourceLike[] }],
    );
    return { name, others };
}

/** The program through the policy's stack hook, once a scope. */
function runStackHook(p: Rule & StackValidationPolicy, request: AnalyzerRequest, run: PolicyRun): void {
    const { getConfig, notApplicable } = run;
    for (const [index, { resources }] of request.stackScopes.entries()) {
        const scope = scopeContext(request, index);
        const stackArgs = {
            resources,
            getConfig,
            notApplicable,
            stackTags: new Map(),
            views: request.views,
            review: request.review,
            ...(scope ? { scope } : {}),
        };
        run.guard("", () =>
            p.validateStack(
                stackArgs as never,
                run.report(() => ""),
            ),
        );
    }
}
