/**
 * The pko-guard command line over a table of commands (cli/program.ts holds every command's; the `check` bundle's
 * entry, cli/bundle/check-entry.ts, only `check`'s). A command's module is loaded only when that command runs
 * (`await import()`, kept lazy by the CLI bundle), so start-up holds only what it uses. Without a command: the commands
 * and an example on standard error, exit 2. Exit codes: 0 no blocking violation, 1 blocking violations, 2 bad usage or
 * a tool error (one line).
 */
import { Command, CommanderError } from "commander";
import * as fs from "fs";
import * as path from "path";
import { escapeText } from "../support/escape";
import { errorLines, isReportedError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";
import { Run, Terminal, guide, processTerminal } from "./guide";

export const VERSION = (
    JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }
).version;

/** A command's module: it declares the command, whose action runs it and sets the run's exit code. */
export interface CommandModule {
    command(run: Run): Command;
}

/** Commands by name, in the order help lists them, each with how its module is loaded. */
export type CommandTable = [string, () => Promise<CommandModule>][];

/** What help ends with: an example of the command users run first. */
const EXAMPLES = `
Examples:
  pko-guard check manifests/ applications/   judge a GitOps repository
  pko-guard check . --format sarif > pko-guard.sarif
  pko-guard gate infra/ --stack prod         preview a program with the pack
  pko-guard test fixtures/ --leg both        prove your fixtures' verdicts
  pko-guard explain pko-stack-prod-pinned-commit

'pko-guard help COMMAND' shows a command's options.`;

/** What asks for the version alone: commander's flags, and the `-v` and `version` users type (git, node, npm). */
const VERSION_WORDS = ["-V", "--version", "-v", "version"];

/**
 * The commands a command line needs: none for the version, the one it names (`NAME ...` or `help NAME`), or all
 * of them (for help without a command, or an unknown command's suggestion).
 */
async function neededCommands(argv: string[], run: Run, commands: CommandTable): Promise<Command[]> {
    if (VERSION_WORDS.includes(argv[0])) return [];
    const named = argv[0] === "help" ? argv[1] : argv[0];
    const needed = commands.filter(([name]) => name === named);
    const modules = await Promise.all((needed.length > 0 ? needed : commands).map(([, load]) => load()));
    return modules.map((m) => m.command(run));
}

/**
 * Runs the command line `argv` (without node and the script) with `commands` and resolves with its exit code. Without a command,
 * the commands (one line each) and the examples go to standard error with exit code 2; `pko-guard help` writes
 * them to standard output with exit code 0.
 */
export async function runCommandLine(
    argv: string[],
    commands: CommandTable,
    term: Terminal = processTerminal(),
): Promise<number> {
    const run: Run = { term, code: 0 };
    const program = guide(
        new Command("pko-guard")
            .description("Pulumi CrossGuard policy pack for governed Pulumi Kubernetes Operator deployments")
            .version(VERSION, "-V, --version", "print the version (also -v, version)")
            .addHelpText("after", EXAMPLES)
            .exitOverride(),
        term,
    );
    // Each command inherits the program's settings (exit override, output, help), as program.command() would give.
    for (const command of await neededCommands(argv, run, commands))
        program.addCommand(command.copyInheritedSettings(program));
    // `help NAME` of no command says so as `NAME` alone would (with commander's suggestion), not with the help.
    const unknownHelp = argv[0] === "help" && argv.length > 1 && !program.commands.some((c) => c.name() === argv[1]);
    // `pko-guard -v` and `pko-guard version` alone print the version (a command's own -v stays its own).
    const args = argv.length === 1 && VERSION_WORDS.includes(argv[0]) ? ["--version"] : argv;
    try {
        await program.parseAsync(unknownHelp ? argv.slice(1, 2) : args, { from: "user" });
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
