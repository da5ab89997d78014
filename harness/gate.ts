/**
 * The CI compliance gate for users' own Pulumi projects:
 *
 *   pko-guard gate [PROJECT_DIR] --stack NAME [--config FILE] [--report FORMAT=FILE ...] [--fail-on-advisory]
 *
 * Runs a real `pulumi preview --policy-pack <pko-guard>` of the project's stack (with the user's own
 * backend and credentials), prints a verdict table and writes the requested reports.
 * Exit codes: 0 no blocking violation; 1 blocking violations (mandatory, or advisory with
 * --fail-on-advisory); 2 bad usage or a tool error (missing CLI, program error, bad config).
 */
import Table from "cli-table3";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError } from "./expect";
import { previewWithPack } from "./legs/real";
import { Row, sortRows } from "./model";
import { REPO_ROOT } from "./paths";
import { PolicyMeta, loadPackConfig, reconcilePackConfig, yamlErrorPosition } from "./policy-config";
import { renderSubjects, ReportRequest } from "./reports/write";
import { ReportSubject } from "./reports/subject";
import { findGateCli } from "./toolchain";
import { Check } from "./verdict";

export interface GateOptions {
    projectDir: string;
    stack: string;
    config?: string;
    reports: ReportRequest[];
    failOnAdvisory: boolean;
    timeoutMs: number;
}

export interface GateResult {
    project: string;
    rows: Row[];
    blocking: Row[];
    subject: ReportSubject;
    exitCode: 0 | 1;
}

/** The pack's policies as the config reconciler needs them (from the pack's own modules). */
export function packPolicies(): PolicyMeta[] {
    return policies.map((p) => ({
        name: p.name,
        enforcementLevel: p.enforcementLevel ?? "advisory",
        configSchema: p.configSchema as PolicyMeta["configSchema"],
    }));
}

function projectInfo(dir: string): { name: string; main: string } {
    const file = path.join(dir, "Pulumi.yaml");
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new BadInputError(`${dir}: no such project folder`);
    if (!fs.existsSync(file)) throw new BadInputError(`${dir}: no Pulumi.yaml (not a Pulumi project)`);
    let doc: { name?: unknown; main?: unknown } | null;
    try {
        doc = YAML.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new BadInputError(`${file}: not valid YAML${yamlErrorPosition(e)}`);
    }
    if (typeof doc?.name !== "string") throw new BadInputError(`${file}: missing project name`);
    const main = typeof doc.main === "string" ? doc.main : fs.existsSync(path.join(dir, "index.ts")) ? "index.ts" : "index.js";
    return { name: doc.name, main };
}

export async function runGate(o: GateOptions): Promise<GateResult> {
    const dir = path.resolve(o.projectDir);
    const project = projectInfo(dir);
    if (o.config) reconcilePackConfig(packPolicies(), loadPackConfig(o.config), o.config);
    const cli = findGateCli();
    const preview = await previewWithPack({
        cwd: dir,
        env: { ...process.env, ...(cli.binDir ? { PATH: `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` } : {}), PULUMI_SKIP_UPDATE_CHECK: "true" },
        stack: o.stack,
        pulumi: cli.pulumi,
        packDir: REPO_ROOT,
        policyConfig: o.config ? path.resolve(o.config) : undefined,
        timeoutMs: o.timeoutMs,
        descriptions: new Map(policies.map((p) => [p.name, p.description])),
    });
    if (preview.error) throw new BadInputError(preview.error);
    const rows = sortRows(preview.rows);
    const blocking = rows.filter((r) => r.level === "mandatory" || (o.failOnAdvisory && r.level === "advisory"));
    const checks: Check[] = policies.map((p): Check => {
        const mine = rows.filter((r) => r.policy === p.name);
        const blocks = blocking.filter((r) => r.policy === p.name);
        return {
            fixture: project.name,
            leg: "gate",
            policy: p.name,
            resource: "",
            expected: 0,
            got: mine.length,
            outcome: blocks.length > 0 ? "mismatch" : "match",
            note: mine.length > 0 ? mine.map((r) => `${r.resource}: ${r.message}`).join("\n") : undefined,
        };
    });
    const subject: ReportSubject = {
        name: project.name,
        description: `pko-guard gate of ${project.name} (stack ${o.stack})`,
        programFile: path.relative(process.cwd(), path.join(dir, project.main)).split(path.sep).join("/"),
        rows,
        checks,
    };
    return { project: project.name, rows, blocking, subject, exitCode: blocking.length > 0 ? 1 : 0 };
}

export function renderGateTable(r: GateResult): string {
    const table = new Table({
        head: ["project", "policy", "resource", "level", "blocking", "message"],
        style: { head: [], border: [] },
        wordWrap: true,
        colWidths: [22, 38, 22, 11, 10, 70],
    });
    for (const row of r.rows) {
        table.push([r.project, row.policy, row.resource, row.level, r.blocking.includes(row) ? "yes" : "no", row.message]);
    }
    if (r.rows.length === 0) table.push([r.project, "(none)", "", "", "no", "no violations"]);
    const summary = `${r.rows.length} violation(s), ${r.blocking.length} blocking: ${r.exitCode === 0 ? "PASS" : "FAIL"}`;
    return `${table.toString()}\n${summary}\n`;
}

/** A gate run in the shared JSON report shape (one "fixture" = the project, one leg = "gate"). */
export function gateJson(r: GateResult, durationMs: number): string {
    return (
        JSON.stringify(
            {
                schemaVersion: 1,
                tool: "pko-guard",
                generatedAt: new Date().toISOString(),
                summary: { fixtures: 1, match: r.exitCode === 0 ? 1 : 0, mismatch: r.exitCode === 0 ? 0 : 1, error: 0, skipped: 0 },
                fixtures: [
                    {
                        fixture: r.project,
                        description: r.subject.description ?? r.project,
                        outcome: r.exitCode === 0 ? "match" : "mismatch",
                        legs: [{ leg: "gate", durationMs, rows: r.rows }],
                        checks: r.subject.checks,
                    },
                ],
            },
            null,
            2,
        ) + "\n"
    );
}

export function writeGateReports(r: GateResult, requests: ReportRequest[], durationMs: number): void {
    for (const req of requests) {
        fs.mkdirSync(path.dirname(path.resolve(req.file)), { recursive: true });
        fs.writeFileSync(req.file, renderSubjects(req.format, [r.subject], () => gateJson(r, durationMs)));
    }
}
