/** `--report FORMAT=FILE` parsing and writing, shared by the harness and the gate. */
import { InvalidArgumentError } from "commander";
import * as fs from "fs";
import * as path from "path";
import { Fixture } from "../expect";
import { REPO_ROOT } from "../paths";
import { FixtureVerdict } from "../verdict";
import { renderJson } from "./json";
import { renderJunit } from "./junit";
import { renderSarif } from "./sarif";
import { ReportSubject, subjectsFromVerdicts } from "./subject";

export const FORMATS = ["json", "junit", "sarif"] as const;
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

function write(file: string, text: string): void {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(file, text);
}

export function renderSubjects(format: ReportFormat, subjects: ReportSubject[], json: () => string): string {
    switch (format) {
        case "json":
            return json();
        case "junit":
            return renderJunit(subjects);
        case "sarif":
            return renderSarif(subjects);
    }
}

export function writeReports(requests: ReportRequest[], verdicts: FixtureVerdict[], fixtures: Fixture[]): void {
    if (requests.length === 0) return;
    const dirs = new Map(fixtures.map((f) => [f.name, f.dir]));
    const subjects = subjectsFromVerdicts(verdicts, dirs, REPO_ROOT);
    for (const r of requests) write(r.file, renderSubjects(r.format, subjects, () => renderJson(verdicts)));
}
