/**
 * SARIF 2.1.0 for GitHub code scanning: one run of the pko-guard tool, its rules from the pack's own metadata,
 * one result per violation at the resource's declaration line. Paths follow ./location.ts, relative to %SRCROOT%;
 * no absolute path is written. A helpUri is set only under PKO_GUARD_DOCS_URL (SARIF wants an absolute URI and
 * pko-guard invents no host). `partialFingerprints` hash the rule, resource and message with numbers removed, so
 * a finding keeps its fingerprint across runs and line moves.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { pathToFileURL } from "url";
import { jsonChunks } from "./json-chunks";
import { findingPlace, sourceRoot } from "./location";

export { sourceRoot };
import type { Log, Notification, Result, ReportingDescriptor } from "sarif";
import { decodeMessage } from "../policies/model/message";
import { locateRows } from "../engine/source-locations";
import { REPO_ROOT } from "../support/paths";
import { Finding } from "../evaluation/rows";
import { ReportSubject, docsBaseUrl, ruleCatalogue, subjectRows } from "./subject";

const VERSION = String(
    (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: unknown }).version,
);

/** GitHub's security-severity scale (critical 9.0+, high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9). */
export const SECURITY_SEVERITY: Record<string, string> = { low: "3.0", medium: "5.5", high: "8.0", critical: "9.5" };

/** A file as a SARIF artifact location (the rule of ./location.ts). */
export function artifactLocation(
    file: string,
    root: string,
): { uri: string; uriBaseId?: string; description?: { text: string } } {
    const p = findingPlace(file, root);
    if (p.kind === "stdin") return { uri: "stdin", uriBaseId: "STDIN", description: { text: "standard input" } };
    if (p.kind === "fetched") return { uri: p.url, description: { text: "a file of a fetched source (absolute URI)" } };
    if (p.kind === "outside")
        return {
            uri: encodeURIComponent(p.name),
            uriBaseId: "OUTSIDE",
            description: { text: "a file outside the repository" },
        };
    return { uri: p.path.split("/").map(encodeURIComponent).join("/"), uriBaseId: "%SRCROOT%" };
}

/** A fingerprint that survives re-runs and line moves: rule, resource identity, message without numbers. */
export function fingerprint(ruleId: string, identity: string, message: string): string {
    const normalized = message.replace(/\d+/g, "#").replace(/\s+/g, " ").trim().toLowerCase();
    return createHash("sha256").update(`${ruleId}\u0000${identity}\u0000${normalized}`).digest("hex").slice(0, 32);
}

function rootUri(root: string): string {
    const href = pathToFileURL(root).href;
    return href.endsWith("/") ? href : `${href}/`;
}

/** The SARIF file in pieces, in order (never joined: the results of a large repository are more than one string). */
export function* sarifChunks(subjects: ReportSubject[]): Generator<string> {
    yield* jsonChunks(sarifLog(subjects), 2);
    yield "\n";
}

/** The SARIF file as one string (what the pieces of sarifChunks make). */
export function renderSarif(subjects: ReportSubject[]): string {
    return JSON.stringify(sarifLog(subjects), null, 2) + "\n";
}

/** The run's rules as SARIF reporting descriptors, in the catalogue's order. */
function sarifRules(catalogue: ReturnType<typeof ruleCatalogue>): ReportingDescriptor[] {
    return catalogue.map((r) => ({
        id: r.id,
        name: r.id,
        shortDescription: { text: r.description },
        fullDescription: { text: `${r.description} Fix: ${r.remediation ?? ""}`.trim() },
        help: {
            text: `${r.remediation ?? r.description} Documentation: ${r.doc} in pko-guard.`,
            markdown: `**${r.id}**: ${r.description}\n\nFix: ${r.remediation ?? ""}\n\nDocumentation: \`${r.doc}\` in pko-guard (\`pko-guard explain ${r.id}\`).`,
        },
        ...(r.helpUri ? { helpUri: r.helpUri } : {}),
        defaultConfiguration: { level: r.level === "mandatory" ? "error" : "warning" },
        properties: {
            "security-severity": SECURITY_SEVERITY[r.severity ?? "medium"] ?? SECURITY_SEVERITY.medium,
            severity: r.severity ?? "medium",
            precision: "high",
            tags: ["security", "pulumi", "crossguard", "kubernetes"],
        },
    }));
}

/** The SARIF log of a run. */
function sarifLog(subjects: ReportSubject[]): Log {
    const catalogue = ruleCatalogue();
    const base = docsBaseUrl();
    const rules = sarifRules(catalogue);
    const ruleIndex = new Map(catalogue.map((r, i) => [r.id, i]));
    // One root for the run: the first subject's repository (subjects of one run share a repository).
    const root = subjects.length > 0 ? (subjects[0].root ?? sourceRoot(subjects[0].programFile)) : process.cwd();
    const results: Result[] = [];
    const notifications: Notification[] = [];
    // The remote sources check read: each once, as the JSON report lists them.
    const sources = subjects.flatMap((s) => (s.kind === "project" ? (s.sources ?? []) : []));
    for (const s of subjects) {
        notifications.push(...subjectNotifications(s));
        // Rows without a location (a fixture's) are located in the program as the gate locates its findings.
        for (const row of locateRows(subjectRows(s), path.dirname(s.programFile), path.basename(s.programFile)))
            results.push(sarifResult(row, s, root, ruleIndex));
    }
    const log: Log = {
        $schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: [
            {
                tool: {
                    driver: {
                        name: "pko-guard",
                        version: VERSION,
                        semanticVersion: VERSION,
                        ...(base ? { informationUri: `${base}/README.md` } : {}),
                        rules,
                    },
                },
                originalUriBaseIds: { "%SRCROOT%": { uri: rootUri(root) } },
                invocations: [
                    { executionSuccessful: notifications.length === 0, toolExecutionNotifications: notifications },
                ],
                results,
                ...(sources.length > 0 ? { properties: { fetchedSources: sources } } : {}),
            },
        ],
    };
    return log;
}

/** What a subject says about the run itself: a project the gate could not run, a fixture leg that failed. */
function subjectNotifications(s: ReportSubject): Notification[] {
    const notifications: Notification[] = [];
    if (s.kind === "project" && s.outcome === "error") {
        notifications.push({
            level: "error",
            message: { text: `${s.name} (stack ${s.stack}): ${s.error ?? "the gate could not run"}` },
        });
    }
    if (s.kind === "fixture") {
        for (const l of s.verdict.legs)
            if (l.status === "error")
                notifications.push({ level: "error", message: { text: `${s.name} ${l.leg}: ${l.message}` } });
    }
    return notifications;
}

/** One row of a subject as a SARIF result (located under `root`, its waiver as a suppression). */
function sarifResult(
    row: ReturnType<typeof locateRows>[number],
    s: ReportSubject,
    root: string,
    ruleIndex: Map<string, number>,
): Result {
    const f = row as Finding;
    const file = row.file ?? s.programFile;
    const region = { startLine: row.line ?? 1, ...(row.column ? { startColumn: row.column } : {}) };
    const identity = row.urn || `${s.name}/${row.resource}`;
    const result: Result = {
        ruleId: row.policy,
        ...(ruleIndex.has(row.policy) ? { ruleIndex: ruleIndex.get(row.policy) } : {}),
        level: row.level === "mandatory" ? "error" : "warning",
        message: { text: `${row.resource ? `${row.resource}: ` : ""}${row.message}` },
        locations: [
            {
                physicalLocation: { artifactLocation: artifactLocation(file, root), region },
                ...(row.urn
                    ? {
                          logicalLocations: [{ name: row.resource, fullyQualifiedName: row.urn, kind: "resource" }],
                      }
                    : {}),
            },
        ],
        partialFingerprints: { "pkoGuard/v1": fingerprint(row.policy, identity, row.message) },
        properties: {
            subject: s.name,
            resourceType: row.type,
            ...(f.status ? { status: f.status } : {}),
            ...(row.syncedBy ? { syncedBy: row.syncedBy } : {}),
        },
    };
    // Gate and check findings say "waived"; a fixture's rows carry the pack's mark in the message.
    const waiver = f.status
        ? f.status === "waived"
            ? (f.waiver ?? { reason: "waived" })
            : undefined
        : decodeMessage(row.message).waiver;
    if (waiver) {
        result.suppressions = [
            {
                kind: "external",
                status: "accepted",
                justification: `${waiver.reason}${waiver.expires ? ` (until ${waiver.expires})` : ""}`,
            },
        ];
    }
    return result;
}
