/** Option parsers (commander's) shared by the command line's commands and the harness's. */
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

/** A repeatable option's values, in order. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A TCP port: a whole number from 1 to 65535. */
export function portNumber(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 65535) throw new InvalidArgumentError("a port is a number from 1 to 65535");
    return n;
}

/** A whole number above 0. */
export function positiveInt(v: string): number {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || !Number.isSafeInteger(n)) throw new InvalidArgumentError("a whole number above 0");
    return n;
}
