/** Option parsers shared by the harness and gate command lines. */
import { InvalidArgumentError } from "commander";

/** Longest timeout accepted: a day (Node's timers cannot go past about 24.8 days; a day is plenty). */
export const MAX_TIMEOUT_SECONDS = 86400;

/** `--timeout <seconds>`: a positive number of seconds, at most MAX_TIMEOUT_SECONDS. */
export function timeoutSeconds(v: string): number {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("must be a positive number of seconds");
    if (n > MAX_TIMEOUT_SECONDS) throw new InvalidArgumentError(`must be at most ${MAX_TIMEOUT_SECONDS} seconds`);
    return n;
}
