/**
 * The one escape for user-controlled text in human-facing output: terminals, standard error, CI logs and step
 * summaries.
 * Text context: control, line-separator, bidirectional and zero-width characters become visible escapes, and the
 * workflow-command markers `::` and `##[` are broken, so input can neither start a (command) line, drive the terminal,
 * nor hide what is shown. Markdown context adds backslash-escaped syntax and HTML entities (`:` and `.` too, which
 * defeats autolinks). Design: docs/reports.md, "Text from input is escaped".
 */

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const HTML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const MARKDOWN_SYNTAX = /[\\`*_{}[\]()#+\-.!|~:=$^]/g;

function visible(c: string): string {
    const code = c.charCodeAt(0);
    return (
        NAMED[c] ??
        (code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`)
    );
}

export type EscapeContext = "text" | "markdown";

/** `s` made safe to print in `context` (see the module comment); anything not a string is shown as text first. */
export function escapeText(s: unknown, context: EscapeContext = "text"): string {
    const text = (typeof s === "string" ? s : String(s))
        .replace(CONTROL, visible)
        .replace(/::/g, ":\\x3a")
        .replace(/##\[/g, "#\\x23[");
    if (context === "text") return text;
    return text.replace(MARKDOWN_SYNTAX, (c) => `\\${c}`).replace(/[&<>"']/g, (c) => HTML[c]);
}
