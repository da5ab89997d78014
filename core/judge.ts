/**
 * Judging rows into findings, shared by the gate (a preview's rows) and `pko-guard check` (manifests): the
 * pack's waiver marks become status "waived", the rest is blocking or advisory by enforcement level; and the
 * notices for waivers that waived nothing or have expired. Kept apart from the Pulumi CLI's runner, so that
 * `check` never loads it.
 */
import { Finding, Notice, Row, sortRows } from "./rows";
import { configWaivers, parseWaived, today } from "../policies/model/waivers";
import { PackConfig } from "./pack-config";

/** Reads the pack's `[waived: ...]` marks into status "waived"; the rest is judged by enforcement level. */
export function judgeRows(rows: Row[], failOnAdvisory: boolean): Finding[] {
    return sortRows(rows).map((r) => {
        const w = parseWaived(r.message);
        if (w) return { ...r, message: w.message, status: "waived", waiver: { reason: w.reason, ...(w.expires ? { expires: w.expires } : {}) } };
        return { ...r, status: r.level === "mandatory" || (failOnAdvisory && r.level === "advisory") ? "blocking" : "advisory" };
    });
}

/** Waivers of the config that waived nothing, and expired ones, as advisory notices (the gate and check report them). */
export function waiverNotices(config: PackConfig, findings: Finding[], now = new Date()): Notice[] {
    const notices: Notice[] = [];
    for (const [policy, entry] of Object.entries(config)) {
        for (const w of configWaivers(entry.properties ?? {})) {
            if (w.expires && w.expires < today(now)) {
                notices.push({ level: "advisory", policy, message: `waiver for ${w.resource} expired on ${w.expires} (${w.reason}): remove or renew it` });
                continue;
            }
            const used = findings.some((f) => f.policy === policy && f.status === "waived" && f.waiver?.reason === w.reason.replace(/[\]\n]/g, " "));
            if (!used) notices.push({ level: "advisory", policy, message: `unused waiver for ${w.resource} (${w.reason}): it matched no finding` });
        }
    }
    return notices;
}

