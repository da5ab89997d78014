/**
 * Judging rows into findings, shared by the gate (a preview's rows) and `pko-guard check` (manifests): the
 * pack's waiver marks become status "waived", the rest is blocking or advisory by enforcement level; and the
 * notices for waivers that waived nothing or have expired. Kept apart from the Pulumi CLI's runner, so that
 * `check` never loads it.
 */
import { Finding, Notice, Row, sortRows } from "./rows";
import { MessageFacts, decodeMessage } from "../policies/model/message";
import { configWaivers, today } from "../policies/model/waivers";
import { PackConfig } from "./pack-config";

/**
 * Judges rows into findings: a waived finding has status "waived"; the rest is judged by enforcement level.
 * In-process rows carry their facts; a preview's rows have them in the message (decoded by message.ts).
 */
export function judgeRows(rows: (Row & { facts?: MessageFacts })[], failOnAdvisory: boolean): Finding[] {
    return sortRows(rows).map(({ facts: given, ...r }) => {
        const facts = given ?? decodeMessage(r.message);
        // The row's own copy, completed by assignment (keys as a spread literal would order them; support/shapes.ts).
        const f = r as Finding;
        f.message = facts.text;
        if (facts.failClosed) f.failClosed = true;
        f.status = facts.waiver
            ? "waived"
            : r.level === "mandatory" || (failOnAdvisory && r.level === "advisory")
              ? "blocking"
              : "advisory";
        if (facts.waiver) f.waiver = facts.waiver;
        return f;
    });
}

/** Waivers of the config that waived nothing, and expired ones, as advisory notices (the gate and check report them). */
export function waiverNotices(config: PackConfig, findings: Finding[], now = new Date()): Notice[] {
    const notices: Notice[] = [];
    for (const [policy, entry] of Object.entries(config)) {
        for (const w of configWaivers(entry.properties ?? {})) {
            if (w.expires && w.expires < today(now)) {
                notices.push({
                    level: "advisory",
                    policy,
                    message: `waiver for ${w.resource} expired on ${w.expires} (${w.reason}): remove or renew it`,
                });
                continue;
            }
            const used = findings.some(
                (f) => f.policy === policy && f.status === "waived" && f.waiver?.reason === w.reason,
            );
            if (!used)
                notices.push({
                    level: "advisory",
                    policy,
                    message: `unused waiver for ${w.resource} (${w.reason}): it matched no finding`,
                });
        }
    }
    return notices;
}
