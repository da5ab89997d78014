/**
 * The pko-guard command line (cli/pko-guard.ts runs it): every command, one module each (cli/<command>.ts exports
 * `command`), run by ./command-line.ts.
 */
import { CommandTable, runCommandLine } from "./command-line";
import { Terminal, processTerminal } from "./guide";

export { VERSION } from "./command-line";

/** The commands, in the order help lists them. */
const COMMANDS: CommandTable = [
    ["check", () => import("./check")],
    ["gate", () => import("./gate")],
    ["audit", () => import("./audit")],
    ["test", () => import("./test")],
    ["webhook", () => import("./webhook")],
    ["rules", () => import("./rules")],
    ["explain", () => import("./explain")],
    ["init", () => import("./init")],
    ["doctor", () => import("./doctor")],
];

/**
 * Runs the command line `argv` (without node and the script) and resolves with its exit code (see
 * ./command-line.ts).
 */
export function main(argv: string[], term: Terminal = processTerminal()): Promise<number> {
    return runCommandLine(argv, COMMANDS, term);
}
