/**
 * How a judging command (gate, check, audit) gives its verdict: the run printed and reported under the rules of
 * reports/write.ts (every requested report on every outcome).
 * Standard output holds one thing: the findings table (plus workflow commands under GitHub Actions), or the one report
 * sent there (`--format` or `--report FORMAT=-`), with the summary then on standard error.
 */
import * as fs from "fs";
import { colorFor, painter } from "../../support/color";
import { escapeText } from "../../support/escape";
import { BadInputError, isReportedError } from "../../support/errors";
import { onInterrupt } from "../../support/process";
import { mark } from "../../support/timings";
import { extended } from "../../support/shapes";
import { ProjectSubject } from "../../reports/subject";
import { findingsChunks, fullTableChunks, paintVerdict, summary, terminalWidth } from "../../reports/table";
import { ReportRequest, STDOUT, batched, inputClashes, writeChunks, writeReports } from "../../reports/write";
import type { Terminal } from "../guide";
import { ReportingOptions, githubOutput, stdoutReport } from "./reporting-options";

/** GitHub's workflow commands and step summary (loaded only for a run that writes them). */
type GitHub = typeof import("../../reports/github");

/** Writes pieces to standard output about a megabyte at a time: a large repository's output is more than one string. */
function print(term: Terminal, chunks: Iterable<string>): void {
    for (const piece of batched(chunks)) term.out.write(piece);
}

/**
 * Prints the result the way it was asked for: the fitted table, and under GitHub Actions the workflow commands and
 * step summary, each in pieces (never one string: see reports/write.ts); only the summary line, on standard error,
 * when a report has standard output.
 */
function output(
    term: Terminal,
    result: ProjectSubject,
    o: ReportingOptions,
    github: GitHub | undefined,
    reportOnStdout: boolean,
    text?: string,
) {
    if (reportOnStdout) {
        term.err.write(paintVerdict(text ?? summary(result), painter(colorFor(term.err, term.env))) + "\n");
        return;
    }
    const paint = painter(colorFor(term.out, term.env));
    const width = terminalWidth(term.out);
    print(
        term,
        o.verbose
            ? // Off a terminal there is no width to fit: every column whole, a finding's message on one line.
              fullTableChunks(result, term.out.isTTY ? width : Infinity, text, 100, paint)
            : findingsChunks(result, width, text, paint),
    );
    if (github) {
        const { STEP_SUMMARY_BYTES, stepSummaryChunks, workflowCommandChunks } = github;
        print(term, workflowCommandChunks([result]));
        const stepSummary = term.env.GITHUB_STEP_SUMMARY;
        if (stepSummary) {
            // what this step wrote to its summary before (another command of the step) counts against the limit too
            let held = 0;
            try {
                held = fs.statSync(stepSummary).size;
            } catch {
                // not there yet
            }
            writeChunks(stepSummary, stepSummaryChunks([result], STEP_SUMMARY_BYTES - held), "a");
        }
    }
}

export interface Judged {
    subject: ProjectSubject;
    summaryText?: string;
}

/**
 * Runs a judging command (gate, check, audit) under the report rules of reports/write.ts: report paths that are
 * inputs are refused first; every other requested report is written on every outcome (the verdict, bad
 * input, a tool or internal error, an interrupt), with a subject that says why when there is no verdict.
 * Resolves with the exit code (0 pass, 1 blocking findings); throws the error that ended the run.
 */
export async function runJudged(
    term: Terminal,
    o: ReportingOptions,
    inputs: string[],
    errorSubject: (message: string, durationMs: number) => ProjectSubject,
    run: () => Promise<Judged>,
): Promise<number> {
    const started = Date.now();
    const github = githubOutput(o, term.env) ? await import("../../reports/github") : undefined;
    const clashes = inputClashes(o.report, inputs);
    let toStdout: ReportRequest | undefined;
    let refused: string | undefined;
    try {
        toStdout = stdoutReport(o);
    } catch (e) {
        refused = (e as Error).message;
    }
    const reports = [
        ...o.report.filter((r) => r.file !== STDOUT && !clashes.some((c) => c.request === r)),
        ...(toStdout ? [toStdout] : []),
    ];
    const write = (subject: ProjectSubject) => writeReports(reports, [subject], (piece) => term.out.write(piece));
    const failWith = (message: string) => {
        const failed = errorSubject(message, Date.now() - started);
        try {
            if (github && !toStdout) output(term, failed, extended(o, { verbose: false }), github, false);
        } catch {
            // the one line on stderr is what matters
        }
        try {
            write(failed);
        } catch (w) {
            // The run's own error is what exits; a report that could not be written is said too, never dropped.
            term.err.write(
                `pko-guard: ${escapeText(isReportedError(w) ? w.message : `cannot write the reports: ${String((w as Error)?.message ?? w).split("\n")[0]}`)}\n`,
            );
        }
    };
    if (refused !== undefined || clashes.length > 0) {
        const c = clashes[0];
        const message =
            refused ??
            `--report ${c.request.format}=${c.request.file} is an input of this run (${c.input}); refusing to overwrite it`;
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
        output(term, judged.subject, o, github, toStdout !== undefined, judged.summaryText);
    } finally {
        // the reports are written even when the terminal output could not be
        write(judged.subject);
    }
    mark("reported");
    return judged.subject.outcome === "pass" ? 0 : 1;
}
