/**
 * What a leg returns: it ran (rows, plus the checks the leg makes itself), it was skipped by design (with
 * the reason), or it failed to run (with one line). A leg that failed or was skipped never has rows that
 * could be mistaken for a clean result.
 */
import { Row } from "../../evaluation/rows";

export type LegName = "mock" | "real" | "deploy" | "manifest";

/**
 * A check a leg makes itself, besides its rows: the real leg's exit code, the deploy leg's manifest
 * schemas, plaintext-secret scan and destroy.
 */
export interface LegCheck {
    /** What was checked, e.g. "exit code", "schema pulumi.com/v1/Stack", "destroy". */
    check: string;
    /** What it was checked on (a manifest, a file); "" for the run as a whole. */
    target: string;
    outcome: "pass" | "fail" | "skipped";
    expected: number;
    got: number;
    note?: string;
}

interface LegBase {
    leg: LegName;
    durationMs: number;
}

export type LegResult =
    | (LegBase & { status: "ran"; rows: Row[]; checks: LegCheck[] })
    | (LegBase & { status: "skipped"; reason: string })
    | (LegBase & { status: "error"; message: string });

/** Builds the result of a leg that started at `started`. */
export function legResult(leg: LegName, started: number) {
    const durationMs = () => Date.now() - started;
    return {
        ran: (rows: Row[], checks: LegCheck[] = []): LegResult => ({
            leg,
            durationMs: durationMs(),
            status: "ran",
            rows,
            checks,
        }),
        skipped: (reason: string): LegResult => ({ leg, durationMs: durationMs(), status: "skipped", reason }),
        error: (message: string): LegResult => ({
            leg,
            durationMs: durationMs(),
            status: "error",
            message: message.trim() || "the leg failed without a message",
        }),
    };
}

/**
 * The remediations a fixture expects against those an engine leg saw (policy and resource name): one check
 * per expected remediation, and one failing check for each remediation nobody expected.
 */
export function remediationChecks(
    expected: { policy: string; resource: string }[] | undefined,
    seen: { policy: string; urn: string }[],
): LegCheck[] {
    const name = (urn: string) => urn.split("::").slice(3).join("::");
    const got = seen.map((s) => ({ policy: s.policy, resource: name(s.urn) }));
    const checks: LegCheck[] = (expected ?? []).map((e) => {
        const n = got.filter((g) => g.policy === e.policy && g.resource === e.resource).length;
        return {
            check: `remediation ${e.policy}`,
            target: e.resource,
            outcome: n === 1 ? "pass" : "fail",
            expected: 1,
            got: n,
            ...(n === 1 ? {} : { note: "the pack did not remediate it exactly once" }),
        };
    });
    for (const g of got) {
        if ((expected ?? []).some((e) => e.policy === g.policy && e.resource === g.resource)) continue;
        checks.push({
            check: `remediation ${g.policy}`,
            target: g.resource,
            outcome: "fail",
            expected: 0,
            got: 1,
            note: "unexpected remediation",
        });
    }
    return checks;
}
