/**
 * The one escape for user-controlled text in human-facing output: terminals, standard error, CI logs
 * (GitHub Actions workflow-command lines), step summaries (Markdown with HTML). Every string that comes from
 * input (file names, resource names and namespaces, messages that quote values, config keys, tool errors)
 * goes through `escapeText` before it is printed, whatever prints it: the check and gate tables, stderr
 * lines, workflow-command data and properties, step summaries, and the reports of other commands.
 *
 * Text context (the default):
 * - every control character (C0, DEL, C1), line and paragraph separators, and the invisible bidirectional
 *   and zero-width formatting characters become visible escapes (`\n`, `\r`, `\t`, `\x1b`, `\u202e`), so
 *   input can neither start a new line (and with it a workflow command) nor drive the terminal (ANSI
 *   escapes) nor hide or reorder what is shown;
 * - the workflow-command markers `::` and `##[` become `:\x3a` and `#\x23[`: a runner reads a line whose
 *   first non-blank characters are `::` as a command, and an escaped string may be wrapped onto a line of
 *   its own.
 * Markdown context: the text escape, then every ASCII punctuation mark that Markdown reads as syntax
 * backslash-escaped and `& < > " '` as HTML entities (no code spans, emphasis, links, images, autolinks —
 * `:` and `.` are escaped, which breaks `scheme://` and `www.` autolinks — tables or HTML from input).
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
