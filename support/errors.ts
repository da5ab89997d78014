/**
 * Errors every command reports as one line on stderr with exit code 2 (bad input or a tool that cannot
 * run), shared by the pko-guard CLI and the fixture harness.
 */

/** Bad input: an unknown flag value, a missing folder, an invalid config or expectation file. */
export class BadInputError extends Error {}

/** The Pulumi CLI, language host or provider the command needs is not installed. */
export class ToolchainMissingError extends Error {}

/** A tool ran but failed for a reason that is not the user's input (a program error, a crashed CLI). */
export class ToolError extends Error {}

/** True for the errors that are reported as one line and exit code 2. */
export function isReportedError(e: unknown): e is Error {
    return e instanceof BadInputError || e instanceof ToolchainMissingError || e instanceof ToolError;
}

/**
 * Bad input found in several places at once (every file of a run that cannot be read): each problem is a line of
 * its own, then `summary`; the message (what reports carry) says it all on one line.
 */
export class BadInputsError extends BadInputError {
    constructor(
        readonly problems: string[],
        readonly summary: string,
    ) {
        super(`${summary}: ${problems.join("; ")}`);
    }
}

/** The lines a reported error is printed as, each after `pko-guard: ` (one, unless it is a BadInputsError). */
export function errorLines(e: Error): string[] {
    return e instanceof BadInputsError ? [...e.problems, e.summary] : [e.message];
}
