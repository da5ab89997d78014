/**
 * The CI compliance gate for users' own Pulumi projects: a real `pulumi preview --policy-pack <pko-guard>`
 * of the project's stack (with the user's own backend and credentials), judged by enforcement level:
 * mandatory findings block, advisory ones block only with --fail-on-advisory.
 */
import Table from "cli-table3";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError, ToolError } from "./errors";
import { sortRows } from "./model";
import { REPO_ROOT } from "./paths";
import { PolicyMeta, loadPackConfig, reconcilePackConfig, yamlErrorPosition } from "./policy-config";
import { previewWithPack, userEnv } from "./pulumi";
import { Finding, ProjectSubject } from "./reports/subject";
import { findGateCli } from "./toolchain";

export interface GateOptions {
    projectDir: string;
    stack: string;
    config?: string;
    failOnAdvisory: boolean;
    timeoutMs: number;
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

/** Previews the project's stack with the pack and judges the findings; the result is a report subject. */
export async function runGate(o: GateOptions): Promise<ProjectSubject> {
    const started = Date.now();
    const dir = path.resolve(o.projectDir);
    const project = projectInfo(dir);
    if (o.config) reconcilePackConfig(packPolicies(), loadPackConfig(o.config), o.config);
    const cli = findGateCli();
    const preview = await previewWithPack(
        { cli, cwd: dir, env: userEnv(cli), stack: o.stack, timeoutMs: o.timeoutMs },
        { dir: REPO_ROOT, config: o.config ? path.resolve(o.config) : undefined, descriptions: new Map(policies.map((p) => [p.name, p.description])) },
    );
    if (preview.error) throw new ToolError(preview.error);
    const findings: Finding[] = sortRows(preview.rows).map((r) => ({
        ...r,
        status: r.level === "mandatory" || (o.failOnAdvisory && r.level === "advisory") ? "blocking" : "advisory",
    }));
    return {
        kind: "project",
        name: project.name,
        stack: o.stack,
        description: `pko-guard gate of ${project.name} (stack ${o.stack})`,
        programFile: path.relative(process.cwd(), path.join(dir, project.main)).split(path.sep).join("/"),
        findings,
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
    };
}

export function renderGateTable(r: ProjectSubject): string {
    const table = new Table({
        head: ["project", "policy", "resource", "level", "blocking", "message"],
        style: { head: [], border: [] },
        wordWrap: true,
        colWidths: [22, 38, 22, 11, 10, 70],
    });
    for (const f of r.findings) {
        table.push([r.name, f.policy, f.resource, f.level, f.status === "blocking" ? "yes" : "no", f.message]);
    }
    if (r.findings.length === 0) table.push([r.name, "(none)", "", "", "no", "no violations"]);
    const blocking = r.findings.filter((f) => f.status === "blocking").length;
    const summary = `${r.findings.length} violation(s), ${blocking} blocking: ${r.outcome === "pass" ? "PASS" : "FAIL"}`;
    return `${table.toString()}\n${summary}\n`;
}
