/**
 * `pko-guard check PATH...`: the gate over Kubernetes manifests (the Argo CD + PKO GitOps flow). One run is
 * one program: every object given is one resource of it, so stack-level rules judge the layout as a whole.
 * Rules are the pack's own policy objects, evaluated in-process (./evaluate.ts) with the reconciled pack
 * config; rows carry file:line:column (of the field the rule named, else of the object).
 * Exit codes as the gate: 0 no blocking violation, 1 blocking violations, 2 bad input or a tool error.
 */
import * as path from "path";
import { Row, sortRows } from "../model";
import { loadPackConfig, reconcilePackConfig, PackConfig } from "../policy-config";
import { STDIN_FILE } from "../reports/location";
import { Finding, ProjectSubject } from "../reports/subject";
import { judgeRows, waiverNotices } from "../judge";
import { EvalRow, evaluatePack, packPolicyMeta } from "./evaluate";
import { LoadResult, ManifestObject, Skip, evalResources, loadManifests } from "./manifests";

export interface CheckOptions {
    paths: string[];
    config?: string;
    failOnAdvisory: boolean;
    repoRoot?: string;
    cwd?: string;
    stdin?: () => string;
    /** Skip a folder's oversized, undecodable and non-regular files instead of failing (--skip-unreadable). */
    skipUnreadable?: boolean;
}

export interface CheckSummary {
    files: number;
    documents: number;
    objects: number;
    /** Objects of kinds no rule reads (counted, never reported). */
    unread: number;
    skipped: Skip[];
}

/** A check run: a report subject (the manifests as one project) and what was read. */
export interface CheckResult {
    subject: ProjectSubject;
    summary: CheckSummary;
}

/** The reconciled pack config for a config file (or the defaults), validated as the engine would. */
export function checkPackConfig(file?: string): PackConfig {
    return reconcilePackConfig(packPolicyMeta(), file ? loadPackConfig(file) : {}, file ?? "default config");
}

/**
 * The field a row points at: the one the rule gave, else the first field path its message names (messages
 * name the field they are about, e.g. `spec.envRefs.PULUMI_ACCESS_TOKEN`), else none (the object's line).
 * Values a message quotes ("...", JSON-quoted by the rules) are input, not field names, and are passed over:
 * a branch named "spec.x" must not move the finding.
 */
export function rowField(r: EvalRow): string | undefined {
    if (r.field) return r.field;
    const unquoted = r.message.replace(/"(?:[^"\\]|\\.)*"/g, '""');
    const m = /(?:^|[\s(`'"])((?:spec|metadata|roleRef|subjects|rules|data|stringData)(?:\.[A-Za-z0-9_\-/]+|\[\d+\])*)/.exec(unquoted);
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
            // The one location rule (reports/location.ts): repository-relative, else absolute, else standard input.
            return { ...plain, file: obj.repoPath ?? obj.path ?? STDIN_FILE, line: at.line, column: at.column, ...(field ? { field } : {}) };
        }),
    );
}

export function runCheck(o: CheckOptions): CheckResult {
    const started = Date.now();
    const config = checkPackConfig(o.config);
    const load = loadManifests(o.paths, { repoRoot: o.repoRoot, cwd: o.cwd, stdin: o.stdin, skipUnreadable: o.skipUnreadable });
    // Judged as the gate judges a preview: waived findings (marked by the pack) do not block.
    const findings: Finding[] = judgeRows(evaluateManifests(load, config), o.failOnAdvisory);
    const named = load.objects.filter((x) => x.named);
    const summary: CheckSummary = {
        files: load.files,
        documents: load.documents,
        objects: load.objects.length,
        unread: load.objects.filter((x) => !x.read).length,
        skipped: load.skipped,
    };
    const subject: ProjectSubject = {
        kind: "project",
        name: "manifests",
        stack: "",
        description: `pko-guard check of ${o.paths.join(" ")} (${summary.objects} object(s) in ${summary.files} file(s))`,
        programFile: named[0]?.path ?? (named[0] ? STDIN_FILE : path.join(load.repoRoot, "manifests")),
        root: load.repoRoot,
        findings,
        notices: waiverNotices(config, findings),
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
    };
    return { subject, summary };
}

/** The subject of a check that could not judge (bad input, an error, an interrupt): every report still renders it. */
export function checkErrorSubject(paths: string[], message: string, durationMs: number, repoRoot?: string): ProjectSubject {
    const first = paths.find((p) => p !== "-");
    return {
        kind: "project",
        name: "manifests",
        stack: "",
        description: `pko-guard check of ${paths.join(" ")}`,
        programFile: first ? path.resolve(first) : "manifests",
        ...(repoRoot !== undefined ? { root: path.resolve(repoRoot) } : {}),
        findings: [],
        outcome: "error",
        error: message,
        durationMs,
    };
}

export function summaryLine(r: CheckResult): string {
    const s = r.summary;
    const skipped = s.skipped.length > 0 ? `, ${s.skipped.length} skipped` : "";
    const blocking = r.subject.findings.filter((f) => f.status === "blocking").length;
    return (
        `${s.objects} object(s) in ${s.files} file(s) (${s.unread} of kinds no rule reads${skipped}); ` +
        `${r.subject.findings.length} violation(s), ${blocking} blocking: ${r.subject.outcome === "pass" ? "PASS" : "FAIL"}`
    );
}
