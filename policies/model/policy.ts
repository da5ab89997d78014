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
import { ResourceLike, StackView, stackView } from "./stack";
import { WAIVER_CONFIG, WaiverTarget, applyWaivers, targetOf } from "./waivers";

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

/** A violation message, optionally attached to another resource's URN (stack policies). */
export interface Finding {
    message: string;
    urn?: string;
}

function configSchema(meta: RuleMeta): PolicyConfigSchema {
    // Every policy accepts per-resource waivers (policies/model/waivers.ts).
    return { properties: { ...(meta.config ?? {}), ...WAIVER_CONFIG } as PolicyConfigSchema["properties"] };
}

function safeConfig(getConfig: (() => unknown) | undefined): Record<string, unknown> {
    try {
        const c = getConfig ? getConfig() : {};
        return c !== null && typeof c === "object" ? (c as Record<string, unknown>) : {};
    } catch {
        return {};
    }
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
 * Runs a rule and reports what it finds. Whatever goes wrong (the rule throws, returns something that
 * is not a list of findings, or a promise) is reported as one fail-closed violation, never thrown.
 */
function evaluate(meta: RuleMeta, reportViolation: ReportViolation, run: () => unknown, config: Record<string, unknown>, target: (urn?: string) => WaiverTarget): void {
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
    for (const f of findings) {
        const urn = typeof f === "string" ? undefined : f.urn;
        let message = typeof f === "string" ? f : f.message;
        // The one waiver hook: a matching waiver marks the message (never drops it); see waivers.ts.
        try {
            message = applyWaivers(meta.name, config, target(urn), message, closed);
        } catch {
            // a broken waiver never hides a finding: the message is reported as it is
        }
        if (urn === undefined) reportViolation(message);
        else reportViolation(message, urn);
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

/** A per-resource rule over any resource (the rule decides which types it cares about). */
export function resourceRule(
    meta: RuleMeta,
    check: (resource: ResourceLike, config: Record<string, unknown>) => (string | Finding)[],
): ResourceValidationPolicy {
    return {
        ...metaFields(meta),
        validateResource: (args: ResourceValidationArgs, reportViolation: ReportViolation) => {
            const config = safeConfig(args.getConfig);
            const resource = { type: args.type, name: args.name, urn: args.urn, props: args.props };
            evaluate(meta, reportViolation, () => check(resource, config), config, (urn) => targetOf(resource, urn));
        },
    };
}

/** A per-resource rule over PKO Stacks only. */
export function stackRule(
    meta: RuleMeta,
    check: (view: StackView, config: Record<string, unknown>) => (string | Finding)[],
): ResourceValidationPolicy {
    return resourceRule(meta, (resource, config) => {
        const view = stackView(resource);
        return view ? check(view, config) : [];
    });
}

/** The program's resources as rules read them (the analyzer hands each stack policy its own list). */
function programResources(list: PolicyResource[] | undefined): ResourceLike[] {
    return (list ?? []).map((r: PolicyResource) => ({ type: r.type, name: r.name, urn: r.urn, props: r.props }));
}

/** A stack-level rule that sees every resource of the program. */
export function programRule(
    meta: RuleMeta,
    check: (resources: ResourceLike[], config: Record<string, unknown>) => Finding[],
): StackValidationPolicy {
    return {
        ...metaFields(meta),
        validateStack: (args: StackValidationArgs, reportViolation: ReportViolation) => {
            const config = safeConfig(args.getConfig);
            const target = (urn?: string) => targetOf(urn ? (args.resources ?? []).find((r) => r.urn === urn) : undefined, urn);
            evaluate(meta, reportViolation, () => check(programResources(args.resources), config), config, target);
        },
    };
}
