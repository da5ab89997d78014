/**
 * The CI compliance gate for users' own Pulumi projects: a real `pulumi preview --policy-pack <pko-guard>`
 * of the project's stack (with the user's own backend and credentials), judged by enforcement level:
 * mandatory findings block, advisory ones block only with --fail-on-advisory.
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad input or a tool error.
 */
import { Command } from "commander";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError, ToolError } from "../support/errors";
import { locateRows } from "../engine/source-locations";
import { PACK_DIR } from "../support/paths";
import { packConfig, yamlErrorPosition } from "../evaluation/pack-config";
import { EngineEvent, previewWithPack, userEnv } from "../engine/pulumi-cli";
import { escapeText } from "../support/escape";
import { ProjectSubject, errorProjectSubject } from "../reports/subject";
import { summary } from "../reports/table";
import { judgeRows, waiverNotices } from "../evaluation/judge";
import { findGateCli } from "../support/toolchain";
import { timeoutSeconds } from "../support/options";
import type { Run } from "./guide";
import { runJudged } from "./verdict/judged-run";
import { ReportingOptions, reportingOptions } from "./verdict/reporting-options";

export interface GateOptions {
    projectDir: string;
    stack: string;
    config?: string;
    failOnAdvisory: boolean;
    timeoutMs: number;
    /** Where progress lines go as the preview runs (standard error): one at the start, one a resource. */
    progress?: (line: string) => void;
}

export interface GateResult {
    subject: ProjectSubject;
    /** The plan's counts by operation (the engine's summary event), when the preview got that far. */
    plan?: Record<string, number>;
}

/** The progress line of a resource step: `pko-guard: preview: create kubernetes:core/v1:Secret token`. */
export function stepLine(e: EngineEvent): string | undefined {
    const m = e.resourcePreEvent?.metadata;
    if (!m?.urn || !m.op) return undefined;
    const name = m.urn.split("::").pop() ?? m.urn;
    return `pko-guard: preview: ${escapeText(m.op)} ${escapeText(m.type ?? "")} ${escapeText(name)}\n`;
}

/** The plan's summary: `plan: 3 to create, 1 to update, 0 to delete, 2 unchanged` (+ other operations). */
export function planText(changes: Record<string, number>): string {
    const n = (op: string) => changes[op] ?? 0;
    const known = new Set(["create", "update", "delete", "same"]);
    const others = Object.keys(changes)
        .filter((op) => !known.has(op) && n(op) > 0)
        .sort()
        .map((op) => `${n(op)} to ${escapeText(op)}`);
    const parts = [`${n("create")} to create`, `${n("update")} to update`, ...others, `${n("delete")} to delete`];
    return `plan: ${parts.join(", ")}, ${n("same")} unchanged`;
}

function projectInfo(dir: string): { name: string; main: string } {
    const file = path.join(dir, "Pulumi.yaml");
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
        throw new BadInputError(`${dir}: no such project folder`);
    if (!fs.existsSync(file)) throw new BadInputError(`${dir}: no Pulumi.yaml (not a Pulumi project)`);
    let doc: { name?: unknown; main?: unknown; runtime?: unknown } | null;
    try {
        doc = YAML.parse(fs.readFileSync(file, "utf8")) as typeof doc;
    } catch (e) {
        throw new BadInputError(`${file}: not valid YAML${yamlErrorPosition(e)}`);
    }
    if (typeof doc?.name !== "string") throw new BadInputError(`${file}: missing project name`);
    const runtime =
        typeof doc.runtime === "string" ? doc.runtime : (doc.runtime as { name?: unknown } | undefined)?.name;
    // A Pulumi YAML program is Pulumi.yaml itself.
    const main =
        typeof doc.main === "string"
            ? doc.main
            : runtime === "yaml"
              ? "Pulumi.yaml"
              : fs.existsSync(path.join(dir, "index.ts"))
                ? "index.ts"
                : "index.js";
    return { name: doc.name, main };
}

/** Previews the project's stack with the pack and judges the findings; the result holds a report subject. */
export async function runGate(o: GateOptions): Promise<GateResult> {
    const started = Date.now();
    const dir = path.resolve(o.projectDir);
    const project = projectInfo(dir);
    const config = packConfig(o.config);
    const cli = findGateCli();
    o.progress?.(
        `pko-guard: previewing ${escapeText(project.name)} (stack ${escapeText(o.stack)}) with the pko-guard policy pack\n`,
    );
    let plan: Record<string, number> | undefined;
    const onProgress = (e: EngineEvent) => {
        const line = stepLine(e);
        if (line) o.progress?.(line);
        if (e.summaryEvent?.resourceChanges) plan = e.summaryEvent.resourceChanges;
    };
    const preview = await previewWithPack(
        { cli, cwd: dir, env: userEnv(cli), stack: o.stack, timeoutMs: o.timeoutMs },
        {
            dir: PACK_DIR,
            config: o.config ? path.resolve(o.config) : undefined,
            descriptions: new Map(policies.map((p) => [p.name, p.description])),
        },
        // The event stream is read incrementally and only policy events are kept (however large the preview).
        { keepOutput: false, onProgress },
    );
    if (preview.error) throw new ToolError(preview.error);
    const findings = locateRows(judgeRows(preview.rows, o.failOnAdvisory), dir, project.main);
    const subject: ProjectSubject = {
        kind: "project",
        name: project.name,
        stack: o.stack,
        description: `pko-guard gate of ${project.name} (stack ${o.stack})`,
        programFile: path.join(dir, project.main),
        findings,
        notices: waiverNotices(config, findings),
        outcome: findings.some((f) => f.status === "blocking") ? "fail" : "pass",
        durationMs: Date.now() - started,
    };
    return { subject, plan };
}

/** The subject of a gate that could not run: every report still renders it, saying why. */
export function errorSubject(
    o: { projectDir: string; stack: string },
    message: string,
    durationMs: number,
): ProjectSubject {
    const dir = path.resolve(o.projectDir);
    let name = path.basename(dir) || dir;
    let main = "Pulumi.yaml";
    try {
        const p = projectInfo(dir);
        name = p.name;
        main = p.main;
    } catch {
        // the project itself is what is wrong: name it by its folder
    }
    return errorProjectSubject(
        {
            name,
            stack: o.stack,
            description: `pko-guard gate of ${name} (stack ${o.stack})`,
            programFile: path.join(dir, main),
        },
        message,
        durationMs,
    );
}

/** The gate's closing lines: the plan's summary (when the preview reported one), then the verdict line. */
export function gateSummaryLine(subject: ProjectSubject, plan: Record<string, number> | undefined): string {
    return plan ? `${planText(plan)}\n${summary(subject)}` : summary(subject);
}

interface GateCliOptions extends ReportingOptions {
    stack: string;
    timeout: number;
}

export function command(run: Run): Command {
    return reportingOptions(
        new Command("gate")
            .summary("preview a Pulumi stack with the pack; gate on it")
            .description("preview a Pulumi project's stack with the pko-guard policy pack and gate on the result")
            .argument("[project]", "the Pulumi project folder", ".")
            .requiredOption("-s, --stack <name>", "the stack to preview"),
    )
        .option("--timeout <seconds>", "preview timeout", timeoutSeconds, 1800)
        .action(async (project: string, o: GateCliOptions) => {
            const inputs = [
                ...(o.config ? [o.config] : []),
                path.join(project, "Pulumi.yaml"),
                path.join(project, "index.ts"),
                path.join(project, "index.js"),
            ];
            run.code = await runJudged(
                run.term,
                o,
                inputs,
                (message, durationMs) => errorSubject({ projectDir: project, stack: o.stack }, message, durationMs),
                async () => {
                    const { subject, plan } = await runGate({
                        projectDir: project,
                        stack: o.stack,
                        config: o.config,
                        failOnAdvisory: o.failOnAdvisory,
                        timeoutMs: o.timeout * 1000,
                        progress: (line) => run.term.err.write(line),
                    });
                    return { subject, summaryText: gateSummaryLine(subject, plan) };
                },
            );
        });
}
