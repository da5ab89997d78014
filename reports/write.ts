/**
 * `--report FORMAT=FILE` parsing and writing, one path for every command. Every requested report is written on
 * every outcome (verdict, bad input, tool error, interrupt); a report path that is one of the run's inputs is
 * refused before anything is written, so a report never overwrites what it judges; a report that cannot be
 * written does not stop the others (one line names the failures, exit 2). FILE `-` is standard output.
 */
import { InvalidArgumentError } from "commander";
import * as fs from "fs";
import * as path from "path";
import { ToolError } from "../support/errors";
import type { ReportSubject } from "./subject";

export const FORMATS = ["json", "junit", "sarif", "policyreport"] as const;
/** The report file that is standard output. */
export const STDOUT = "-";
export type ReportFormat = (typeof FORMATS)[number];
export interface ReportRequest {
    format: ReportFormat;
    file: string;
}

/** commander option parser: accumulates FORMAT=FILE pairs. */
export function parseReportOption(value: string, previous: ReportRequest[]): ReportRequest[] {
    const m = /^([a-z]+)=(.+)$/.exec(value);
    if (!m || !(FORMATS as readonly string[]).includes(m[1])) {
        throw new InvalidArgumentError(`expected FORMAT=FILE with FORMAT one of ${FORMATS.join(", ")}`);
    }
    return [...previous, { format: m[1] as ReportFormat, file: m[2] }];
}

/**
 * A report in the pieces it is written in, each format's renderer (and its libraries) loaded only when that format
 * is asked for. The report of a large repository is more than one string can hold (V8: 2^29-24 characters), so
 * JSON, SARIF and the PolicyReport are never joined. JUnit is one piece: junit-report-builder renders the whole
 * document with xmlbuilder, and its size is bounded by the findings' one-line texts (see ./junit.ts).
 */
export function reportChunks(format: ReportFormat, subjects: ReportSubject[]): Iterable<string> {
    switch (format) {
        case "json":
            return (require("./json") as typeof import("./json")).jsonReportChunks(subjects);
        case "junit":
            return [(require("./junit") as typeof import("./junit")).renderJunit(subjects)];
        case "sarif":
            return (require("./sarif") as typeof import("./sarif")).sarifChunks(subjects);
        case "policyreport":
            return (require("./policyreport") as typeof import("./policyreport")).policyReportChunks(subjects);
    }
}

/** Pieces joined into runs of about a megabyte (a run is as long as its longest piece at most a megabyte more). */
export function* batched(chunks: Iterable<string>, size = 1 << 20): Generator<string> {
    let pending = "";
    for (const chunk of chunks) {
        pending += chunk;
        if (pending.length >= size) {
            yield pending;
            pending = "";
        }
    }
    if (pending) yield pending;
}

/** Writes a report's pieces into a file (`flags` "a" appends), one after another, about a megabyte a write. */
export function writeChunks(file: string, chunks: Iterable<string>, flags = "w"): void {
    const fd = fs.openSync(file, flags);
    try {
        for (const text of batched(chunks)) {
            const buf = Buffer.from(text, "utf8");
            for (let done = 0; done < buf.length;) done += fs.writeSync(fd, buf, done, buf.length - done);
        }
    } finally {
        fs.closeSync(fd);
    }
}

/** Reports that could not be written (after every other one was). */
export class ReportWriteError extends ToolError {}

/**
 * Writes every requested report. A report that cannot be written never goes unnoticed, and never keeps the
 * others from being written: all are tried, then ReportWriteError names the ones that failed (one line, exit 2).
 * The report to STDOUT goes to `stdout` in pieces of about a megabyte; without it (a command whose standard output
 * is its table) that report cannot be written.
 */
export function writeReports(
    requests: ReportRequest[],
    subjects: ReportSubject[],
    stdout?: (piece: string) => void,
): void {
    const failed: string[] = [];
    for (const r of requests) {
        if (r.file === STDOUT) {
            try {
                if (stdout) for (const piece of batched(reportChunks(r.format, subjects))) stdout(piece);
                else failed.push(`${r.format}=${STDOUT} (standard output is this command's own)`);
            } catch {
                failed.push(`${r.format}=${STDOUT} (cannot write)`);
            }
            continue;
        }
        try {
            fs.mkdirSync(path.dirname(path.resolve(r.file)), { recursive: true });
            writeChunks(r.file, reportChunks(r.format, subjects));
        } catch (e) {
            failed.push(`${r.format}=${r.file} (${(e as NodeJS.ErrnoException).code ?? "cannot write"})`);
        }
    }
    if (failed.length > 0) throw new ReportWriteError(`cannot write report ${failed.join(", ")}`);
}

/** The file a path names, resolved through symbolic links as far as it exists. */
function realish(p: string): string {
    const abs = path.resolve(p);
    try {
        return fs.realpathSync(abs);
    } catch {
        try {
            return path.join(fs.realpathSync(path.dirname(abs)), path.basename(abs));
        } catch {
            return abs;
        }
    }
}

const MANIFEST = /\.(ya?ml|json)$/i;

/**
 * The reports whose path is an input of the run, each with the input it would overwrite: the same file as an
 * input file (or the config), or an existing manifest inside an input folder. "-" (standard input) is no path.
 */
export function inputClashes(requests: ReportRequest[], inputs: string[]): { request: ReportRequest; input: string }[] {
    const out: { request: ReportRequest; input: string }[] = [];
    for (const request of requests) {
        if (request.file === STDOUT) continue;
        const target = realish(request.file);
        for (const input of inputs) {
            if (input === "-") continue;
            const real = realish(input);
            let folder = false;
            try {
                folder = fs.statSync(real).isDirectory();
            } catch {
                // not there: only an equal path clashes
            }
            const inside =
                folder &&
                !path.relative(real, target).startsWith("..") &&
                !path.isAbsolute(path.relative(real, target));
            if (target === real || (inside && MANIFEST.test(target) && fs.existsSync(target))) {
                out.push({ request, input });
                break;
            }
        }
    }
    return out;
}
