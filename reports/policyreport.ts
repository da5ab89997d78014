/**
 * The Kubernetes PolicyReport (`wgpolicyk8s.io/v1alpha2`, the Policy WG's API that Kyverno, Policy Reporter
 * and other cluster tooling read): one `PolicyReport` per namespace and one `ClusterPolicyReport` for the rest,
 * as a multi-document YAML file. Waived results are `skip` with the waiver in `properties`, as Kyverno reports
 * exceptions. Every string is double-quoted, since the API server decodes YAML 1.1.
 */
import * as jsyaml from "js-yaml";
import { Finding, compareText } from "../evaluation/rows";
import { RULE_KINDS, objectKey, objectOf } from "./finding-objects";
import { ProjectSubject, ReportObject, ReportSubject, ruleCatalogue } from "./subject";
import { extended } from "../support/shapes";

type Result = "pass" | "fail" | "warn" | "skip";

interface ObjectRef {
    apiVersion?: string;
    kind: string;
    name: string;
    namespace?: string;
}

interface ReportResult {
    source: "pko-guard";
    policy: string;
    rule: string;
    category?: string;
    result: Result;
    severity?: string;
    message?: string;
    scored: boolean;
    timestamp: { seconds: number; nanos: number };
    resources?: ObjectRef[];
    properties?: Record<string, string>;
}

const RESULT: Record<Finding["status"], Result> = { blocking: "fail", advisory: "warn", waived: "skip" };

/** A DNS-1123 name for the report. */
function reportName(subject: ProjectSubject): string {
    const base = `pko-guard-${subject.name}${subject.stack ? `-${subject.stack}` : ""}`
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, "-")
        .replace(/^-+|-+$/g, "");
    return base.slice(0, 63).replace(/-+$/, "") || "pko-guard";
}

function severityOf(policy: string): string | undefined {
    return ruleCatalogue().find((r) => r.id === policy)?.severity;
}

/** The PolicyReport file as one string (what the chunks of policyReportChunks make). */
export function renderPolicyReport(subjects: ReportSubject[], now = new Date()): string {
    return [...policyReportChunks(subjects, now)].join("");
}

// Every string value double-quoted: the API server (and kubectl) decode YAML 1.1, where a plain `on`, `y`,
// `NO`, `1_000` or `0b101` (a namespace, an object's name, a message) is a boolean or a number.
const DUMP: jsyaml.DumpOptions = {
    lineWidth: -1,
    noRefs: true,
    quotingType: '"',
    forceQuotes: true,
    skipInvalid: true,
};
const RESULTS_KEY = "results:\n";

/**
 * One document as js-yaml writes it, in pieces: everything before its results, then each result as it stands
 * in the list (written inside a `results` list of its own, that line cut off). A large repository's report is
 * hundreds of megabytes, more than one string can hold: it is written piece by piece, never joined.
 */
function* documentChunks(doc: ReportDocument): Generator<string> {
    const { results, ...head } = doc;
    if (results.length === 0) {
        yield jsyaml.dump(doc, DUMP);
        return;
    }
    yield jsyaml.dump(head, DUMP) + RESULTS_KEY;
    for (const r of results) yield jsyaml.dump({ results: [r] }, DUMP).slice(RESULTS_KEY.length);
}

/** One YAML document of the file: a PolicyReport or ClusterPolicyReport. */
type ReportDocument = Record<string, unknown> & { results: unknown[] };
type Timestamp = ReportResult["timestamp"];
/** Adds a result to the report of a namespace ("" = cluster-scoped). */
type AddResult = (ns: string, r: ReportResult) => void;

/** The PolicyReport file in pieces, in order (reports/write.ts writes them one after another). */
export function* policyReportChunks(subjects: ReportSubject[], now = new Date()): Generator<string> {
    const timestamp = { seconds: Math.floor(now.getTime() / 1000), nanos: 0 };
    const docs: ReportDocument[] = [];
    for (const s of subjects) {
        if (s.kind !== "project") continue;
        docs.push(...subjectDocuments(s, timestamp));
    }
    for (let i = 0; i < docs.length; i++) {
        if (i > 0) yield "---\n";
        yield* documentChunks(docs[i]);
    }
}

/** A subject's reports: its findings, and a pass for each object a rule judges and found nothing on. */
function subjectDocuments(s: ProjectSubject, timestamp: Timestamp): ReportDocument[] {
    // namespace ("" = cluster-scoped) -> results
    const byNamespace = new Map<string, ReportResult[]>();
    const add: AddResult = (ns, r) => {
        const list = byNamespace.get(ns);
        if (list) list.push(r);
        else byNamespace.set(ns, [r]);
    };
    const failed = findingResults(s, timestamp, add);
    passResults(s, failed, timestamp, add);
    return namespaceDocuments(s, byNamespace, timestamp);
}

/** A result for each finding; returns the rule and object of each (`policy\0objectKey`), which get no pass. */
function findingResults(s: ProjectSubject, timestamp: Timestamp, add: AddResult): Set<string> {
    // The subject's objects by identity (the first of a repeated one, as a search would find it): a lookup
    // for each finding, not a pass over every object (100k objects with 150k findings took minutes).
    const objects = new Map<string, ReportObject>();
    for (const o of s.objects ?? []) {
        const key = objectKey(o);
        if (!objects.has(key)) objects.set(key, o);
    }
    const failed = new Set<string>();
    for (const f of s.findings) {
        const obj = objectOf(f);
        const known = obj && objects.get(objectKey(obj));
        const ref: ObjectRef | undefined =
            obj && (known?.apiVersion ? extended({ apiVersion: known.apiVersion }, obj) : extended(obj, {}));
        if (obj) failed.add(`${f.policy}\u0000${objectKey(obj)}`);
        add(obj?.namespace ?? "", {
            source: "pko-guard",
            policy: f.policy,
            rule: f.policy,
            category: "pko-guard",
            result: RESULT[f.status],
            ...(severityOf(f.policy) ? { severity: severityOf(f.policy) } : {}),
            message: f.message,
            scored: true,
            timestamp,
            ...(ref ? { resources: [ref] } : {}),
            properties: {
                level: f.level,
                ...(f.field ? { field: f.field } : {}),
                ...(f.file ? { location: `${f.file}${f.line ? `:${f.line}` : ""}` } : {}),
                ...(f.syncedBy ? { syncedBy: f.syncedBy } : {}),
                ...(f.waiver
                    ? {
                          waiverReason: f.waiver.reason,
                          ...(f.waiver.expires ? { waiverExpires: f.waiver.expires } : {}),
                      }
                    : {}),
            },
        });
    }
    return failed;
}

/** A pass for each object of a kind a rule judges, unless the rule has a finding on it (`failed`). */
function passResults(s: ProjectSubject, failed: Set<string>, timestamp: Timestamp, add: AddResult): void {
    for (const o of s.objects ?? []) {
        for (const [policy, kinds] of Object.entries(RULE_KINDS)) {
            if (!kinds.includes(o.kind) || failed.has(`${policy}\u0000${objectKey(o)}`)) continue;
            add(o.namespace ?? "", {
                source: "pko-guard",
                policy,
                rule: policy,
                category: "pko-guard",
                result: "pass",
                ...(severityOf(policy) ? { severity: severityOf(policy) } : {}),
                scored: true,
                timestamp,
                resources: [
                    extended(o.apiVersion ? { apiVersion: o.apiVersion } : {}, {
                        kind: o.kind,
                        name: o.name,
                        ...(o.namespace ? { namespace: o.namespace } : {}),
                    }),
                ],
            });
        }
    }
}

/**
 * One report per namespace in name order (the cluster-scoped one first), its results sorted; a subject with no
 * result gets one empty ClusterPolicyReport, with an error result when it could not be judged.
 */
function namespaceDocuments(
    s: ProjectSubject,
    byNamespace: Map<string, ReportResult[]>,
    timestamp: Timestamp,
): ReportDocument[] {
    const docs: ReportDocument[] = [];
    const name = reportName(s);
    for (const ns of [...byNamespace.keys()].sort()) {
        const results = byNamespace
            .get(ns)!
            .sort(
                (a, b) =>
                    compareText(a.policy, b.policy) ||
                    compareText(a.resources?.[0]?.name ?? "", b.resources?.[0]?.name ?? ""),
            );
        const n = (r: Result) => results.filter((x) => x.result === r).length;
        docs.push({
            apiVersion: "wgpolicyk8s.io/v1alpha2",
            kind: ns ? "PolicyReport" : "ClusterPolicyReport",
            metadata: {
                name,
                ...(ns ? { namespace: ns } : {}),
                labels: { "app.kubernetes.io/managed-by": "pko-guard" },
            },
            summary: { pass: n("pass"), fail: n("fail"), warn: n("warn"), error: 0, skip: n("skip") },
            results,
        });
    }
    if (byNamespace.size === 0) {
        docs.push({
            apiVersion: "wgpolicyk8s.io/v1alpha2",
            kind: "ClusterPolicyReport",
            metadata: { name, labels: { "app.kubernetes.io/managed-by": "pko-guard" } },
            summary: { pass: 0, fail: 0, warn: 0, error: s.outcome === "error" ? 1 : 0, skip: 0 },
            results:
                s.outcome === "error"
                    ? [
                          {
                              source: "pko-guard",
                              policy: "pko-guard",
                              rule: "pko-guard",
                              result: "error",
                              message: s.error ?? "pko-guard could not judge",
                              scored: true,
                              timestamp,
                          },
                      ]
                    : [],
        });
    }
    return docs;
}
