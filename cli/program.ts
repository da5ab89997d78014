/**
 * The pko-guard command line (cli/pko-guard.ts runs it):
 *   pko-guard                       the commands and an example (exit 2; `pko-guard help`: exit 0)
 *   pko-guard gate [PROJECT_DIR] --stack NAME [--config FILE] [--report FORMAT=FILE ...] [--format FORMAT]
 *                  [--verbose] [--fail-on-advisory] [--timeout SECONDS]
 *   pko-guard rules [--json]        the rule catalogue
 *   pko-guard explain RULE          what a rule checks, why, the fix, its config keys and an example that passes
 *   pko-guard init [FILE]           a pack config file with every policy and its defaults (+ FILE's .md notes)
 *   pko-guard doctor [--profile check|gate|cluster|all]   each tool, its version, where it is from, how to install it
 *   pko-guard --version
 *   pko-guard check PATH... [--config FILE] [--report FORMAT=FILE ...] [--format FORMAT] [-v|--verbose]
 *                  [--fail-on-advisory] [--repo-root DIR] [--skip-unreadable] [--timeout SECONDS]
 *                  [--exclude GLOB ...] [--repository URL ...] [--print-config]   (over .pko-guard.yaml: ./check-config.ts)
 *   pko-guard webhook --cert FILE --key FILE [--client-ca FILE] [--host ADDR] [--port N] [--health-port N]
 *                    [--kubeconfig FILE] [--context NAME] [--config FILE] [--warn-only] [--read-timeout SECONDS]
 *                    [--max-body-bytes N] [--max-concurrent N] [--max-per-user N] [--enforce [--enforce-window S]]
 *   pko-guard audit [--kubeconfig FILE] [--context NAME] [--config FILE] [--report FORMAT=FILE ...] [--format FORMAT]
 *                  [-v|--verbose] [--fail-on-advisory]
 *   pko-guard test [PATH...] [--leg LEG] [--config FILE] [--policy-pack DIR ...] [--no-default-pack] [--jobs N]
 *                  [--report FORMAT=FILE ...] [--format table|github] [--init DIR] [--migrate]   (./test.ts)
 * FORMAT: table, github, or a report (json, junit, sarif, policyreport) alone on standard output (./judged.ts).
 * Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or a tool error (one line).
 * Output goes to a Terminal (./guide.ts: the process's streams, or a spec's).
 */
import { timeoutSeconds } from "../support/options";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import * as fs from "fs";
import * as path from "path";
import { escapeText } from "../support/escape";
import { errorLines, isReportedError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";
import { mark } from "../support/timings";
import { Terminal, guide, processTerminal, textWidth } from "./guide";
import { ReportingOptions, reportingOptions, runJudged } from "./judged";

export const VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;

interface GateCliOptions extends ReportingOptions {
    stack: string;
    timeout: number;
}

interface CheckCliOptions extends ReportingOptions {
    repoRoot?: string;
    skipUnreadable?: boolean;
    timeout?: number;
    kubeVersion?: string;
    apiVersions: string[];
    exclude: string[];
    repository: string[];
    printConfig: boolean;
}

/** A repeatable option's values, in order. */
const collect = (value: string, previous: string[]) => [...previous, value];

function portNumber(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 65535) throw new InvalidArgumentError("a port is a number from 1 to 65535");
    return n;
}

function positiveInt(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || !Number.isSafeInteger(n)) throw new InvalidArgumentError("a whole number above 0");
    return n;
}

/** A review's read deadline: below the 30 s an API server waits at most for a webhook. */
function readTimeout(v: string): number {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || n >= 30) throw new InvalidArgumentError("seconds, above 0 and below 30");
    return n;
}

/** A run of the command: where it writes, and the exit code an action sets (0 pass, 1 blocking findings). */
interface Run {
    term: Terminal;
    code: number;
}

// Each command loads its own modules when it runs (start-up is part of every CI run).

function gateCommand(run: Run): Command {
    return reportingOptions(
        new Command("gate")
            .summary("preview a Pulumi stack with the pack; gate on it")
            .description("preview a Pulumi project's stack with the pko-guard policy pack and gate on the result")
            .argument("[project]", "the Pulumi project folder", ".")
            .requiredOption("-s, --stack <name>", "the stack to preview"),
    )
        .option("--timeout <seconds>", "preview timeout", timeoutSeconds, 1800)
        .exitOverride()
        .action(async (project: string, o: GateCliOptions) => {
            const { errorSubject, gateSummaryLine, runGate } = await import("./gate");
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

/** check's own options (besides the reporting ones): each can also be set in .pko-guard.yaml (./check-config.ts). */
function checkOptions(command: Command): Command {
    return command
        .option(
            "--repo-root <dir>",
            "repository root that Argo CD Application source paths are relative to (default: the git top level)",
        )
        .option(
            "--skip-unreadable",
            "skip a folder's oversized, undecodable (not UTF-8/UTF-16) and non-regular files with a line each, instead of failing",
        )
        .option(
            "--timeout <seconds>",
            "time allowed for rendering kustomizations, charts and jsonnet (default: 300)",
            timeoutSeconds,
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
        .option(
            "--exclude <glob>",
            "leave paths matching GLOB out of the folders read (repeatable)",
            collect,
            [] as string[],
        )
        .option(
            "--repository <url>",
            "a URL of this repository besides its origin remote: Application sources naming it are read here (repeatable)",
            collect,
            [] as string[],
        )
        .option(
            "--print-config",
            "print the settings in force (.pko-guard.yaml, options, defaults) and where each comes from",
            false,
        );
}

function checkCommand(run: Run): Command {
    return checkOptions(
        reportingOptions(
            new Command("check")
                .summary("check Kubernetes manifests (a GitOps repository)")
                .description(
                    "check Kubernetes manifests (files, folders, - for standard input) with the pko-guard policies",
                )
                .argument(
                    "[paths...]",
                    "manifest files or folders (.yaml, .yml, .json, recursive), or - for standard input",
                ),
        ),
    )
        .exitOverride()
        .action(async (paths: string[], o: CheckCliOptions, command: Command) => {
            if (paths.length === 0 && !o.printConfig)
                command.error("error: missing required argument 'paths'", {
                    exitCode: 2,
                    code: "commander.missingArgument",
                });
            const { checkErrorSubject, runCheck, checkSummaryLine } = await import("./check");
            const { checkFlags, checkSettings, printedConfig, settingsOptions } = await import("./check-config");
            if (o.printConfig) {
                run.term.out.write(printedConfig(checkSettings(paths.length > 0 ? paths : ["."], checkFlags(o))));
                return;
            }
            mark("command");
            run.code = await runJudged(
                run.term,
                o,
                [...paths, ...(o.config ? [o.config] : [])],
                (message, durationMs) => checkErrorSubject(paths, message, durationMs, o.repoRoot),
                async () => {
                    // Large repositories are judged on several threads, each running this command's file.
                    const settings = checkSettings(paths, checkFlags(o));
                    const result = await runCheck(settingsOptions(paths, settings, process.argv[1]));
                    for (const x of result.summary.skipped)
                        run.term.err.write(`pko-guard: skipped ${escapeText(x.file)}: ${escapeText(x.reason)}\n`);
                    for (const n of result.summary.notRendered) run.term.err.write(`pko-guard: ${escapeText(n)}\n`);
                    return { subject: result.subject, summaryText: checkSummaryLine(result) };
                },
            );
        });
}

function rulesCommand(run: Run): Command {
    return new Command("rules")
        .summary("list the rules: level, severity, what each checks")
        .description("list the pack's rules: name, enforcement level, severity, what it checks")
        .option("--json", "as JSON", false)
        .action((o: { json: boolean }) => {
            const { renderRules } = require("./rules") as typeof import("./rules");
            const out = run.term.out;
            out.write(renderRules(o.json, out.isTTY && out.columns ? out.columns : 120));
        });
}

function explainCommand(run: Run): Command {
    return new Command("explain")
        .summary("what a rule checks, why, and how to fix it")
        .description("what a rule checks, why, how to fix it, its config keys and defaults, and an example that passes")
        .argument("<rule>", "the rule (policy) name")
        .action((rule: string) => {
            const { explainRule } = require("./explain") as typeof import("./explain");
            run.term.out.write(explainRule(rule, textWidth(run.term.out)));
        });
}

function initCommand(run: Run): Command {
    return new Command("init")
        .summary("write a pack config with every rule's defaults")
        .description(
            "write a policy pack config file (JSON, for --policy-pack-config) with every policy and its defaults",
        )
        .argument("[file]", "the file to write", "pko-guard.config.json")
        .option("--force", "overwrite an existing file", false)
        .action((file: string, o: { force: boolean }) => {
            const { initConfig } = require("./init") as typeof import("./init");
            const notes = initConfig(file, o.force);
            run.term.out.write(`wrote ${file} and ${notes}\n`);
        });
}

function doctorCommand(run: Run): Command {
    return new Command("doctor")
        .summary("the tools: version, source, install command")
        .description(
            "list each tool of the toolchain (kustomize, Helm, jsonnet, the Pulumi CLI, ...): its version, where it comes from (toolchain cache, PATH, missing) and the command that installs a missing one",
        )
        .option("--profile <profile>", "check, gate, cluster or all", profileName, "all")
        .action((o: { profile: string }) => {
            const { runDoctor } = require("./doctor") as typeof import("./doctor");
            const r = runDoctor(o.profile as "all");
            run.term.out.write(r.text);
            run.code = r.code;
        });
}

function profileName(v: string): string {
    if (!["check", "gate", "cluster", "all"].includes(v))
        throw new InvalidArgumentError("a profile is check, gate, cluster or all");
    return v;
}

function webhookCommand(run: Run): Command {
    return new Command("webhook")
        .summary("serve a validating admission webhook")
        .description(
            "serve a validating admission webhook (HTTPS: POST /validate, GET /healthz, /readyz, /metrics) judging objects with the pko-guard policies and the cluster's state",
        )
        .requiredOption("--cert <file>", "TLS certificate (PEM; reloaded when the file changes)")
        .requiredOption("--key <file>", "TLS private key (PEM; reloaded when the file changes)")
        .option(
            "--client-ca <file>",
            "CA of the API server's client certificate (PEM): callers without one it signed are refused in the TLS handshake",
        )
        .option("--host <address>", "address to listen on (default: 127.0.0.1, or every address with --client-ca)")
        .option("--port <n>", "port to listen on", portNumber, 8443)
        .option(
            "--health-port <n>",
            "port for /healthz, /readyz and /metrics, asking no client certificate",
            portNumber,
        )
        .option(
            "--kubeconfig <file>",
            "kubeconfig for reading cluster state (default: in-cluster, then KUBECONFIG or ~/.kube/config)",
        )
        .option("--context <name>", "kubeconfig context")
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option("--warn-only", "deny nothing: would-be denials come back as warnings", false)
        .option(
            "--read-timeout <seconds>",
            "deadline of a review's reads of the API server (keep it below the webhook's timeoutSeconds)",
            readTimeout,
            3,
        )
        .option("--max-body-bytes <n>", "largest review accepted (413 beyond)", positiveInt, 4 * 1024 * 1024)
        .option("--max-concurrent <n>", "reviews judged at once (429 beyond)", positiveInt, 64)
        .option(
            "--max-per-user <n>",
            "reviews of one requesting user judged at once (429 beyond, for that user)",
            positiveInt,
            16,
        )
        .option(
            "--enforce",
            "delete young bindings that give a Stack's account cluster-admin, which a race between replicas let through",
            false,
        )
        .option("--enforce-window <seconds>", "how young a binding --enforce deletes", positiveInt, 300)
        .exitOverride()
        .action(
            async (o: {
                cert: string;
                key: string;
                clientCa?: string;
                host?: string;
                port: number;
                healthPort?: number;
                kubeconfig?: string;
                context?: string;
                config?: string;
                warnOnly: boolean;
                readTimeout: number;
                maxBodyBytes: number;
                maxConcurrent: number;
                maxPerUser: number;
                enforce: boolean;
                enforceWindow: number;
            }) => {
                const { runWebhook } = await import("./webhook");
                const limits = {
                    maxBodyBytes: o.maxBodyBytes,
                    maxConcurrent: o.maxConcurrent,
                    maxPerUser: o.maxPerUser,
                };
                const enforceWindowMs = o.enforceWindow * 1000;
                run.code = await runWebhook(
                    Object.assign({ readTimeoutMs: o.readTimeout * 1000, limits, enforceWindowMs }, o),
                );
            },
        );
}

function testCommand(run: Run): Command {
    const { testCommand: options } = require("./test") as typeof import("./test");
    return options()
        .exitOverride()
        .action(async (paths: string[], o: import("./test").TestCliOptions) => {
            const { runTest } = await import("./test");
            run.code = await runTest(paths, o, run.term);
        });
}

function auditCommand(run: Run): Command {
    return reportingOptions(
        new Command("audit")
            .summary("judge what a live cluster holds")
            .description(
                "judge the Stacks and related objects of a live cluster with the pko-guard policies (check's table, reports and exit codes)",
            ),
    )
        .option("--kubeconfig <file>", "kubeconfig (default: KUBECONFIG or ~/.kube/config)")
        .option("--context <name>", "kubeconfig context")
        .option("--timeout <seconds>", "deadline for reading the cluster", timeoutSeconds, 300)
        .exitOverride()
        .action(async (o: ReportingOptions & { kubeconfig?: string; context?: string; timeout: number }) => {
            const { auditErrorSubject, runAudit, auditSummaryLine } = await import("./audit");
            run.code = await runJudged(
                run.term,
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

/** What help ends with: an example of the command users run first. */
const EXAMPLES = `
Examples:
  pko-guard check manifests/ applications/   judge a GitOps repository
  pko-guard check . --format sarif > pko-guard.sarif
  pko-guard gate infra/ --stack prod         preview a program with the pack
  pko-guard test fixtures/ --leg both        prove your fixtures' verdicts
  pko-guard explain pko-stack-prod-pinned-commit

'pko-guard help COMMAND' shows a command's options.`;

/**
 * Runs the command line `argv` (without node and the script) and resolves with its exit code. Without a command,
 * the commands (one line each) and the examples go to standard error with exit code 2; `pko-guard help` writes
 * them to standard output with exit code 0.
 */
export async function main(argv: string[], term: Terminal = processTerminal()): Promise<number> {
    const run: Run = { term, code: 0 };
    const program = guide(
        new Command("pko-guard")
            .description("Pulumi CrossGuard policy pack for governed Pulumi Kubernetes Operator deployments")
            .version(VERSION, "-V, --version", "print the version of pko-guard")
            .addHelpText("after", EXAMPLES)
            .exitOverride(),
        term,
    );
    // Each command inherits the program's settings (exit override, output, help), as program.command() would give.
    for (const command of [
        checkCommand(run),
        gateCommand(run),
        auditCommand(run),
        testCommand(run),
        webhookCommand(run),
        rulesCommand(run),
        explainCommand(run),
        initCommand(run),
        doctorCommand(run),
    ])
        program.addCommand(command.copyInheritedSettings(program));
    // `help NAME` of no command says so as `NAME` alone would (with commander's suggestion), not with the help.
    const unknownHelp = argv[0] === "help" && argv.length > 1 && !program.commands.some((c) => c.name() === argv[1]);
    try {
        await program.parseAsync(unknownHelp ? argv.slice(1, 2) : argv, { from: "user" });
    } catch (e) {
        if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
        if (isReportedError(e)) {
            for (const line of errorLines(e)) term.err.write(`pko-guard: ${escapeText(line)}\n`);
            return 2;
        }
        throw e;
    }
    return run.code;
}
