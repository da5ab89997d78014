/**
 * Colour in pko-guard's terminal output, by the conventions commander follows for help (so that help and findings
 * agree).
 * NO_COLOR (non-empty) or FORCE_COLOR=0/false: none; any other FORCE_COLOR or CLICOLOR_FORCE: always; else only on a
 * terminal with colours. Only pko-guard's own words are painted; text from input is escaped and never coloured.
 */

/** What colour depends on in an output stream. */
export interface ColorStream {
    isTTY?: boolean;
    hasColors?: () => boolean;
}

/** Whether output to `stream` is coloured (see the module comment). */
export function colorFor(stream: ColorStream, env: NodeJS.ProcessEnv = process.env): boolean {
    if (env.NO_COLOR || env.FORCE_COLOR === "0" || env.FORCE_COLOR === "false") return false;
    if (env.FORCE_COLOR !== undefined || env.CLICOLOR_FORCE !== undefined) return true;
    return stream.isTTY === true && (stream.hasColors?.() ?? false);
}

const CODES = {
    bold: [1, 22],
    dim: [2, 22],
    red: [31, 39],
    green: [32, 39],
    yellow: [33, 39],
    cyan: [36, 39],
} as const;

export type Hue = keyof typeof CODES;

/** Paints text when colour is on; the identity when it is off. */
export type Painter = (hue: Hue, text: string) => string;

export function painter(on: boolean): Painter {
    return on ? (hue, text) => `\u001b[${CODES[hue][0]}m${text}\u001b[${CODES[hue][1]}m` : (_hue, text) => text;
}

/** No colour. */
export const PLAIN: Painter = painter(false);
