/**
 * Where an unclosed flow collection or quoted string begins. A YAML parser meets an unclosed `{`, `[` or quote
 * only where the text stops making sense, often lines later (`6:1 bad indentation` for a `{` left open on line
 * 5); the user's mistake is the opening token. This scans the text up to the error's offset as YAML's lexer
 * would, for what is still open there: flow collections (`{`, `[`), quoted scalars, skipping comments and block
 * scalars (`|`, `>`). Only indicators count: a `{` inside a plain scalar (`a{b`) is text.
 */

export type Opener = "{" | "[" | '"' | "'";

export interface Unclosed {
    /** The offset of the opening token. */
    offset: number;
    what: Opener;
}

/** The innermost opener still open at `end` (a flow collection or quoted scalar begun earlier), if any. */
export function unclosedAt(text: string, end: number): Unclosed | undefined {
    const stack: Unclosed[] = [];
    // The last significant character on the current line ("\n" at a line's start): an indicator may begin a value.
    let prev = "\n";
    let lineIndent = 0;
    let blockIndent = -1; // inside a block scalar: lines indented more than this are its text
    const limit = Math.min(end, text.length);
    for (let i = 0; i < limit; i++) {
        const c = text[i];
        const top = stack[stack.length - 1];
        if (top?.what === '"') {
            if (c === "\\") i++;
            else if (c === '"') stack.pop();
            continue;
        }
        if (top?.what === "'") {
            if (c === "'" && text[i + 1] === "'") i++;
            else if (c === "'") stack.pop();
            continue;
        }
        if (c === "\n") {
            prev = "\n";
            let j = i + 1;
            while (text[j] === " ") j++;
            lineIndent = j - i - 1;
            // A block scalar's text: skip whole lines indented past the line that began it (blank lines too).
            if (blockIndent >= 0 && (lineIndent > blockIndent || text[j] === "\n" || text[j] === "\r")) {
                const next = text.indexOf("\n", j);
                i = (next === -1 ? limit : next) - 1;
                continue;
            }
            blockIndent = -1;
            continue;
        }
        if (c === " " || c === "\t" || c === "\r") continue;
        if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) {
            const next = text.indexOf("\n", i);
            i = (next === -1 ? limit : next) - 1;
            continue;
        }
        const inFlow = stack.length > 0;
        const valueStart = prev === "\n" || ":-,[{?".includes(prev);
        if ((c === "{" || c === "[") && (valueStart || inFlow) && ":-,[{?\n".includes(prev))
            stack.push({ offset: i, what: c });
        else if ((c === "}" && top?.what === "{") || (c === "]" && top?.what === "[")) stack.pop();
        else if ((c === '"' || c === "'") && valueStart) stack.push({ offset: i, what: c });
        else if ((c === "|" || c === ">") && valueStart && !inFlow) blockIndent = lineIndent;
        prev = c;
    }
    return stack[stack.length - 1];
}

/** The fixed reason for an opener left open (no text of the document). */
export function unclosedReason(what: Opener): string {
    switch (what) {
        case "{":
            return 'a flow mapping ("{") that is never closed';
        case "[":
            return 'a flow sequence ("[") that is never closed';
        default:
            return `a quoted string (${what}) that is never closed`;
    }
}
