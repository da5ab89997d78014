#!/usr/bin/env node
/**
 * The pko-guard command:
 *   pko-guard gate [PROJECT_DIR] --stack NAME [--config FILE] [--report FORMAT=FILE ...] [--format table|github]
 *                  [--verbose] [--fail-on-advisory] [--timeout SECONDS]
 *   pko-guard rules [--json]        the rule catalogue
 *   pko-guard explain RULE          what a rule checks, why, the fix, its config keys and an example that passes
 *   pko-guard init [FILE]           a pack config file with every policy and its defaults (+ FILE's .md notes)
 *   pko-guard --version
 *   pko-guard check PATH... [--config FILE] [--report FORMAT=FILE ...] [--format table|github] [-v|--verbose]
 *                  [--fail-on-advisory] [--repo-root DIR]
 *   pko-guard webhook --cert FILE --key FILE [--port N] [--kubeconfig FILE] [--context NAME] [--config FILE] [--warn-only]
 *   pko-guard audit [--kubeconfig FILE] [--context NAME] [--config FILE] [--report FORMAT=FILE ...] [--format table|github]
 *                  [-v|--verbose] [--fail-on-advisory]
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or a tool error (one line).
 */
import { timeoutSeconds } from "../core/options";
import "../core/fatal";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import * as fs from "fs";
import * as path from "path";
import { isReportedError } from "../core/errors";
import { REPO_ROOT } from "../core/paths";
import { ProjectSubject } from "./reports/subject";
import { renderFindings, renderFullTable } from "./reports/table";
import { ReportRequest, parseReportOption, writeReports } from "./reports/write";

export const VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;

/** The options gate and check share (one definition, so that they cannot drift). */
interface ReportingOptions {
    config?: string;
    report: ReportRequest[];
    format?: "table" | "github";
    verbose: boolean;
    failOnAdvisory: boolean;
}

interface GateCliOptions extends ReportingOptions {
    stack: string;
    timeout: number;
}

interface CheckCliOptions extends ReportingOptions {
    repoRoot?: string;
    timeout: number;
}

/** --config, --report, --format, -v/--verbose and --fail-on-advisory: what every judging command takes. */
function reportingOptions(command: Command): Command {
    return command
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--report <format=file>", "write a report: json, junit, sarif or policyreport (Kubernetes PolicyReport YAML) (repeatable)", parseReportOption, [] as ReportRequest[])
        .addOption(new Option("--format <format>", "terminal output: table, or github (workflow commands + step summary; the default under GITHUB_ACTIONS=true)").choices(["table", "github"]))
        .option("-v, --verbose", "print the full table", false)
        .option("--fail-on-advisory", "advisory violations block too", false);
}

function githubOutput(o: ReportingOptions): boolean {
    return o.format === "github" || (o.format === undefined && process.env.GITHUB_ACTIONS === "true");
}

/** Prints the result the way it was asked for: the fitted table, and under GitHub Actions the workflow commands and step summary. */
function output(result: ProjectSubject, o: ReportingOptions, summaryText?: string): void {
    process.stdout.write(o.verbose ? renderFullTable(result, undefined, summaryText) : renderFindings(result, undefined, summaryText));
    if (githubOutput(o)) {
        const { renderStepSummary, renderWorkflowCommands } = require("./reports/github") as typeof import("./reports/github");
        process.stdout.write(renderWorkflowCommands([result]));
        const summary = process.env.GITHUB_STEP_SUMMARY;
        if (summary) fs.appendFileSync(summary, renderStepSummary([result]));
    }
}

function portNumber(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 65535) throw new InvalidArgumentError("a port is a number from 1 to 65535");
    return n;
}

/** What a command's action sets: the exit code (0 pass, 1 blocking findings). */
interface Exit {
    code: number;
}

// Each command loads its own modules when it runs (start-up is part of every CI run).

function gateCommand(exit: Exit): Command {
    return reportingOptions(
        new Command("gate")
            .description("preview a Pulumi project's stack with the pko-guard policy pack and gate on the result")
            .argument("[project]", "the Pulumi project folder", ".")
            .requiredOption("-s, --stack <name>", "the stack to preview"),
    )
        .option("--timeout <seconds>", "preview timeout", timeoutSeconds, 1800)
        .exitOverride()
        .action(async (project: string, o: GateCliOptions) => {
            const started = Date.now();
            const { errorSubject, runGate } = await import("./gate");
            let result: ProjectSubject;
            try {
                result = await runGate({ projectDir: project, stack: o.stack, config: o.config, failOnAdvisory: o.failOnAdvisory, timeoutMs: o.timeout * 1000 });
            } catch (e) {
                if (!isReportedError(e)) throw e;
                // Every requested report is still written, valid, saying why, so a CI upload step finds its file.
                const failed = errorSubject({ projectDir: project, stack: o.stack }, e.message, Date.now() - started);
                try {
                    writeReports(o.report, [failed]);
                    if (githubOutput(o)) output(failed, { ...o, verbose: false });
                } catch (w) {
                    // The gate's own error is what exits; a report that could not be written is said too.
                    process.stderr.write(`pko-guard: ${isReportedError(w) ? w.message : `cannot report the error: ${String((w as Error)?.message ?? w).split("\n")[0]}`}\n`);
                }
                throw e;
            }
            output(result, o);
            writeReports(o.report, [result]);
            exit.code = result.outcome === "pass" ? 0 : 1;
        });
}

function checkCommand(exit: Exit): Command {
    return reportingOptions(
        new Command("check")
            .description("check Kubernetes manifests (files, folders, - for standard input) with the pko-guard policies")
            .argument("<paths...>", "manifest files or folders (.yaml, .yml, .json, recursive), or - for standard input"),
    )
        .option("--repo-root <dir>", "repository root that Argo CD Application source paths are relative to (default: the git top level)")
        .option("--timeout <seconds>", "time allowed for rendering kustomizations, charts and jsonnet", timeoutSeconds, 300)
        .exitOverride()
        .action(async (paths: string[], o: CheckCliOptions) => {
            const { runCheck, checkSummaryLine } = await import("./check");
            const result = runCheck({ paths, config: o.config, failOnAdvisory: o.failOnAdvisory, repoRoot: o.repoRoot, timeoutMs: o.timeout * 1000 });
            for (const s of result.summary.skipped) process.stderr.write(`pko-guard: skipped ${s.file}: ${s.reason}\n`);
            for (const n of result.summary.notRendered) process.stderr.write(`pko-guard: ${n}\n`);
            output(result.subject, o, checkSummaryLine(result));
            writeReports(o.report, [result.subject]);
            exit.code = result.subject.outcome === "pass" ? 0 : 1;
        });
}

function rulesCommand(): Command {
    return new Command("rules")
        .description("list the pack's rules: name, enforcement level, severity, what it checks")
        .option("--json", "as JSON", false)
        .action((o: { json: boolean }) => {
            const { renderRules } = require("./rules") as typeof import("./rules");
            process.stdout.write(renderRules(o.json, process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 120));
        });
}

function explainCommand(): Command {
    return new Command("explain")
        .description("what a rule checks, why, how to fix it, its config keys and defaults, and an example that passes")
        .argument("<rule>", "the rule (policy) name")
        .action((rule: string) => {
            const { explainRule } = require("./rules") as typeof import("./rules");
            process.stdout.write(explainRule(rule));
        });
}

function initCommand(): Command {
    return new Command("init")
        .description("write a policy pack config file (JSON, for --policy-pack-config) with every policy and its defaults")
        .argument("[file]", "the file to write", "pko-guard.config.json")
        .option("--force", "overwrite an existing file", false)
        .action((file: string, o: { force: boolean }) => {
            const { initConfig } = require("./rules") as typeof import("./rules");
            const notes = initConfig(file, o.force);
            process.stdout.write(`wrote ${file} and ${notes}\n`);
        });
}

function webhookCommand(exit: Exit): Command {
    return new Command("webhook")
        .description("serve a validating admission webhook (HTTPS: POST /validate, GET /healthz, /readyz, /metrics) judging objects with the pko-guard policies and the cluster's state")
        .requiredOption("--cert <file>", "TLS certificate (PEM; reloaded when the file changes)")
        .requiredOption("--key <file>", "TLS private key (PEM; reloaded when the file changes)")
        .option("--port <n>", "port to listen on", portNumber, 8443)
        .option("--kubeconfig <file>", "kubeconfig for reading cluster state (default: in-cluster, then KUBECONFIG or ~/.kube/config)")
        .option("--context <name>", "kubeconfig context")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--warn-only", "deny nothing: would-be denials come back as warnings", false)
        .exitOverride()
        .action(async (o: { cert: string; key: string; port: number; kubeconfig?: string; context?: string; config?: string; warnOnly: boolean }) => {
            const { runWebhook } = await import("./webhook");
            exit.code = await runWebhook(o);
        });
}

function auditCommand(exit: Exit): Command {
    return reportingOptions(new Command("audit").description("judge the Stacks and related objects of a live cluster with the pko-guard policies (check's table, reports and exit codes)"))
        .option("--kubeconfig <file>", "kubeconfig (default: KUBECONFIG or ~/.kube/config)")
        .option("--context <name>", "kubeconfig context")
        .option("--timeout <seconds>", "deadline for reading the cluster", timeoutSeconds, 300)
        .exitOverride()
        .action(async (o: ReportingOptions & { kubeconfig?: string; context?: string; timeout: number }) => {
            const { runAudit, auditSummaryLine } = await import("./audit");
            const result = await runAudit({ kubeconfig: o.kubeconfig, context: o.context, config: o.config, failOnAdvisory: o.failOnAdvisory, timeoutMs: o.timeout * 1000 });
            output(result.subject, o, auditSummaryLine(result));
            writeReports(o.report, [result.subject]);
            exit.code = result.subject.outcome === "pass" ? 0 : 1;
        });
}

async function main(argv: string[]): Promise<number> {
    const exit: Exit = { code: 0 };
    const program = new Command("pko-guard")
        .description("Pulumi CrossGuard policy pack for governed Pulumi Kubernetes Operator deployments")
        .version(VERSION, "-V, --version", "print the version of pko-guard")
        .exitOverride()
        .configureOutput({ writeErr: (s) => process.stderr.write(s.split("\n")[0] + "\n") });
    // Each command inherits the program's settings (exit override, one-line errors), as program.command() would give.
    for (const command of [gateCommand(exit), rulesCommand(), explainCommand(), initCommand(), checkCommand(exit), webhookCommand(exit), auditCommand(exit)]) program.addCommand(command.copyInheritedSettings(program));
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
    return exit.code;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
