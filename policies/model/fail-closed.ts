/**
 * The one fail-closed path of the pack: a rule's run, whatever goes wrong in it, ends in findings reported (the
 * engine's encoded message, or data for in-process evaluators), each through the one waiver hook; a rule that
 * throws or returns something else is reported fail-closed, never thrown.
 */
import { ReportViolation, ResourceValidationArgs } from "@pulumi/policy";
import { report } from "./report";
import { WaiverTarget, applyWaivers, mayWaive, targetOf } from "./waivers";
import { MessageFacts, encodeMessage, saysFailClosed } from "./message";
import { RuleMeta, readConfig } from "./rule-meta";
import { ResourceLike } from "./stack";

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

/** The resource a per-resource evaluation is about, as rules read it. */
export function resourceOf(args: ResourceValidationArgs): ResourceLike {
    return { type: args.type, name: args.name, urn: args.urn, props: args.props };
}

/** What the waiver hook needs: the policy's config (undefined when unusable: nothing is waived) and where a finding is. */
export interface Waiving {
    config: () => Record<string, unknown> | undefined;
    target: (urn?: string) => WaiverTarget;
}

export const NO_WAIVERS: Waiving = { config: () => undefined, target: (urn) => targetOf(undefined, urn) };

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
export function resourceWaiving(meta: RuleMeta, args: ResourceValidationArgs): Waiving {
    const resource = resourceOf(args);
    return { config: () => usableConfig(meta, args.getConfig), target: (urn) => targetOf(resource, urn) };
}

/**
 * The waiver hook's view of a program-level evaluation: the policy's config, and a finding's resource found
 * by URN among the program's resources (indexed once, on the first finding, so that many findings on a large
 * program stay linear).
 */
export function programWaiving(
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

export function configProblem(meta: RuleMeta, problem: string): string {
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
export function evaluate(
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
