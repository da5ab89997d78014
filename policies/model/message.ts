/**
 * The one module that knows how a finding's facts are written into its message, and read back out of it.
 * Through the Pulumi engine the message is the only channel, so the waived prefix (escaped so any reason reads
 * back exactly) and the fail-closed mark are encoded here; in-process evaluation carries findings as data.
 * Nothing else reads these marks; test/property/policies/properties.spec.ts round-trips them.
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
