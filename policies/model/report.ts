/**
 * The one place the pack hands a finding to the policy SDK, and the one use of an internal SDK API.
 * The object form of `reportViolation` carries a per-finding enforcement level, which the engine honours
 * (it fails only on diagnostics whose own level is mandatory), but the SDK marks it internal, so nothing else
 * uses it and test/integration/policies/model/sdk-report.spec.ts proves an SDK upgrade still honours it.
 * In-process evaluators never come here: they take findings as data (policy.ts `DataReport`).
 */
import { ReportViolation } from "@pulumi/policy";

/** A level a single finding may carry instead of its policy's (a waived finding is advisory). */
export type FindingLevel = "advisory";

/** One finding as the pack hands it to the engine: its encoded message (message.ts), where, and its own level. */
export interface Violation {
    message: string;
    urn?: string;
    /** The finding's own level; absent: the policy's level. */
    level?: FindingLevel;
}

/** The SDK's internal per-finding form (`@pulumi/policy` >= 1.20, `server.ts` `makeReportViolationFun`). */
interface SdkViolation {
    message: string;
    urn?: string;
    enforcementLevel: FindingLevel;
}

/** Reports one finding: at its policy's level, or (object form) at its own. */
export function report(reportViolation: ReportViolation, v: Violation): void {
    if (v.level !== undefined) {
        const own: SdkViolation = {
            message: v.message,
            enforcementLevel: v.level,
            ...(v.urn !== undefined ? { urn: v.urn } : {}),
        };
        (reportViolation as unknown as (v: SdkViolation) => void)(own);
        return;
    }
    if (v.urn === undefined) reportViolation(v.message);
    else reportViolation(v.message, v.urn);
}
