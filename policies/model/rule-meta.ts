/**
 * What a rule says about itself and how its configuration is read: the metadata every policy carries (its prose
 * is `about` alone), the SDK's fields derived from it, the policy's closed config schema, and the config as the
 * analyzer hands it over.
 */
import { EnforcementLevel, PolicyComplianceFramework, PolicyConfigSchema, Severity } from "@pulumi/policy";
import { unknownProperty } from "./config";
import { WAIVER_CONFIG } from "./waivers";
import { ExampleResource } from "./examples";
import { plainText } from "./prose";

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
    /**
     * Why the cluster door judges a DELETE of what the rule reads with this rule (the deleted object as it is):
     * set only by rules whose finding says what a deletion would do (a Stack that destroys production).
     */
    deletion?: string;
}

/** What a built policy carries about itself: the rule's own description, and the config keys of its waivers. */
export interface DescribedRule {
    about: RuleAbout & { waiverKeys: string[] };
}

/** The properties of a policy's config: its own, and the per-resource waivers every policy accepts. */
function configProperties(meta: RuleMeta): Record<string, object> {
    return { ...meta.config, ...WAIVER_CONFIG };
}

/**
 * The policy's config schema. Every policy has one, closed (`additionalProperties: false`), so that a
 * misspelt property is rejected: by the CLI/harness config check, by the pack at run time (the engine
 * only validates the listed properties), and by tools that read the full schema.
 */
function configSchema(meta: RuleMeta): PolicyConfigSchema {
    return {
        properties: configProperties(meta),
        additionalProperties: false,
    } as PolicyConfigSchema;
}

/**
 * The policy's config as the analyzer hands it over, or a message part saying why it cannot be used.
 * Reading it may throw (a broken analyzer): that propagates to `evaluate`, which fails closed.
 */
export function readConfig(meta: RuleMeta, getConfig: () => unknown): Record<string, unknown> | string {
    const c = getConfig();
    if (c === null || typeof c !== "object" || Array.isArray(c)) return "its configuration is not an object";
    const unknown = unknownProperty(meta.name, c as Record<string, unknown>, configKeys(meta));
    return unknown ?? (c as Record<string, unknown>);
}

/** Each rule's config keys, listed once: a policy reads its config for every resource it judges. */
const CONFIG_KEYS = new WeakMap<RuleMeta, string[]>();

function configKeys(meta: RuleMeta): string[] {
    let keys = CONFIG_KEYS.get(meta);
    if (keys === undefined) {
        keys = Object.keys(configProperties(meta));
        CONFIG_KEYS.set(meta, keys);
    }
    return keys;
}

/** The SDK's fields of a policy, and its `about` (with its waivers' config keys), from the rule's metadata. */
export function metaFields(meta: RuleMeta) {
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
