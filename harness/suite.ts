/**
 * One harness run as a command runs it (`pko-guard test`, and harness/cli.ts): load the fixtures, run them through
 * the legs with the packs asked for, print the verdicts (and GitHub annotations with `--format github`), write the
 * reports, and answer the exit code: 0 no mismatch and no fixture error, 1 any mismatch or error. Bad input throws
 * (BadInputError and its kin: the command prints one line and exits 2) before anything runs.
 */
import * as os from "os";
import { ReportRequest, writeReports } from "../reports/write";
import { fixtureAnnotations } from "./annotations";
import { PackSpec } from "./packs";
import { LegChoice, fixtureSubjects, loadFixtures, runFixtures } from "./runner";
import { Style, progress, renderRun } from "./verdict-table";

export interface SuiteOptions {
    /** Fixture folders, or folders holding fixtures at any depth. */
    paths: string[];
    leg: LegChoice;
    timeoutMs: number;
    verbose: boolean;
    /** Fixtures run at once (default: the machine's cores). */
    jobs?: number;
    /** The policy config for fixtures without their own policy-config.json. */
    config?: string;
    packs: PackSpec[];
    reports: ReportRequest[];
    /** `github`: GitHub Actions workflow commands after the table, one a failed check. */
    format?: "table" | "github";
}

export interface SuiteStreams {
    out: { write(text: string): unknown };
    /** Progress goes here when it is a terminal. */
    err: NodeJS.WriteStream;
    style: Style;
}

/** The cores this machine has (the default of --jobs). */
export function defaultJobs(): number {
    return Math.max(1, typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length);
}

export async function runSuite(o: SuiteOptions, streams: SuiteStreams): Promise<number> {
    const builtin = o.packs.some((p) => p.builtin);
    const fixtures = loadFixtures(o.paths, { policyConfig: o.config, checkConfig: builtin });
    const shown = progress(streams.err);
    const verdicts = await runFixtures(fixtures, {
        leg: o.leg,
        timeoutMs: o.timeoutMs,
        packs: o.packs,
        jobs: o.jobs ?? defaultJobs(),
        onStart: (f, i, total) => shown.start(f.name, i, total),
    });
    shown.done();
    streams.out.write(renderRun(verdicts, { verbose: o.verbose, style: streams.style }) + "\n");
    if (o.format === "github") for (const line of fixtureAnnotations(verdicts, fixtures)) streams.out.write(line);
    writeReports(o.reports, fixtureSubjects(verdicts, fixtures));
    // Skipped by design (mock-only fixtures, fixtures the gate stops before deploy) is shown as skipped,
    // never as a match, and does not fail the run; any mismatch or error does.
    return verdicts.some((v) => v.outcome === "mismatch" || v.outcome === "error") ? 1 : 0;
}
