/**
 * `pko-guard audit [--kubeconfig FILE] [--context NAME]`: judges what a live cluster already holds.
 * The objects the rules read are listed through the webhook's cache (Secret values never kept) and judged as one
 * program by `check`'s evaluator, with its config, table, reports and exit codes. An object that cannot be read is a
 * blocking finding of its own (`pko-guard-unreadable-object`), so an audit that could not judge everything never
 * passes.
 */
import { Command } from "commander";
import { BadInputError } from "../support/errors";
import { packConfig } from "../evaluation/pack-config";
import { evaluatePack } from "../evaluation/evaluate";
import { judgeRows, waiverNotices } from "../evaluation/judge";
import { rowField } from "../gitops/manifests/evaluate-manifests";
import { sortRows } from "../evaluation/rows";
import { ProjectSubject, errorProjectSubject } from "../reports/subject";
import { loadKubeConfig } from "../cluster/kubeconfig";
import { ClusterCache } from "../cluster/cache";
import { Transport } from "../cluster/client";
import { UNREADABLE_OBJECT } from "../cluster/admission";
import { WATCHED_KINDS, clusterResource, grantsOnlySystemMasters } from "../cluster/kinds";
import { clusterReview } from "../cluster/change";
import { Finding } from "../evaluation/rows";
import { extended } from "../support/shapes";
import { timeoutSeconds } from "../support/options";
import type { Run } from "./guide";
import { runJudged } from "./verdict/judged-run";
import { ReportingOptions, reportingOptions } from "./verdict/reporting-options";

export interface AuditOptions {
    kubeconfig?: string;
    context?: string;
    config?: string;
    failOnAdvisory: boolean;
    timeoutMs: number;
}

export interface AuditResult {
    subject: ProjectSubject;
    /** Objects read, and of them judged (all but those pko-guard could not read), by kind. */
    counts: Record<string, { read: number; judged: number }>;
    server: string;
}

/** `given.transport` replaces the requests and watches sent to the API server (tests). */
export async function runAudit(o: AuditOptions, given?: { transport?: Transport }): Promise<AuditResult> {
    const started = Date.now();
    const config = packConfig(o.config);
    const kc = loadKubeConfig(o.kubeconfig, o.context);
    const server = kc.getCurrentCluster()?.server ?? "";
    const errors: string[] = [];
    const cache = new ClusterCache(kc, {
        log: (event, f) => event === "cache.list_failed" && errors.push(`${String(f.kind)}: ${String(f.error)}`),
        transport: given?.transport,
    });
    cache.start();
    try {
        await Promise.race([
            cache.waitForSync(o.timeoutMs),
            new Promise<never>((_, reject) => {
                const t = setInterval(() => {
                    if (errors.length > 0)
                        reject(new BadInputError(`cannot read the cluster at ${server}: ${errors[0]}`));
                }, 100);
                t.unref();
            }),
        ]);
    } catch (e) {
        throw e instanceof BadInputError ? e : new BadInputError(String((e as Error).message).split("\n")[0]);
    } finally {
        cache.stop();
    }
    const objects = WATCHED_KINDS.flatMap((k) => cache.list(k.kind)).filter((o) => !grantsOnlySystemMasters(o));
    const unreadable = cache.unreadable();
    const counts = Object.fromEntries(
        WATCHED_KINDS.map((k) => [
            k.kind,
            { read: cache.size(k.kind) + cache.unreadable(k.kind).length, judged: cache.size(k.kind) },
        ]),
    );
    // With every Stack by the Pulumi stack it names: production belongs to the stack, as at the door.
    const rows = evaluatePack(objects.map(clusterResource), config, undefined, "all", clusterReview(objects)).map(
        (r) => {
            const { field: _f, ...plain } = r;
            const field = rowField(r);
            return field ? extended(plain, { field }) : plain;
        },
    );
    const findings = judgeRows(sortRows(rows), o.failOnAdvisory);
    for (const u of unreadable) {
        const r = clusterResource({
            apiVersion: u.apiVersion,
            kind: u.kind,
            metadata: { namespace: u.namespace, name: u.name },
        });
        const unjudged: Finding = {
            policy: UNREADABLE_OBJECT,
            resource: r.name,
            urn: r.urn,
            type: r.type,
            level: "mandatory",
            status: "blocking",
            failClosed: true,
            message: `${r.name} was read but not judged: ${u.reason}; pko-guard cannot tell what it grants or holds, so the audit fails until it is fixed or removed`,
        };
        findings.push(unjudged);
    }
    const subject: ProjectSubject = {
        kind: "project",
        name: "cluster",
        stack: kc.getCurrentContext(),
        description: `pko-guard audit of ${server} (context ${kc.getCurrentContext()}; ${objects.length} object(s)${unreadable.length > 0 ? `, ${unreadable.length} more not judged` : ""})`,
        programFile: server,
        findings,
        notices: waiverNotices(config, findings),
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
    };
    return { subject, counts, server };
}

export function auditSummaryLine(r: AuditResult): string {
    const counts = Object.entries(r.counts).filter(([, n]) => n.read > 0);
    const read = counts.map(([k, n]) => `${n.read} ${k} read, ${n.judged} judged`).join("; ");
    const unjudged = counts.reduce((sum, [, n]) => sum + n.read - n.judged, 0);
    const blocking = r.subject.findings.filter((f) => f.status === "blocking").length;
    return `${read || "no object read"}${unjudged > 0 ? ` (${unjudged} not judged: ${UNREADABLE_OBJECT})` : ""}; ${r.subject.findings.length} violation(s), ${blocking} blocking: ${r.subject.outcome === "pass" ? "PASS" : "FAIL"}`;
}

/** The subject of an audit that could not judge (no cluster, bad config, an interrupt): every report still renders it. */
export function auditErrorSubject(
    o: { kubeconfig?: string; context?: string },
    message: string,
    durationMs: number,
): ProjectSubject {
    const where = `${o.context ? `context ${o.context}` : "the current context"}${o.kubeconfig ? ` of ${o.kubeconfig}` : ""}`;
    return errorProjectSubject(
        {
            name: "cluster",
            stack: o.context ?? "",
            description: `pko-guard audit of ${where}`,
            programFile: o.kubeconfig ?? "cluster",
        },
        message,
        durationMs,
    );
}

interface AuditCliOptions extends ReportingOptions {
    kubeconfig?: string;
    context?: string;
    timeout: number;
}

export function command(run: Run): Command {
    return reportingOptions(
        new Command("audit")
            .summary("judge what a live cluster holds")
            .description(
                "judge the Stacks and related objects of a live cluster with the pko-guard policies (check's table, reports and exit codes)",
            ),
    )
        .option("--kubeconfig <file>", "kubeconfig (default: KUBECONFIG or ~/.kube/config)")
        .option("--context <name>", "kubeconfig context")
        .option("--timeout <seconds>", "deadline for reading the cluster", timeoutSeconds, 300)
        .action(async (o: AuditCliOptions) => {
            run.code = await runJudged(
                run.term,
                o,
                [...(o.config ? [o.config] : []), ...(o.kubeconfig ? [o.kubeconfig] : [])],
                (message, durationMs) => auditErrorSubject(o, message, durationMs),
                async () => {
                    const result = await runAudit({
                        kubeconfig: o.kubeconfig,
                        context: o.context,
                        config: o.config,
                        failOnAdvisory: o.failOnAdvisory,
                        timeoutMs: o.timeout * 1000,
                    });
                    return { subject: result.subject, summaryText: auditSummaryLine(result) };
                },
            );
        });
}
