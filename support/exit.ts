/**
 * How a command-line entry point ends: with its exit code, once what it wrote to standard output and error has
 * left the process. On a pipe (a CI log, `| tee`, a shell's `|`) Node may still hold part of a large write when the
 * command is done, and `process.exit` at that moment dropped it: `pko-guard check`'s terminal table was cut at the
 * pipe's 64 KiB. A reader that has gone away (EPIPE, `| head -1`) does not hold the exit.
 */
import { escapeText } from "./escape";
export function exitWhenWritten(code: number): void {
    const written = (stream: NodeJS.WriteStream) =>
        new Promise<void>((resolve) => {
            if (stream.writableLength === 0) return resolve();
            stream.once("error", () => resolve());
            stream.write("", () => resolve());
        });
    // `written` never rejects: both streams' errors resolve it.
    Promise.all([written(process.stdout), written(process.stderr)]).then(
        () => process.exit(code),
        () => process.exit(code),
    );
}

/**
 * Ends the process on an internal error (a defect): one line on stderr, exit 2, the trace with PKO_GUARD_DEBUG=1.
 * For a promise whose failure nothing can handle; support/fatal.ts calls it for anything that escapes.
 */
export function endWithInternalError(e: unknown): never {
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(`pko-guard: internal error: ${escapeText(message.split("\n")[0])}\n`);
    if (process.env.PKO_GUARD_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
    process.exit(2);
}
