/**
 * `pko-guard test [PATH...]`: the harness as a command (harness/suite.ts) for a user's own fixtures, config and packs,
 * from any project folder.
 * `--init DIR` scaffolds a fixture, `--update` rewrites expectations (harness/expect-update.ts), `--migrate` adds the
 * versioned header to old expectation files. Exit codes as `check`: 0 every fixture matches, 1 a mismatch or fixture
 * error, 2 bad input.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../support/errors";
import { collect, timeoutSeconds } from "../support/options";
import { escapeText } from "../support/escape";
import { ReportRequest, parseReportOption } from "../reports/write";
import type { Run, Terminal } from "./guide";

interface TestCliOptions {
    leg: "mock" | "real" | "manifest" | "both" | "all" | "deploy";
    config?: string;
    policyPack: string[];
    policyPackConfig: string[];
    defaultPack: boolean;
    jobs?: number;
    report: ReportRequest[];
    format: "table" | "github";
    timeout: number;
    verbose: boolean;
    init?: string;
    migrate: boolean;
    update: boolean;
}

function jobCount(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 256) throw new InvalidArgumentError("jobs is a number from 1 to 256");
    return n;
}

export function command(run: Run): Command {
    return new Command("test")
        .summary("prove your fixtures get the verdicts expected")
        .description(
            "run fixtures (a folder with a Pulumi program or manifests/ and an expect.yaml) through the policy packs in a mock preview, a real preview and the manifest check, and compare the verdicts with expect.yaml",
        )
        .argument("[path...]", "fixture folders, or folders holding fixtures at any depth", ["."])
        .addOption(
            new Option("--leg <leg>", "legs: mock, real (pulumi preview), manifest (check), both (mock + real), all")
                .choices(["mock", "real", "manifest", "both", "all", "deploy"])
                .default("mock"),
        )
        .option("-c, --config <file>", "policy config for fixtures without their own policy-config.json")
        .option("--policy-pack <dir>", "another CrossGuard pack folder to run (repeatable)", collect, [] as string[])
        .option(
            "--policy-pack-config <file>",
            "config of the --policy-pack in the same position (repeatable)",
            collect,
            [] as string[],
        )
        .option("--no-default-pack", "leave pko-guard's own pack out (needs a --policy-pack)")
        .option("-j, --jobs <n>", "fixtures run at once (default: the cores)", jobCount)
        .option("--report <format=file>", "write a report: json, junit, sarif (repeatable)", parseReportOption, [])
        .addOption(
            new Option("--format <format>", "table, or github (the table, then a workflow command a failure)")
                .choices(["table", "github"])
                .default("table"),
        )
        .option("--timeout <seconds>", "per-fixture timeout", timeoutSeconds, 300)
        .option("-v, --verbose", "print every check, not only mismatches and errors", false)
        .option("--init <dir>", "write DIR/expect.yaml from the program's current verdict, for you to review")
        .option("--migrate", "add the apiVersion/kind header to expect.yaml files without it", false)
        .option(
            "--update",
            "rewrite each expect.yaml (and corpus entry's corpus.json) under the paths from the verdicts of --leg, for review by diff",
            false,
        )
        .action(async (paths: string[], o: TestCliOptions) => {
            run.code = await runTest(paths, o, run.term);
        });
}

/** The policy config the working folder's repository names in .pko-guard.yaml (`config:`), if any. */
async function repositoryConfig(): Promise<string | undefined> {
    const { checkSettings } = await import("../gitops/manifests/check-settings");
    return checkSettings(["."], { exclude: [], repository: [], apiVersions: [] }).config?.value;
}

/** Runs the command; resolves with its exit code (bad input throws, as every command's does). */
async function runTest(paths: string[], o: TestCliOptions, term: Terminal): Promise<number> {
    const { runPacks } = await import("../harness/packs");
    const packs = runPacks({ defaultPack: o.defaultPack, packs: o.policyPack, packConfigs: o.policyPackConfig });
    // Every leg reads the config from its own folder (the real leg's CLI runs in a temporary one). Without
    // --config, the one the repository's .pko-guard.yaml names, as check and the pre-commit hook find it.
    const config = o.config === undefined ? await repositoryConfig() : path.resolve(o.config);
    if (config !== undefined && !fs.existsSync(config)) throw new BadInputError(`${o.config}: no such policy config`);
    if (o.migrate) {
        const { migrateFixtures } = await import("../harness/scaffold");
        const r = migrateFixtures(paths);
        for (const f of r.migrated) term.out.write(`migrated ${escapeText(f)}\n`);
        term.out.write(`${r.migrated.length} migrated, ${r.current} already pko-guard/v1\n`);
        return 0;
    }
    if (o.init) {
        const { scaffoldFixture } = await import("../harness/scaffold");
        const r = await scaffoldFixture(o.init, { packs, config, timeoutMs: o.timeout * 1000 });
        term.out.write(
            `wrote ${escapeText(r.file)}: ${r.violations} violation(s) as the ${r.leg} leg reports them today; review each, then run pko-guard test\n`,
        );
        return 0;
    }
    if (o.update) {
        const { updateExpectations } = await import("../harness/expect-update");
        const r = await updateExpectations(
            paths,
            { policyConfig: config, checkConfig: packs.some((p) => p.builtin) },
            { leg: o.leg, timeoutMs: o.timeout * 1000, packs, jobs: o.jobs },
        );
        for (const f of r.updated) term.out.write(`updated ${escapeText(f)}\n`);
        for (const n of [...r.left, ...r.review]) term.err.write(`pko-guard: ${escapeText(n)}\n`);
        term.out.write(`${r.updated.length} updated, ${r.unchanged} unchanged; review the diff\n`);
        return r.left.length > 0 ? 1 : 0;
    }
    const { runSuite } = await import("../harness/suite");
    const { styleFor } = await import("../harness/verdict-table");
    const err = process.stderr;
    return runSuite(
        {
            paths,
            leg: o.leg,
            timeoutMs: o.timeout * 1000,
            verbose: o.verbose,
            jobs: o.jobs,
            config,
            packs,
            reports: o.report,
            format: o.format,
        },
        { out: term.out, err, style: styleFor(term.out as NodeJS.WriteStream, term.env) },
    );
}
