#!/usr/bin/env node
/**
 * The pko-guard command:
 *   pko-guard gate [PROJECT_DIR] --stack NAME [--config FILE] [--report FORMAT=FILE ...] [--fail-on-advisory] [--timeout SECONDS]
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or a tool error (one line).
 */
import { timeoutSeconds } from "./options";
import "./fatal";
import { Command, CommanderError } from "commander";
import { isReportedError } from "./errors";
import { renderGateTable, runGate } from "./gate";
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
            const result = await runGate({ projectDir: project, stack: o.stack, config: o.config, failOnAdvisory: o.failOnAdvisory, timeoutMs: o.timeout * 1000 });
            process.stdout.write(renderGateTable(result));
            writeReports(o.report, [result]);
            code = result.outcome === "pass" ? 0 : 1;
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
