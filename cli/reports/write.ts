/** `--report FORMAT=FILE` parsing and writing, one path for the harness and the gate alike. */
import { InvalidArgumentError } from "commander";
import * as fs from "fs";
import * as path from "path";
import { ToolError } from "../../core/errors";
import type { ReportSubject } from "./subject";

export const FORMATS = ["json", "junit", "sarif", "policyreport"] as const;
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

/** Renders one format; each renderer (and its libraries) is loaded only when that format is asked for. */
export function renderReport(format: ReportFormat, subjects: ReportSubject[]): string {
    switch (format) {
        case "json":
            return (require("./json") as typeof import("./json")).renderJson(subjects);
        case "junit":
            return (require("./junit") as typeof import("./junit")).renderJunit(subjects);
        case "sarif":
            return (require("./sarif") as typeof import("./sarif")).renderSarif(subjects);
        case "policyreport":
            return (require("./policyreport") as typeof import("./policyreport")).renderPolicyReport(subjects);
    }
}

/**
 * Writes every requested report. A report that cannot be written never goes unnoticed, and never keeps the
 * others from being written: all are tried, then ToolError names the ones that failed (one line, exit 2).
 */
export function writeReports(requests: ReportRequest[], subjects: ReportSubject[]): void {
    const failed: string[] = [];
    for (const r of requests) {
        try {
            fs.mkdirSync(path.dirname(path.resolve(r.file)), { recursive: true });
            fs.writeFileSync(r.file, renderReport(r.format, subjects));
        } catch (e) {
            failed.push(`${r.file} (${(e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.name : "error")})`);
        }
    }
    if (failed.length > 0) throw new ToolError(`cannot write report ${failed.join(", ")}`);
}
