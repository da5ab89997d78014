/**
 * Production classification of a PKO Stack, driven by policy configuration so that it works the same
 * with `--policy-pack-config`, in Pulumi Cloud organization enforcement, and in the harness.
 *
 * A Stack is production when any of these says so:
 * - its `spec.stack` (org/project/stack) matches one of `productionStackPatterns` (regular expressions);
 * - its `metadata.namespace` is one of `productionNamespaces`;
 * - one of its labels has one of the values listed for it in `productionLabels`.
 * When none says so but a deciding value is unknown during preview, the answer is "unknown", and
 * governance gates treat the Stack as possibly production (they fail closed).
 */
import type { Finding } from "./policy";
import { StackView } from "./stack";
import { UNKNOWN, Unknown, quote } from "./values";

export interface ProductionConfig {
    productionStackPatterns: string[];
    productionNamespaces: string[];
    productionLabels: Record<string, string[]>;
}

export const DEFAULT_PRODUCTION: ProductionConfig = {
    productionStackPatterns: ["(^|/)(prod|production|prd)([-_.][^/]*)?$"],
    productionNamespaces: [],
    productionLabels: { environment: ["prod", "production"], env: ["prod", "production"] },
};

/** JSON-schema properties every production-aware policy accepts (merged into its configSchema). */
export const productionSchemaProperties = {
    productionStackPatterns: {
        type: "array",
        items: { type: "string", minLength: 1 },
        description:
            "Regular expressions matched against spec.stack (org/project/stack); a match makes the Stack production.",
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
        description: "Label name -> values that mark a Stack as production.",
        default: DEFAULT_PRODUCTION.productionLabels,
    },
} as const;

export type Production =
    | { verdict: "production"; reason: string }
    | { verdict: "non-production" }
    | { verdict: "unknown"; reason: string }
    | { verdict: "invalid-config"; reason: string };

function stringArray(v: unknown, fallback: string[]): string[] {
    return Array.isArray(v) && v.every((e) => typeof e === "string") ? (v as string[]) : fallback;
}

function labelMap(v: unknown, fallback: Record<string, string[]>): Record<string, string[]> {
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
        return fallback;
    }
    const out: Record<string, string[]> = {};
    for (const [k, vals] of Object.entries(v as Record<string, unknown>)) {
        if (Array.isArray(vals)) {
            out[k] = vals.filter((e): e is string => typeof e === "string");
        } else if (typeof vals === "string") {
            out[k] = [vals];
        }
    }
    return out;
}

/** Reads the production settings out of a policy's config, falling back to the defaults per field. */
export function productionConfig(config: unknown): ProductionConfig {
    const c = (config !== null && typeof config === "object" ? config : {}) as Record<string, unknown>;
    return {
        productionStackPatterns: stringArray(c.productionStackPatterns, DEFAULT_PRODUCTION.productionStackPatterns),
        productionNamespaces: stringArray(c.productionNamespaces, DEFAULT_PRODUCTION.productionNamespaces),
        productionLabels: labelMap(c.productionLabels, DEFAULT_PRODUCTION.productionLabels),
    };
}

const regexCache = new Map<string, RegExp | undefined>();

/** Compiles a configured pattern once; undefined when it is not a valid regular expression. */
export function compilePattern(pattern: string): RegExp | undefined {
    if (!regexCache.has(pattern)) {
        let re: RegExp | undefined;
        try {
            re = new RegExp(pattern);
        } catch {
            re = undefined;
        }
        regexCache.set(pattern, re);
    }
    return regexCache.get(pattern);
}

/** Classifies a Stack as production, non-production, unknown (during preview), or says the config is invalid. */
export function classifyProduction(view: StackView, config: ProductionConfig): Production {
    const unknownFields: string[] = [];
    for (const pattern of config.productionStackPatterns) {
        if (!compilePattern(pattern)) {
            return {
                verdict: "invalid-config",
                reason: `productionStackPatterns entry ${quote(pattern)} is not a valid regular expression`,
            };
        }
    }
    if (view.stack === UNKNOWN) {
        unknownFields.push("spec.stack");
    } else if (typeof view.stack === "string") {
        const stack = view.stack;
        const hit = config.productionStackPatterns.find((p) => compilePattern(p)!.test(stack));
        if (hit !== undefined) {
            return { verdict: "production", reason: `spec.stack matches production pattern ${quote(hit)}` };
        }
    }
    if (config.productionNamespaces.length > 0) {
        if (view.namespace === UNKNOWN) {
            unknownFields.push("metadata.namespace");
        } else if (typeof view.namespace === "string" && config.productionNamespaces.includes(view.namespace)) {
            return { verdict: "production", reason: `namespace ${quote(view.namespace)} is a production namespace` };
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
                } else if (typeof value === "string" && config.productionLabels[label].includes(value)) {
                    return { verdict: "production", reason: `label ${label}=${quote(value)} marks it production` };
                }
            }
        }
    }
    if (unknownFields.length > 0) {
        return {
            verdict: "unknown",
            reason: `${unknownFields.join(", ")} ${unknownFields.length === 1 ? "is" : "are"} unknown during preview, so the Stack may be production`,
        };
    }
    return { verdict: "non-production" };
}

/**
 * The findings of a production-only rule for one Stack, once its problem is known: none for
 * non-production; the production message with the reason; for a Stack that may be production (a
 * deciding value unknown during preview) the fail-closed message, or none for rules that do not fail
 * closed; and a configuration error when the production settings are invalid.
 */
export function productionFindings(
    who: string,
    production: Production,
    messages: { production: (reason: string) => string; unknown?: (reason: string) => string },
    field?: string,
): Finding[] {
    const at = (message: string): Finding => (field === undefined ? { message } : { message, field });
    switch (production.verdict) {
        case "non-production":
            return [];
        case "invalid-config":
            return [{ message: `${who}: cannot decide whether it is production: ${production.reason}; fix the policy configuration.` }];
        case "production":
            return [at(messages.production(production.reason))];
        case "unknown":
            return messages.unknown ? [at(messages.unknown(production.reason))] : [];
    }
}
