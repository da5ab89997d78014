/**
 * What makes the command guide its user, with commander's own facilities where it has them.
 * Help and `explain` fit the terminal's width (80 columns off a terminal), colour follows support/color.ts, and a usage
 * error stays one line with commander's "did you mean" on it. The streams and environment are the Terminal's so that
 * specs run the command in-process.
 */
import { Command, Help } from "commander";
import { ColorStream, Hue, colorFor, painter } from "../support/color";
import { escapeText } from "../support/escape";

/** An output stream as the command uses it. */
export interface OutStream extends ColorStream {
    write(text: string): unknown;
    columns?: number;
}

/** Where the command writes, and the environment it reads (colour, GitHub Actions). */
export interface Terminal {
    out: OutStream;
    err: OutStream;
    env: NodeJS.ProcessEnv;
}

export function processTerminal(): Terminal {
    return { out: process.stdout, err: process.stderr, env: process.env };
}

/** The width text is wrapped to on `stream`: its columns on a terminal (at least 40), else 80. */
export function textWidth(stream: OutStream): number {
    return stream.isTTY && stream.columns ? Math.max(40, stream.columns) : 80;
}

/** Where an item's description goes below its name (when beside it, it would get less than this many columns). */
const MIN_DESCRIPTION_WIDTH = 30;
/** How far a description below its name is indented. */
const BELOW = 6;

/**
 * commander's item (a command, an option, an argument and its description), or, when the names are so long that
 * the description would have less than MIN_DESCRIPTION_WIDTH columns beside them, the name on its line and the
 * description wrapped below it (commander would leave it unwrapped).
 */
function formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
    const width = this.helpWidth ?? 80;
    if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH || helper.preformatted(description))
        return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
    const below = helper.boxWrap(description, Math.max(width - BELOW, MIN_DESCRIPTION_WIDTH));
    return `  ${term}\n${below.replace(/^/gm, " ".repeat(BELOW))}`;
}

/**
 * A commander error as one line: `pko-guard: ` and the message, its suggestion ("(Did you mean check?)", which
 * commander writes on a second line) kept on it, everything escaped (the message quotes what was typed).
 */
export function errorLine(text: string): string {
    const trimmed = text.replace(/\n+$/, "");
    const m = /^([\s\S]*?)\n\((Did you mean [\s\S]*)\)$/.exec(trimmed);
    const message = (m ? m[1] : trimmed).replace(/^error: /, "");
    return `pko-guard: ${escapeText(message)}${m ? ` (${escapeText(m[2].replace(/^Did/, "did"))})` : ""}`;
}

/** Sets the program's output (commands copy it with copyInheritedSettings): streams, widths, colour, help styles. */
export function guide(program: Command, term: Terminal): Command {
    // commander strips the colour again where the output has none (getOutHasColors, getErrHasColors).
    const paint = painter(true);
    const style = (hue: Hue) => (text: string) => paint(hue, text);
    return program
        .configureOutput({
            writeOut: (s) => term.out.write(s),
            writeErr: (s) => term.err.write(s),
            outputError: (s, write) => write(errorLine(s) + "\n"),
            getOutHelpWidth: () => textWidth(term.out),
            getErrHelpWidth: () => textWidth(term.err),
            getOutHasColors: () => colorFor(term.out, term.env),
            getErrHasColors: () => colorFor(term.err, term.env),
        })
        .configureHelp({
            minWidthToWrap: MIN_DESCRIPTION_WIDTH,
            formatItem,
            styleTitle: style("bold"),
            styleCommandText: style("bold"),
            styleSubcommandText: style("cyan"),
            styleOptionText: style("cyan"),
        });
}

/** A run of the command line: where it writes, and the exit code a command's action sets (0 pass, 1 blocking findings). */
export interface Run {
    term: Terminal;
    code: number;
}
