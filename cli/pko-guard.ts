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
 *                  [--fail-on-advisory] [--repo-root DIR] [--skip-unreadable] [--timeout SECONDS]
 *   pko-guard webhook --cert FILE --key FILE [--port N] [--kubeconfig FILE] [--context NAME] [--config FILE] [--warn-only]
 *   pko-guard audit [--kubeconfig FILE] [--context NAME] [--config FILE] [--report FORMAT=FILE ...] [--format table|github]
 *                  [-v|--verbose] [--fail-on-advisory]
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or a tool error (one line).
 */
import { timeoutSeconds } from "../support/options";
import "../support/fatal";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import * as fs from "fs";
import * as path from "path";
import { isMainThread } from "worker_threads";
import { escapeText } from "../support/escape";
import { exitWhenWritten } from "../support/exit";
import { BadInputError, isReportedError } from "../support/errors";
import { onInterrupt } from "../support/process";
import { REPO_ROOT } from "../support/paths";
import { mark } from "../support/timings";
import { ProjectSubject } from "../reports/subject";
import { findingsChunks, fullTableChunks } from "../reports/table";
import { ReportRequest, batched, inputClashes, parseReportOption, writeChunks, writeReports } from "../reports/write";
import { extended } from "../support/shapes";

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
    skipUnreadable: boolean;
    timeout: number;
    kubeVersion?: string;
    apiVersions: string[];
}

/** A repeatable option's values, in order. */
const collect = (value: string, previous: string[]) => [...previous, value];

/** --config, --report, --format, -v/--verbose and --fail-on-advisory: what every judging command takes. */
function reportingOptions(command: Command): Command {
    return command
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option(
            "--report <format=file>",
            "write a report: json, junit, sarif or policyreport (Kubernetes PolicyReport YAML) (repeatable)",
            parseReportOption,
            [] as ReportRequest[],
        )
        .addOption(
            new Option(
                "--format <format>",
                "terminal output: table, or github (workflow commands + step summary; the default under GITHUB_ACTIONS=true)",
            ).choices(["table", "github"]),
        )
        .option("-v, --verbose", "print the full table", false)
        .option("--fail-on-advisory", "advisory violations block too", false);
}

function githubOutput(o: ReportingOptions): boolean {
    return o.format === "github" || (o.format === undefined && process.env.GITHUB_ACTIONS === "true");
}

/** Writes pieces to standard output about a megabyte at a time: a large repository's output is more than one string. */
function print(chunks: Iterable<string>): void {
    for (const piece of batched(chunks)) process.stdout.write(piece);
}

/**
 * Prints the result the way it was asked for: the fitted table, and under GitHub Actions the workflow commands and
 * step summary, each in pieces (never one string: see ./reports/write.ts).
 */
function output(result: ProjectSubject, o: ReportingOptions, summaryText?: string): void {
    print(o.verbose ? fullTableChunks(result, undefined, summaryText) : findingsChunks(result, undefined, summaryText));
    if (githubOutput(o)) {
        const { STEP_SUMMARY_BYTES, stepSummaryChunks, workflowCommandChunks } =
            require("../reports/github") as typeof import("../reports/github");
        print(workflowCommandChunks([result]));
        const summary = process.env.GITHUB_STEP_SUMMARY;
        if (summary) {
            // what this step wrote to its summary before (another command of the step) counts against the limit too
            let held = 0;
            try {
                held = fs.statSync(summary).size;
            } catch {
                // not there yet
            }
            writeChunks(summary, stepSummaryChunks([result], STEP_SUMMARY_BYTES - held), "a");
        }
    }
}

interface Judged {
    subject: ProjectSubject;
    summaryText?: string;
}

/**
 * Runs a judging command (gate, check, audit) under the report rules of ./reports/write.ts: report paths that are
 * inputs are refused first; every other requested report is written on every outcome (the verdict, bad
 * input, a tool or internal error, an interrupt), with a subject that says why when there is no verdict.
 * Resolves with the exit code (0 pass, 1 blocking findings); throws the error that ended the run.
 */
async function runJudged(
    o: ReportingOptions,
    inputs: string[],
    errorSubject: (message: string, durationMs: number) => ProjectSubject,
    run: () => Promise<Judged>,
): Promise<number> {
    const started = Date.now();
    const clashes = inputClashes(o.report, inputs);
    const reports = o.report.filter((r) => !clashes.some((c) => c.request === r));
    const failWith = (message: string) => {
        const failed = errorSubject(message, Date.now() - started);
        try {
            if (githubOutput(o)) output(failed, extended(o, { verbose: false }));
        } catch {
            // the one line on stderr is what matters
        }
        try {
            writeReports(reports, [failed]);
        } catch (w) {
            // The run's own error is what exits; a report that could not be written is said too, never dropped.
            process.stderr.write(
                `pko-guard: ${escapeText(isReportedError(w) ? w.message : `cannot write the reports: ${String((w as Error)?.message ?? w).split("\n")[0]}`)}\n`,
            );
        }
    };
    if (clashes.length > 0) {
        const c = clashes[0];
        const message = `--report ${c.request.format}=${c.request.file} is an input of this run (${c.input}); refusing to overwrite it`;
        failWith(message);
        throw new BadInputError(message);
    }
    const removeHook = onInterrupt((signal) => failWith(`interrupted (${signal}) before the verdict`));
    let judged: Judged;
    try {
        judged = await run();
    } catch (e) {
        removeHook();
        failWith(
            isReportedError(e)
                ? e.message
                : `internal error: ${String(e instanceof Error ? e.message : e).split("\n")[0]}`,
        );
        throw e;
    }
    removeHook();
    try {
        output(judged.subject, o, judged.summaryText);
    } finally {
        // the reports are written even when the terminal output could not be
        writeReports(reports, [judged.subject]);
    }
    mark("reported");
    return judged.subject.outcome === "pass" ? 0 : 1;
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
            const { errorSubject, runGate } = await import("./gate");
            const inputs = [
                ...(o.config ? [o.config] : []),
                path.join(project, "Pulumi.yaml"),
                path.join(project, "index.ts"),
                path.join(project, "index.js"),
            ];
            exit.code = await runJudged(
                o,
                inputs,
                (message, durationMs) => errorSubject({ projectDir: project, stack: o.stack }, message, durationMs),
                async () => ({
                    subject: await runGate({
                        projectDir: project,
                        stack: o.stack,
                        config: o.config,
                        failOnAdvisory: o.failOnAdvisory,
                        timeoutMs: o.timeout * 1000,
                    }),
                }),
            );
        });
}

function checkCommand(exit: Exit): Command {
    return reportingOptions(
        new Command("check")
            .description(
                "check Kubernetes manifests (files, folders, - for standard input) with the pko-guard policies",
            )
            .argument(
                "<paths...>",
                "manifest files or folders (.yaml, .yml, .json, recursive), or - for standard input",
            ),
    )
        .option(
            "--repo-root <dir>",
            "repository root that Argo CD Application source paths are relative to (default: the git top level)",
        )
        .option(
            "--skip-unreadable",
            "skip a folder's oversized, undecodable (not UTF-8/UTF-16) and non-regular files with a line each, instead of failing",
            false,
        )
        .option(
            "--timeout <seconds>",
            "time allowed for rendering kustomizations, charts and jsonnet",
            timeoutSeconds,
            300,
        )
        .option(
            "--kube-version <version>",
            "the destination cluster's Kubernetes version, as Argo CD tells Helm (default: Helm's own)",
        )
        .option(
            "--api-versions <group/version[/Kind]>",
            "an API the destination cluster serves besides Kubernetes', PKO's and Argo CD's, as Argo CD tells Helm (repeatable)",
            collect,
            [] as string[],
        )
        .exitOverride()
        .action(async (paths: string[], o: CheckCliOptions) => {
            const { checkErrorSubject, runCheck, checkSummaryLine } = await import("./check");
            mark("command");
            exit.code = await runJudged(
                o,
                [...paths, ...(o.config ? [o.config] : [])],
                (message, durationMs) => checkErrorSubject(paths, message, durationMs, o.repoRoot),
                async () => {
                    const result = await runCheck({
                        paths,
                        // Large repositories are judged on several threads, each running this command's file.
                        workerEntry: process.argv[1],
                        config: o.config,
                        failOnAdvisory: o.failOnAdvisory,
                        repoRoot: o.repoRoot,
                        skipUnreadable: o.skipUnreadable,
                        timeoutMs: o.timeout * 1000,
                        kubeVersion: o.kubeVersion,
                        apiVersions: o.apiVersions,
                    });
                    for (const s of result.summary.skipped)
                        process.stderr.write(`pko-guard: skipped ${escapeText(s.file)}: ${escapeText(s.reason)}\n`);
                    for (const n of result.summary.notRendered) process.stderr.write(`pko-guard: ${escapeText(n)}\n`);
                    return { subject: result.subject, summaryText: checkSummaryLine(result) };
                },
            );
        });
}

function rulesCommand(): Command {
    return new Command("rules")
        .description("list the pack's rules: name, enforcement level, severity, what it checks")
        .option("--json", "as JSON", false)
        .action((o: { json: boolean }) => {
            const { renderRules } = require("./rules") as typeof import("./rules");
            process.stdout.write(
                renderRules(o.json, process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 120),
            );
        });
}

function explainCommand(): Command {
    return new Command("explain")
        .description("what a rule checks, why, how to fix it, its config keys and defaults, and an example that passes")
        .argument("<rule>", "the rule (policy) name")
        .action((rule: string) => {
            const { explainRule } = require("./explain") as typeof import("./explain");
            process.stdout.write(explainRule(rule));
        });
}

function initCommand(): Command {
    return new Command("init")
        .description(
            "write a policy pack config file (JSON, for --policy-pack-config) with every policy and its defaults",
        )
        .argument("[file]", "the file to write", "pko-guard.config.json")
        .option("--force", "overwrite an existing file", false)
        .action((file: string, o: { force: boolean }) => {
            const { initConfig } = require("./init") as typeof import("./init");
            const notes = initConfig(file, o.force);
            process.stdout.write(`wrote ${file} and ${notes}\n`);
        });
}

function webhookCommand(exit: Exit): Command {
    return new Command("webhook")
        .description(
            "serve a validating admission webhook (HTTPS: POST /validate, GET /healthz, /readyz, /metrics) judging objects with the pko-guard policies and the cluster's state",
        )
        .requiredOption("--cert <file>", "TLS certificate (PEM; reloaded when the file changes)")
        .requiredOption("--key <file>", "TLS private key (PEM; reloaded when the file changes)")
        .option("--port <n>", "port to listen on", portNumber, 8443)
        .option(
            "--kubeconfig <file>",
            "kubeconfig for reading cluster state (default: in-cluster, then KUBECONFIG or ~/.kube/config)",
        )
        .option("--context <name>", "kubeconfig context")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--warn-only", "deny nothing: would-be denials come back as warnings", false)
        .exitOverride()
        .action(
            async (o: {
                cert: string;
                key: string;
                port: number;
                kubeconfig?: string;
                context?: string;
                config?: string;
                warnOnly: boolean;
            }) => {
                const { runWebhook } = await import("./webhook");
                exit.code = await runWebhook(o);
            },
        );
}

function auditCommand(exit: Exit): Command {
    return reportingOptions(
        new Command("audit").description(
            "judge the Stacks and related objects of a live cluster with the pko-guard policies (check's table, reports and exit codes)",
        ),
    )
        .option("--kubeconfig <file>", "kubeconfig (default: KUBECONFIG or ~/.kube/config)")
        .option("--context <name>", "kubeconfig context")
        .option("--timeout <seconds>", "deadline for reading the cluster", timeoutSeconds, 300)
        .exitOverride()
        .action(async (o: ReportingOptions & { kubeconfig?: string; context?: string; timeout: number }) => {
            const { auditErrorSubject, runAudit, auditSummaryLine } = await import("./audit");
            exit.code = await runJudged(
                o,
                [...(o.config ? [o.config] : []), ...(o.kubeconfig ? [o.kubeconfig] : [])],
                (message, durationMs) => auditErrorSubject(o, message, durationMs),
                async () => {
                    const result = await runAudit({
                        kubeconfig: o.kubeconfig,
                        context: o.context,
                        config: o.config,
                        failOnAdvisory: o.failOnAdvisory,
                        timeoutMs: o.timeout * 1000,
                    });
                    return { subject: result.subject, summaryText: auditSummaryLine(result) };
                },
            );
        });
}

async function main(argv: string[]): Promise<number> {
    const exit: Exit = { code: 0 };
    const program = new Command("pko-guard")
        .description("Pulumi CrossGuard policy pack for governed Pulumi Kubernetes Operator deployments")
        .version(VERSION, "-V, --version", "print the version of pko-guard")
        .exitOverride()
        .configureOutput({ writeErr: (s) => process.stderr.write(escapeText(s.split("\n")[0]) + "\n") });
    // Each command inherits the program's settings (exit override, one-line errors), as program.command() would give.
    for (const command of [
        gateCommand(exit),
        rulesCommand(),
        explainCommand(),
        initCommand(),
        checkCommand(exit),
        webhookCommand(exit),
        auditCommand(exit),
    ])
        program.addCommand(command.copyInheritedSettings(program));
    try {
        await program.parseAsync(argv, { from: "user" });
    } catch (e) {
        if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
        if (isReportedError(e)) {
            process.stderr.write(`pko-guard: ${escapeText(e.message)}\n`);
            return 2;
        }
        throw e;
    }
    return exit.code;
}

if (isMainThread) main(process.argv.slice(2)).then(exitWhenWritten);
// A worker thread of this command is a part of a large `check` (gitops/manifests/parallel.ts).
else (require("../gitops/manifests/check-parts") as typeof import("../gitops/manifests/check-parts")).servePart();
