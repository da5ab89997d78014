/**
 * What every report renders: subjects. A fixture subject carries a harness verdict (legs, rows, checks);
 * a project subject carries a gate's findings (rows judged blocking or not). JSON, JUnit and SARIF are
 * all rendered from these and nothing else.
 */
import * as fs from "fs";
import * as path from "path";
import { policies } from "../policies/index";
import { REPO_ROOT } from "../support/paths";
import { Finding, Notice, Row } from "../evaluation/rows";

interface SubjectBase {
    /** Fixture name or project name. */
    name: string;
    description: string;
    /** The program's entry file (absolute; SARIF makes it relative to the repository root). */
    programFile: string;
    /** The repository root (%SRCROOT%) when the command knows it (check); else the program's git top level. */
    root?: string;
}

/** A leg of a harness run, as reports show it (the harness's LegResult has this shape). */
export type ReportLeg = { leg: string; durationMs: number } & (
    { status: "ran"; rows: Row[] } | { status: "skipped"; reason: string } | { status: "error"; message: string }
);

/** One line of a harness verdict, as reports show it (the harness's Check has this shape). */
export interface ReportCheck {
    fixture: string;
    leg: string;
    policy?: string;
    check?: string;
    resource: string;
    expected: number;
    got: number;
    outcome: "match" | "mismatch" | "error" | "skipped";
    note?: string;
}

export interface FixtureSubject extends SubjectBase {
    kind: "fixture";
    verdict: {
        fixture: string;
        description: string;
        outcome: ReportCheck["outcome"];
        legs: ReportLeg[];
        checks: ReportCheck[];
    };
}

/** A Kubernetes object a run judged (reports that list passes, such as the PolicyReport, need them). */
export interface ReportObject {
    apiVersion?: string;
    kind: string;
    name: string;
    namespace?: string;
}

export interface ProjectSubject extends SubjectBase {
    kind: "project";
    stack: string;
    findings: Finding[];
    /** "error": the tool could not judge the project (the message says why); reports still render it. */
    outcome: "pass" | "fail" | "error";
    error?: string;
    notices?: Notice[];
    durationMs: number;
    /** The Kubernetes objects some rule judged, when the run knows them (check; not the gate). */
    objects?: ReportObject[];
    /** The remote sources the run fetched or took from its cache (check), in the order first used. */
    sources?: ReportSource[];
}

/**
 * A remote source a run read (gitops/fetch/): its kind, URL (never with credentials), the reference as written,
 * what it resolved to, the content's digest, whether the reference can move, and whether the cache answered.
 */
export interface ReportSource {
    kind: string;
    url: string;
    ref: string;
    resolved: string;
    digest: string;
    floating: boolean;
    fromCache: boolean;
}

export type ReportSubject = FixtureSubject | ProjectSubject;

/** What names a project in its reports: who ran on what (`root` only when the command knows it). */
export type ProjectIdentity = Pick<ProjectSubject, "name" | "stack" | "description" | "programFile" | "root">;

/**
 * The subject of a command that could not judge (bad input, an error, an interrupt): no findings, the outcome
 * "error" and why. Every report still renders it; gate, check and audit each only say what they ran on.
 */
export function errorProjectSubject(who: ProjectIdentity, message: string, durationMs: number): ProjectSubject {
    return { kind: "project", ...who, findings: [], outcome: "error", error: message, durationMs };
}

/** The violations a subject reports: a fixture's rows from the first leg that ran (legs agree when parity holds). */
export function subjectRows(s: ReportSubject): Row[] {
    if (s.kind === "project") return s.findings;
    const ran = s.verdict.legs.find((l) => l.status === "ran");
    return ran?.status === "ran" ? ran.rows : [];
}

/** The anchor of a rule's section in the rule reference (an HTML anchor `<a id="rule-NAME">` in docs/rules.md). */
export function ruleAnchor(name: string): string {
    return `rule-${name}`;
}

/**
 * Where a rule's documentation is: its section of the rule reference (`docs/rules.md#rule-<name>`, generated
 * from the rules by `npm run docs`, relative to the repository root, and shipped in the package). Its link with a
 * host is under PKO_GUARD_DOCS_URL when the user says where their copy is published (the base under which the
 * repository's files are served, e.g. `https://github.com/acme/pko-guard/blob/v0.1.0`), else under the package's
 * own repository (package.json `repository`, its main branch); pko-guard invents no other host.
 */
export function ruleDocPath(name: string): string {
    return `docs/rules.md#${ruleAnchor(name)}`;
}

/** The package's own repository as a base of its files' pages (`https://host/owner/repo/blob/main`), if it has one. */
export const PACKAGE_DOCS_URL: string | undefined = (() => {
    try {
        const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
            repository?: { url?: string } | string;
        };
        const raw = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
        const url = new URL((raw ?? "").replace(/^git\+/, "").replace(/\.git$/, ""));
        return url.protocol === "https:" ? `${url.origin}${url.pathname.replace(/\/+$/, "")}/blob/main` : undefined;
    } catch {
        return undefined;
    }
})();

/** The documentation base URL (http or https, without a trailing slash): configured, else the package's own. */
export function docsBaseUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
    const raw = env.PKO_GUARD_DOCS_URL?.trim();
    if (!raw) return PACKAGE_DOCS_URL;
    try {
        const u = new URL(raw);
        return u.protocol === "https:" || u.protocol === "http:" ? raw.replace(/\/+$/, "") : undefined;
    } catch {
        return undefined;
    }
}

/** Rule metadata from the pack itself (name, description, severity, remediation, where its documentation is). */
export function ruleCatalogue(env: NodeJS.ProcessEnv = process.env) {
    const base = docsBaseUrl(env);
    return policies.map((p) => ({
        id: p.name,
        description: p.description,
        level: p.enforcementLevel ?? "advisory",
        severity: p.severity,
        remediation: p.remediationSteps,
        url: p.url,
        doc: ruleDocPath(p.name),
        ...(base ? { helpUri: `${base}/${ruleDocPath(p.name)}` } : {}),
    }));
}
