/**
 * `pko-guard check PATH...`: the gate over Kubernetes manifests (the Argo CD + PKO GitOps flow). One run is
 * one program: every object given is one resource of it, so stack-level rules judge the layout as a whole.
 * Rules are the pack's own policy objects, evaluated in-process (./evaluate.ts) with the reconciled pack
 * config; rows carry file:line:column (of the field the rule named, else of the object).
 * Exit codes as the gate: 0 no blocking violation, 1 blocking violations, 2 bad input or a tool error.
 */
import Table from "cli-table3";
import * as fs from "fs";
import * as path from "path";
import { policies } from "../../policies";
import { Row, sortRows } from "../../harness/model";
import { loadPackConfig, reconcilePackConfig, PackConfig } from "../../harness/policy-config";
import { ReportRequest, renderSubjects } from "../../harness/reports/write";
import { ReportSubject } from "../../harness/reports/subject";
import { Check } from "../../harness/verdict";
import { EvalRow, evaluatePack, packPolicyMeta } from "./evaluate";
import { LoadResult, ManifestObject, Skip, evalResources, loadManifests } from "./manifests";

export interface CheckOptions {
    paths: string[];
    config?: string;
    reports: ReportRequest[];
    failOnAdvisory: boolean;
    repoRoot?: string;
    cwd?: string;
    stdin?: () => string;
}

export interface CheckSummary {
    files: number;
    documents: number;
    objects: number;
    /** Objects of kinds no rule reads (counted, never reported). */
    unread: number;
    skipped: Skip[];
}

export interface CheckResult {
    rows: Row[];
    blocking: Row[];
    summary: CheckSummary;
    subject: ReportSubject;
    exitCode: 0 | 1;
}

/** The reconciled pack config for a config file (or the defaults), validated as the engine would. */
export function checkPackConfig(file?: string): PackConfig {
    return reconcilePackConfig(packPolicyMeta(), file ? loadPackConfig(file) : {}, file ?? "default config");
}

/**
 * The field a row points at: the one the rule gave, else the first field path its message names (messages
 * name the field they are about, e.g. `spec.envRefs.PULUMI_ACCESS_TOKEN`), else none (the object's line).
 */
export function rowField(r: EvalRow): string | undefined {
    if (r.field) return r.field;
    const m = /(?:^|[\s(`'"])((?:spec|metadata|roleRef|subjects|rules|data|stringData)(?:\.[A-Za-z0-9_\-/]+|\[\d+\])*)/.exec(r.message);
    return m ? m[1] : undefined;
}

/** Evaluates loaded manifests with a reconciled config; rows located at file:line:column. */
export function evaluateManifests(load: LoadResult, config: PackConfig): Row[] {
    const byUrn = new Map<string, ManifestObject>(load.objects.map((o) => [o.urn, o]));
    const rows = evaluatePack(evalResources(load.objects), config);
    return sortRows(
        rows.map((r) => {
            const obj = byUrn.get(r.urn);
            const { field: _field, ...plain } = r;
            if (!obj) return plain;
            const field = rowField(r);
            const at = field ? obj.locate(field) : { line: obj.line, column: obj.column };
            return { ...plain, file: obj.repoPath ?? obj.file, line: at.line, column: at.column, ...(field ? { field } : {}) };
        }),
    );
}

export function runCheck(o: CheckOptions): CheckResult {
    if (o.paths.length === 0) throw new Error("no paths");
    const config = checkPackConfig(o.config);
    const load = loadManifests(o.paths, { repoRoot: o.repoRoot, cwd: o.cwd, stdin: o.stdin });
    const rows = evaluateManifests(load, config);
    const blocking = rows.filter((r) => r.level === "mandatory" || (o.failOnAdvisory && r.level === "advisory"));
    const where = (r: Row) => (r.file ? `${r.file}:${r.line}:${r.column}: ` : "");
    const checks: Check[] = policies.map((p): Check => {
        const mine = rows.filter((r) => r.policy === p.name);
        const blocks = blocking.filter((r) => r.policy === p.name);
        return {
            fixture: "manifests",
            leg: "check",
            policy: p.name,
            resource: "",
            expected: 0,
            got: mine.length,
            outcome: blocks.length > 0 ? "mismatch" : "match",
            note: mine.length > 0 ? mine.map((r) => `${where(r)}${r.resource}: ${r.message}`).join("\n") : undefined,
        };
    });
    const named = load.objects.filter((x) => x.named);
    const summary: CheckSummary = {
        files: load.files,
        documents: load.documents,
        objects: load.objects.length,
        unread: load.objects.filter((x) => !x.read).length,
        skipped: load.skipped,
    };
    const firstFile = named[0]?.repoPath ?? named[0]?.file ?? "manifests";
    const subject: ReportSubject = {
        name: "manifests",
        description: `pko-guard check of ${o.paths.join(" ")} (${summary.objects} object(s) in ${summary.files} file(s))`,
        programFile: firstFile,
        rows,
        checks,
    };
    return { rows, blocking, summary, subject, exitCode: blocking.length > 0 ? 1 : 0 };
}

export function summaryLine(r: CheckResult): string {
    const s = r.summary;
    const skipped = s.skipped.length > 0 ? `, ${s.skipped.length} skipped` : "";
    return (
        `${s.objects} object(s) in ${s.files} file(s) (${s.unread} of kinds no rule reads${skipped}); ` +
        `${r.rows.length} violation(s), ${r.blocking.length} blocking: ${r.exitCode === 0 ? "PASS" : "FAIL"}`
    );
}

export function renderCheckTable(r: CheckResult): string {
    const table = new Table({
        head: ["location", "policy", "resource", "level", "blocking", "message"],
        style: { head: [], border: [] },
        wordWrap: true,
        wrapOnWordBoundary: false,
        colWidths: [44, 38, 28, 11, 10, 56],
    });
    for (const row of r.rows) {
        const loc = row.file ? `${row.file}:${row.line}:${row.column}` : "";
        table.push([loc, row.policy, row.resource, row.level, r.blocking.includes(row) ? "yes" : "no", row.message]);
    }
    if (r.rows.length === 0) table.push(["", "(none)", "", "", "no", "no violations"]);
    return `${table.toString()}\n${summaryLine(r)}\n`;
}

/** A check run in the shared JSON report shape (one "fixture" = the manifests, one leg = "check"). */
export function checkJson(r: CheckResult, durationMs: number): string {
    return (
        JSON.stringify(
            {
                schemaVersion: 1,
                tool: "pko-guard",
                generatedAt: new Date().toISOString(),
                summary: { fixtures: 1, match: r.exitCode === 0 ? 1 : 0, mismatch: r.exitCode === 0 ? 0 : 1, error: 0, skipped: 0 },
                fixtures: [
                    {
                        fixture: r.subject.name,
                        description: r.subject.description ?? r.subject.name,
                        outcome: r.exitCode === 0 ? "match" : "mismatch",
                        legs: [{ leg: "check", durationMs, rows: r.rows }],
                        checks: r.subject.checks,
                    },
                ],
            },
            null,
            2,
        ) + "\n"
    );
}

export function writeCheckReports(r: CheckResult, requests: ReportRequest[], durationMs: number): void {
    for (const req of requests) {
        fs.mkdirSync(path.dirname(path.resolve(req.file)), { recursive: true });
        fs.writeFileSync(req.file, renderSubjects(req.format, [r.subject], () => checkJson(r, durationMs)));
    }
}
