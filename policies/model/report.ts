/**
 * The one place the pack hands a finding to the policy SDK, and the one use of an internal SDK API.
 *
 * `reportViolation(message, urn)` binds a finding to its policy's enforcement level. Since `@pulumi/policy`
 * 1.20 the function the analyzer passes to a policy (`makeReportViolationFun` in the SDK's `server.ts`) also
 * takes an object `{ message, urn, enforcementLevel }` whose level is that one finding's own; the engine
 * (`convertDiagnostics`, v3.248.0) fails a preview or an update only on diagnostics whose own level is
 * mandatory. The SDK marks that form internal and its public `ReportViolation` type does not declare it, so
 * nothing else in the pack may use it: a finding with its own level goes through `report` below, and
 * test/integration/policies/model/sdk-report.spec.ts drives the real analyzer to prove the SDK still honours it
 * (an SDK upgrade that drops or changes the form fails that test, not a user's gate). The object form does not
 * prefix the policy's description to the message; the row readers strip that prefix when present, so both
 * forms read the same.
 *
 * In-process evaluators (`pko-guard check`, the harness's manifest leg, the webhook) never come here: they
 * take findings as data (policy.ts `DataReport`), with the waiver that decides their status.
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
