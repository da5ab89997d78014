#!/usr/bin/env node
/**
 * The pko-guard command:
 *   pko-guard gate [PROJECT_DIR] --stack NAME [--config FILE] [--report FORMAT=FILE ...] [--fail-on-advisory] [--timeout SECONDS]
 *   pko-guard check PATH... [--config FILE] [--report FORMAT=FILE ...] [--fail-on-advisory] [--repo-root DIR]
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or a tool error (one line).
 */
import { timeoutSeconds } from "./options";
import "./fatal";
import { Command, CommanderError } from "commander";
import { isReportedError } from "./errors";
import { ReportRequest, parseReportOption, writeReports } from "./reports/write";

async function main(argv: string[]): Promise<number> {
    let code = 0;
    const program = new Command("pko-guard")
        .description("Pulumi CrossGuard policy pack for governed Pulumi Kubernetes Operator deployments")
        .exitOverride()
        .configureOutput({ writeErr: (s) => process.stderr.write(s.split("\n")[0] + "\n") });
    program
        .command("gate")
        .description("preview a Pulumi project's stack with the pko-guard policy pack and gate on the result")
        .argument("[project]", "the Pulumi project folder", ".")
        .requiredOption("-s, --stack <name>", "the stack to preview")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--report <format=file>", "write a report: json, junit or sarif (repeatable)", parseReportOption, [] as ReportRequest[])
        .option("--fail-on-advisory", "advisory violations block too", false)
        .option("--timeout <seconds>", "preview timeout", timeoutSeconds, 1800)
        .exitOverride()
        .action(async (project: string, o: { stack: string; config?: string; report: ReportRequest[]; failOnAdvisory: boolean; timeout: number }) => {
            const { renderGateTable, runGate } = await import("./gate"); // each command loads only its own modules
            const result = await runGate({ projectDir: project, stack: o.stack, config: o.config, failOnAdvisory: o.failOnAdvisory, timeoutMs: o.timeout * 1000 });
            process.stdout.write(renderGateTable(result));
            writeReports(o.report, [result]);
            code = result.outcome === "pass" ? 0 : 1;
        });
    program
        .command("check")
        .description("check Kubernetes manifests (files, folders, - for standard input) with the pko-guard policies")
        .argument("<paths...>", "manifest files or folders (.yaml, .yml, .json, recursive), or - for standard input")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--report <format=file>", "write a report: json, junit or sarif (repeatable)", parseReportOption, [] as ReportRequest[])
        .option("--fail-on-advisory", "advisory violations block too", false)
        .option("--repo-root <dir>", "repository root that Argo CD Application source paths are relative to (default: the git top level)")
        .exitOverride()
        .action(async (paths: string[], o: { config?: string; report: ReportRequest[]; failOnAdvisory: boolean; repoRoot?: string }) => {
            // Loads only its own modules: start-up is part of every CI run.
            const { renderCheckTable, runCheck } = await import("./check/check");
            const result = runCheck({ paths, config: o.config, failOnAdvisory: o.failOnAdvisory, repoRoot: o.repoRoot });
            for (const s of result.summary.skipped) process.stderr.write(`pko-guard: skipped ${s.file}: ${s.reason}\n`);
            process.stdout.write(renderCheckTable(result));
            writeReports(o.report, [result.subject]);
            code = result.subject.outcome === "pass" ? 0 : 1;
        });
    try {
        await program.parseAsync(argv, { from: "user" });
    } catch (e) {
        if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
        if (isReportedError(e)) {
            process.stderr.write(`pko-guard: ${e.message}\n`);
            return 2;
        }
        throw e;
    }
    return code;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
