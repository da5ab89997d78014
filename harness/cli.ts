/**
 * pko-guard harness CLI:
 *   npm run harness -- [--leg mock|real|both] [--json FILE] [--timeout SECONDS] [FIXTURE_DIR ...]
 * Exit codes: 0 no mismatch and no fixture error (skipped legs are listed as skipped), 1 any mismatch or
 * fixture error, 2 bad input.
 */
import { timeoutSeconds } from "../support/options";
import "../support/fatal";
import { escapeText } from "../support/escape";
import { Command, CommanderError, Option } from "commander";
import { isReportedError } from "../support/errors";
import { exitWhenWritten } from "../support/exit";
import { ReportRequest, parseReportOption } from "../reports/write";
import { styleFor } from "./verdict-table";
import { LegChoice } from "./runner";
import { DEFAULT_PACK } from "./packs";
import { runSuite } from "./suite";

function badInput(message: string): never {
    process.stderr.write(`pko-guard harness: ${escapeText(message)}\n`);
    process.exit(2);
}

async function main(argv: string[]): Promise<number> {
    const program = new Command("harness")
        .description("Run fixture programs through the pko-guard policy pack and compare with expect.yaml")
        .addOption(
            new Option(
                "--leg <leg>",
                "which legs to run (both = mock + real, all = mock + real + deploy; manifest fixtures also run the manifest leg except under real and deploy)",
            )
                .choices(["mock", "real", "deploy", "both", "all", "manifest"])
                .default("mock"),
        )
        .option("--json <file>", "also write the JSON report to FILE (same as --report json=FILE)")
        .option(
            "--report <format=file>",
            "write a report: json, junit or sarif (repeatable)",
            parseReportOption,
            [] as ReportRequest[],
        )
        .option("--timeout <seconds>", "per-fixture timeout", timeoutSeconds, 300)
        .option("-j, --jobs <n>", "fixtures run at once (default: the cores)", (v) => Math.max(1, Number(v) || 1))
        .option(
            "-v, --verbose",
            "print the full table of checks (default: one line per fixture, then mismatches and errors)",
            false,
        )
        .argument("[fixtures...]", "fixture folders (default: all of fixtures/)")
        .exitOverride()
        .configureOutput({ writeErr: (s) => process.stderr.write(s.split("\n")[0] + "\n") });
    try {
        program.parse(argv, { from: "user" });
    } catch (e) {
        if (e instanceof CommanderError) {
            return e.exitCode === 0 ? 0 : 2;
        }
        throw e;
    }
    const opts = program.opts<{
        leg: LegChoice;
        json?: string;
        report: ReportRequest[];
        timeout: number;
        verbose: boolean;
        jobs?: number;
    }>();
    // The same run as `pko-guard test` (harness/suite.ts), over fixtures/ when no folder is given.
    return runSuite(
        {
            paths: program.args,
            leg: opts.leg,
            timeoutMs: opts.timeout * 1000,
            verbose: opts.verbose,
            jobs: opts.jobs,
            packs: [DEFAULT_PACK],
            reports: [...opts.report, ...(opts.json ? [{ format: "json" as const, file: opts.json }] : [])],
        },
        { out: process.stdout, err: process.stderr, style: styleFor(process.stdout) },
    );
}

main(process.argv.slice(2)).then(
    (code) => exitWhenWritten(code),
    (e) =>
        isReportedError(e)
            ? badInput(e.message)
            : badInput(`unexpected error: ${String((e as Error)?.message ?? e).split("\n")[0]}`),
);
