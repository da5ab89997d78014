/**
 * The one module that knows how a finding's facts are written into its message, and read back out of it.
 *
 * Where pko-guard evaluates in-process (`check`, the manifest leg) a finding travels as data; through the
 * Pulumi engine (`pulumi preview`, Pulumi Cloud, the gate) the message is the only channel, so the pack
 * encodes there what the readers need:
 * - waived: a `[waived: REASON; until DATE] ` prefix (the date only when the waiver expires). In REASON, `\`,
 *   `]`, `;` and line breaks are escaped with a backslash, so that any reason reads back exactly.
 * - fail-closed (the rule could not decide, and reports so that a gate never passes by accident): the
 *   message says so in words, "could not evaluate", "fails closed" or "unknown ... during preview"; a
 *   fail-closed finding whose text says none of that (or ends with the mark itself) gets " (fails closed)"
 *   appended, and reading strips it once.
 * - the field a finding is about is not written: through the engine nothing needs it (the gate locates the
 *   resource in the program); in-process findings carry it as data (`RuleFinding.field`), never read back
 *   from the text.
 * Nothing else reads these marks (no regex on wording elsewhere); test/property/policies/properties.spec.ts
 * round-trips them.
 */

/** A waiver that waived a finding: its reason and, when it has one, its expiry (YYYY-MM-DD). */
export interface WaiverMark {
    reason: string;
    expires?: string;
}

/** What the message of a finding carries besides its text. */
export interface MessageFacts {
    /** The rule's message, without any mark. */
    text: string;
    failClosed: boolean;
    /** Set when a waiver matched. */
    waiver?: WaiverMark;
}

const FAIL_CLOSED_WORDING = /could not evaluate|fails closed|\bunknown\b[^.;]*during preview/i;
const FAIL_CLOSED_SUFFIX = " (fails closed)";
const WAIVED = "[waived: ";
const UNTIL = /^; until (\d{4}-\d{2}-\d{2})\] /;

/** True when the text already says the rule could not decide (the wording every fail-closed message uses). */
export function saysFailClosed(text: string): boolean {
    return FAIL_CLOSED_WORDING.test(text);
}

function escapeReason(reason: string): string {
    return reason.replace(/[\\\];\n\r]/g, (c) => (c === "\n" ? "\\n" : c === "\r" ? "\\r" : `\\${c}`));
}

/** Writes a finding's facts into its message (what the engine carries). */
export function encodeMessage(f: MessageFacts): string {
    // A text that ends with the suffix itself gets it once more, so that reading strips exactly one.
    const mark = f.failClosed && (!saysFailClosed(f.text) || f.text.endsWith(FAIL_CLOSED_SUFFIX));
    const text = mark ? `${f.text}${FAIL_CLOSED_SUFFIX}` : f.text;
    if (!f.waiver) return text;
    return `${WAIVED}${escapeReason(f.waiver.reason)}${f.waiver.expires ? `; until ${f.waiver.expires}` : ""}] ${text}`;
}

/** Reads a waived prefix: the reason (unescaped), the expiry and where the text starts; undefined when there is none. */
function readWaived(message: string): { waiver: WaiverMark; rest: string } | undefined {
    if (!message.startsWith(WAIVED)) return undefined;
    let reason = "";
    for (let i = WAIVED.length; i < message.length; i++) {
        const c = message[i];
        if (c === "\\" && i + 1 < message.length) {
            const n = message[++i];
            reason += n === "n" ? "\n" : n === "r" ? "\r" : n;
        } else if (c === "]" && message[i + 1] === " ") {
            return { waiver: { reason }, rest: message.slice(i + 2) };
        } else if (c === ";") {
            const m = UNTIL.exec(message.slice(i));
            if (!m) return undefined;
            return { waiver: { reason, expires: m[1] }, rest: message.slice(i + m[0].length) };
        } else {
            reason += c;
        }
    }
    return undefined;
}

/** Reads a message's facts back (what the engine carried): the text without marks, the waiver, fail-closed. */
export function decodeMessage(message: string): MessageFacts {
    const waived = readWaived(message);
    let text = waived ? waived.rest : message;
    const failClosed = saysFailClosed(text);
    if (text.endsWith(FAIL_CLOSED_SUFFIX)) {
        const rest = text.slice(0, -FAIL_CLOSED_SUFFIX.length);
        if (!saysFailClosed(rest) || rest.endsWith(FAIL_CLOSED_SUFFIX)) text = rest;
    }
    return { text, failClosed, ...(waived ? { waiver: waived.waiver } : {}) };
}
