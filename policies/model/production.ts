/**
 * Production classification of a PKO Stack: one decision for the whole pack.
 * CrossGuard hands each policy only its own config, so the settings live in `pko-guard-production` and reach
 * the rules through the pack's channel (settings.ts); a disabled settings policy leaves rules unable to
 * classify, and they fail closed. An unknown deciding value in preview makes the answer "unknown", treated as
 * possibly production. Production is sticky and belongs to the Pulumi stack (`classifyInContext`): a Stack
 * production only by that context is a reclassification, reported unless an allowed user or group asks.
 */
import type { RE2JS } from "re2js";
import { BUILT_IN_PATTERNS, PRODUCTION_STACK_PATTERN, Pattern } from "./builtin-patterns";
import { RequestSettings } from "./settings";
import { StackView } from "./stack";
import { UNKNOWN, Unknown, quote } from "./values";

export const SETTINGS_POLICY = "pko-guard-production";

export interface ProductionSettings {
    productionStackPatterns: string[];
    productionNamespaces: string[];
    productionLabels: Record<string, string[]>;
    /** Users who may take a Stack out of production at the cluster door (its request's username). */
    reclassificationUsers: string[];
    /** Groups whose members may take a Stack out of production at the cluster door. */
    reclassificationGroups: string[];
}

export const DEFAULT_PRODUCTION: ProductionSettings = {
    productionStackPatterns: [PRODUCTION_STACK_PATTERN],
    productionNamespaces: [],
    productionLabels: { environment: ["prod", "production"], env: ["prod", "production"] },
    reclassificationUsers: [],
    reclassificationGroups: [],
};

/** JSON-schema properties of the settings policy's config. */
export const productionSchemaProperties = {
    productionStackPatterns: {
        type: "array",
        items: { type: "string", minLength: 1 },
        description:
            "RE2 regular expressions matched against spec.stack (org/project/stack); a match makes the Stack production.",
        default: DEFAULT_PRODUCTION.productionStackPatterns,
    },
    productionNamespaces: {
        type: "array",
        items: { type: "string", minLength: 1 },
        description: "Kubernetes namespaces whose Stacks are production.",
        default: DEFAULT_PRODUCTION.productionNamespaces,
    },
    productionLabels: {
        type: "object",
        additionalProperties: { type: "array", items: { type: "string" } },
        description: "Label name -> values that mark a Stack as production (values compared in any case).",
        default: DEFAULT_PRODUCTION.productionLabels,
    },
    reclassificationUsers: {
        type: "array",
        items: { type: "string", minLength: 1 },
        description:
            "Users (the cluster request's username) who may take a production Stack out of production at the cluster door.",
        default: DEFAULT_PRODUCTION.reclassificationUsers,
    },
    reclassificationGroups: {
        type: "array",
        items: { type: "string", minLength: 1 },
        description: "Groups whose members may take a production Stack out of production at the cluster door.",
        default: DEFAULT_PRODUCTION.reclassificationGroups,
    },
} as const;

// ---------------------------------------------------------------------------------------------------
// Linear-time regular expressions for every user-supplied pattern of the pack.

export type { Pattern };

/**
 * Each pattern compiled, by its text: what a pattern compiles to depends on its text alone, so nothing here can go
 * stale (a compiled regular expression, as a literal would be; the configured patterns are few). The pack's default
 * patterns are there from the start (./builtin-patterns.ts).
 */
const patterns = new Map<string, Pattern | string>(BUILT_IN_PATTERNS);

/** re2js, loaded on the first pattern that is not one of the defaults. */
let re2: typeof RE2JS | undefined;

/**
 * Compiles a configured pattern once with RE2 (re2js, a pure-JavaScript port): matching time is linear
 * in the input, so no pattern (`^(a+)+$`, `(a|aa)+$`) can hang a preview. Returns the reason when the
 * pattern is not valid RE2 syntax (RE2 has no lookaround and no backreferences).
 */
export function compileUserPattern(pattern: string): Pattern | string {
    let hit = patterns.get(pattern);
    if (hit === undefined) {
        re2 ??= (require("re2js") as typeof import("re2js")).RE2JS;
        try {
            const re = re2.compile(pattern);
            // `test`: whether the pattern matches anywhere in the input, as `matcher(input).find()` says, without
            // building a Matcher or asking for groups (a quarter of the time on a Stack name).
            hit = { test: (input: string) => re.test(input) };
        } catch (e) {
            // re2js names the offending part of the pattern (config, never a secret), not the input.
            const why = e instanceof Error ? e.message.replace(/^error parsing regexp: /, "") : "invalid";
            hit = `is not a valid RE2 regular expression (${why.slice(0, 120)}; lookarounds and backreferences are not supported)`;
        }
        if (patterns.size > 10000) {
            patterns.clear();
            for (const [text, built] of BUILT_IN_PATTERNS) patterns.set(text, built);
        }
        patterns.set(pattern, hit);
    }
    return hit;
}

/** Compiles a configured pattern; undefined when it is not valid (see `patternProblem` for why). */
export function compilePattern(pattern: string): Pattern | undefined {
    const p = compileUserPattern(pattern);
    return typeof p === "string" ? undefined : p;
}

/** The first entry of a pattern list that cannot be compiled, as a message part; undefined when all can. */
export function patternProblem(setting: string, list: string[]): string | undefined {
    for (const p of list) {
        const c = compileUserPattern(p);
        if (typeof c === "string") return `${setting} entry ${quote(p)} ${c}`;
    }
    return undefined;
}

// ---------------------------------------------------------------------------------------------------
// The settings, as published by the settings policy.

/** What production-aware rules get: the settings, or why there are none. */
export type SettingsState = { settings: ProductionSettings } | { problem: string; disabled?: true };

function stringArray(v: unknown): v is string[] {
    return Array.isArray(v) && v.every((e) => typeof e === "string");
}

function labelMap(v: unknown): v is Record<string, string[]> {
    return v !== null && typeof v === "object" && !Array.isArray(v) && Object.values(v).every(stringArray);
}

/**
 * Reads the settings out of the settings policy's config (schema defaults per field when absent).
 * Invalid settings are a problem, never silently replaced by defaults.
 */
export function readSettings(config: Record<string, unknown>): SettingsState {
    const c = config;
    const list = (key: "reclassificationUsers" | "reclassificationGroups") =>
        c[key] === undefined ? DEFAULT_PRODUCTION[key] : (c[key] as string[]);
    const out: ProductionSettings = {
        productionStackPatterns:
            c.productionStackPatterns === undefined
                ? DEFAULT_PRODUCTION.productionStackPatterns
                : (c.productionStackPatterns as string[]),
        productionNamespaces:
            c.productionNamespaces === undefined
                ? DEFAULT_PRODUCTION.productionNamespaces
                : (c.productionNamespaces as string[]),
        productionLabels:
            c.productionLabels === undefined
                ? DEFAULT_PRODUCTION.productionLabels
                : (c.productionLabels as Record<string, string[]>),
        reclassificationUsers: list("reclassificationUsers"),
        reclassificationGroups: list("reclassificationGroups"),
    };
    if (!stringArray(out.productionStackPatterns))
        return { problem: "productionStackPatterns must be a list of strings" };
    if (!stringArray(out.productionNamespaces)) return { problem: "productionNamespaces must be a list of strings" };
    if (!labelMap(out.productionLabels))
        return { problem: "productionLabels must map label names to lists of strings" };
    if (!stringArray(out.reclassificationUsers)) return { problem: "reclassificationUsers must be a list of strings" };
    if (!stringArray(out.reclassificationGroups))
        return { problem: "reclassificationGroups must be a list of strings" };
    const bad = patternProblem("productionStackPatterns", out.productionStackPatterns);
    if (bad) return { problem: bad };
    return { settings: out };
}

const DISABLED: SettingsState = {
    problem: `the settings policy ${SETTINGS_POLICY} is disabled (or did not run), so no rule can tell production Stacks apart; enable ${SETTINGS_POLICY} (advisory or mandatory)`,
    disabled: true,
};

/** What a pack's rules read: the production settings of the request a policy hook serves. */
export interface ProductionSource {
    /** The settings the pack's settings policy published for this request (or why there are none). */
    production(request: string | undefined): SettingsState;
}

/** What a pack's settings policy writes: the settings of a request, read from `configuration` (its identity). */
export interface ProductionSink {
    publish(request: string, configuration: string, settings: SettingsState): void;
}

/**
 * One pack's production settings, per request (settings.ts): what its settings policy publishes and its rules
 * read. The pack builder makes one per pack and hands out its two sides (policies/index.ts).
 */
export function productionChannel(): ProductionSource & ProductionSink {
    const published = new RequestSettings<SettingsState>();
    return {
        publish: (request, configuration, settings) => published.publish(request, configuration, settings),
        production: (request) => published.read(request) ?? DISABLED,
    };
}

/** The key of a stack-level request: the program's resources, as few of them as identify it. */
export function programKeyOf(resources: readonly { urn?: string }[]): string {
    return `program:${resources.length}:${resources[0]?.urn ?? ""}:${resources[resources.length - 1]?.urn ?? ""}`;
}

// ---------------------------------------------------------------------------------------------------
// Classification.

/**
 * `production` carries how the Stack is production, e.g. `production by namespace "payments"`, and `inherited`
 * when its own fields do not say so but the context does (its earlier version, or another Stack of its stack).
 */
export type Production =
    | { verdict: "production"; reason: string; inherited?: "earlier" | "stack" }
    | { verdict: "non-production" }
    | { verdict: "unknown"; reason: string }
    | { verdict: "invalid-config"; reason: string };

/** Classifies a Stack as production, non-production, unknown (during preview), or says it cannot. */
export function classifyProduction(view: StackView, state: SettingsState): Production {
    if ("problem" in state) return { verdict: "invalid-config", reason: state.problem };
    const config = state.settings;
    const unknownFields: string[] = [];
    if (view.stack === UNKNOWN) {
        unknownFields.push("spec.stack");
    } else if (typeof view.stack === "string") {
        const stack = view.stack;
        const hit = config.productionStackPatterns.find((p) => compilePattern(p)!.test(stack));
        if (hit !== undefined) {
            return {
                verdict: "production",
                reason: `production by spec.stack ${quote(stack)} (pattern ${quote(hit)})`,
            };
        }
    }
    if (config.productionNamespaces.length > 0) {
        if (view.namespace === UNKNOWN) {
            unknownFields.push("metadata.namespace");
        } else if (typeof view.namespace === "string" && config.productionNamespaces.includes(view.namespace)) {
            return { verdict: "production", reason: `production by namespace ${quote(view.namespace)}` };
        }
    }
    const labelNames = Object.keys(config.productionLabels);
    if (labelNames.length > 0) {
        if (view.labels === UNKNOWN) {
            unknownFields.push("metadata.labels");
        } else {
            for (const label of labelNames) {
                const value: string | Unknown | undefined = view.labels[label];
                if (value === UNKNOWN) {
                    unknownFields.push(`metadata.labels.${label}`);
                } else if (typeof value === "string" && labelMatches(config.productionLabels[label], value)) {
                    return { verdict: "production", reason: `production by label ${label}=${quote(value)}` };
                }
            }
        }
    }
    if (view.undeclaredTarget !== undefined) {
        return { verdict: "unknown", reason: view.undeclaredTarget };
    }
    if (unknownFields.length > 0) {
        return {
            verdict: "unknown",
            reason: `${unknownFields.join(", ")} ${unknownFields.length === 1 ? "is" : "are"} unknown during preview, so the Stack may be production`,
        };
    }
    return { verdict: "non-production" };
}

/** Whether a label's value is one of the production values, in any case. */
function labelMatches(values: string[], value: string): boolean {
    const v = value.trim().toLowerCase();
    return values.some((x) => x.trim().toLowerCase() === v);
}

/** What a Stack is judged with besides its own fields (review.ts): its earlier version, other Stacks of its stack. */
export interface ProductionContext {
    earlier?: StackView;
    /** Other Stack objects naming the same Pulumi stack (review.ts `sameStack`). */
    peers: readonly StackView[];
}

/** How messages name a Stack object of the context: Stack namespace/name. */
function objectName(view: StackView): string {
    const ns = typeof view.namespace === "string" ? view.namespace : "";
    const name = typeof view.name === "string" ? view.name : view.resourceName;
    return quote(`Stack/${ns ? `${ns}/` : ""}${name}`);
}

/**
 * The pack's one classification with the context the evaluation has (none in a preview): the Stack's own, or
 * production when its own fields do not say so but its earlier version was production by its own fields, or another
 * Stack that is production by its own fields deploys the same Pulumi stack. Production stays production: a change
 * is judged as production when the object was, and a Pulumi stack any production Stack deploys is production for
 * every Stack that names it.
 */
export function classifyInContext(view: StackView, state: SettingsState, context: ProductionContext): Production {
    const own = classifyProduction(view, state);
    if (own.verdict === "production" || own.verdict === "invalid-config") return own;
    const earlier = context.earlier ? classifyProduction(context.earlier, state) : undefined;
    if (earlier?.verdict === "production")
        return {
            verdict: "production",
            reason: `production as its earlier version was (${earlier.reason})`,
            inherited: "earlier",
        };
    for (const peer of context.peers) {
        const p = classifyProduction(peer, state);
        if (p.verdict === "production" && typeof view.stack === "string")
            return {
                verdict: "production",
                reason: `production as spec.stack ${quote(view.stack)} is the stack ${objectName(peer)} deploys (${p.reason})`,
                inherited: "stack",
            };
    }
    return own;
}

/** A finding of a production-only rule (the rule wrappers' RuleFinding shape; declared here so the model does not import the wrappers). */
export interface ProductionFinding {
    message: string;
    field?: string;
}

/**
 * The findings of a production-only rule for one Stack, once its problem is known: none for
 * non-production; the production message with the classification; for a Stack that may be production
 * the fail-closed message, or none for rules that do not fail closed; and a configuration error when
 * the production settings are invalid or missing.
 */
export function productionFindings(
    who: string,
    production: Production,
    messages: { production: (classification: string) => string; unknown?: (reason: string) => string },
    field?: string,
): ProductionFinding[] {
    const at = (message: string): ProductionFinding => (field === undefined ? { message } : { message, field });
    switch (production.verdict) {
        case "non-production":
            return [];
        case "invalid-config":
            return [{ message: invalidSettingsMessage(who, production.reason) }];
        case "production":
            return [at(messages.production(production.reason))];
        case "unknown":
            return messages.unknown ? [at(messages.unknown(production.reason))] : [];
    }
}

export function invalidSettingsMessage(who: string, reason: string): string {
    return reason === DISABLED_REASON
        ? `${who}: cannot decide whether it is production: ${reason}.`
        : `${who}: cannot decide whether it is production: the ${SETTINGS_POLICY} settings are invalid (${reason}); fix its configuration.`;
}

const DISABLED_REASON = (DISABLED as { problem: string }).problem;
