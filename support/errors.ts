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
