/**
 * The options every judging command (gate, check, audit) takes, declared once so that they cannot drift:
 * --config, --report, --format, -v/--verbose and --fail-on-advisory; and what they ask of standard output, which
 * holds one thing (the table, GitHub's workflow commands, or one report alone).
 */
import { Command, Option } from "commander";
import { BadInputError } from "../../support/errors";
import { FORMATS, ReportFormat, ReportRequest, STDOUT, parseReportOption } from "../../reports/write";

/** The options gate, check and audit share. */
export interface ReportingOptions {
    config?: string;
    report: ReportRequest[];
    format?: "table" | "github" | ReportFormat;
    verbose: boolean;
    failOnAdvisory: boolean;
}

/** Adds --config, --report, --format, -v/--verbose and --fail-on-advisory to a judging command. */
export function reportingOptions(command: Command): Command {
    return command
        .option("--config <file>", "policy pack config (JSON, as for --policy-pack-config)")
        .option(
            "--report <format=file>",
            "write a report: json, junit, sarif or policyreport (Kubernetes PolicyReport YAML); FILE - is standard output (repeatable)",
            parseReportOption,
            [] as ReportRequest[],
        )
        .addOption(
            new Option(
                "--format <format>",
                "what standard output holds: the table, github's workflow commands and step summary (the default under GITHUB_ACTIONS=true), or one report alone (the summary line then goes to standard error)",
            ).choices(["table", "github", ...FORMATS]),
        )
        .option("-v, --verbose", "print the full table", false)
        .option("--fail-on-advisory", "advisory violations block too", false);
}

/** Whether standard output gets GitHub's workflow commands: asked for, or by default under GitHub Actions. */
export function githubOutput(o: Pick<ReportingOptions, "format">, env: NodeJS.ProcessEnv): boolean {
    return o.format === "github" || (o.format === undefined && env.GITHUB_ACTIONS === "true");
}

/**
 * The report asked for on standard output (`--format FORMAT` or `--report FORMAT=-`), if any; bad input when more
 * than one is, or when `--format github` already writes there.
 */
export function stdoutReport(o: Pick<ReportingOptions, "format" | "report">): ReportRequest | undefined {
    const asked: { request: ReportRequest; said: string }[] = [
        ...(o.format !== undefined && (FORMATS as readonly string[]).includes(o.format)
            ? [{ request: { format: o.format as ReportFormat, file: STDOUT }, said: `--format ${o.format}` }]
            : []),
        ...o.report.filter((r) => r.file === STDOUT).map((r) => ({ request: r, said: `--report ${r.format}=-` })),
    ];
    if (asked.length > 1)
        throw new BadInputError(`only one report can go to standard output (${asked.map((a) => a.said).join(", ")})`);
    if (asked.length === 1 && o.format === "github")
        throw new BadInputError(
            `--format github writes to standard output; ${asked[0].said} cannot go there too (write it to a file)`,
        );
    return asked[0]?.request;
}
