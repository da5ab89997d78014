/**
 * Rows: the one data model the product and the harness share. A preview (gate), a harness leg or a
 * manifest check produces rows; the harness verdict compares them with expectations, the gate judges
 * them by enforcement level; reports only render them.
 */

export type Level = "mandatory" | "advisory" | "remediate" | "disabled";

/** One policy violation, as a preview (or a harness leg) observed it. */
export interface Row {
    policy: string;
    /** The resource's Pulumi name (last segment of its URN); "" for stack-level findings without one. */
    resource: string;
    urn: string;
    /** The resource's type token (from the URN). */
    type: string;
    level: Level;
    /** The policy's message without the description the SDK prefixes. */
    message: string;
}

/** Splits a URN into its type and name. */
export function urnParts(urn: string): { type: string; name: string } {
    const parts = urn.split("::");
    if (parts.length < 4) {
        return { type: "", name: "" };
    }
    const qualified = parts[2];
    return { type: qualified.split("$").pop() ?? qualified, name: parts.slice(3).join("::") };
}

/** Removes the engine's color directives and the policy description prefix from a message. */
export function normalizeMessage(message: string, description?: string): string {
    let m = message.replace(/<\{%[^%]*%\}>/g, "").replace(/\u001b\[[0-9;]*m/g, "").trim();
    if (description && m.startsWith(description)) {
        m = m.slice(description.length).trim();
    }
    return m;
}

export function row(policy: string, urn: string, level: Level, message: string): Row {
    const { type, name } = urnParts(urn);
    return { policy, resource: name, urn, type, level, message };
}

/** Stable order for rows, so every report and comparison is deterministic. */
export function sortRows(rows: Row[]): Row[] {
    return [...rows].sort(
        (a, b) =>
            a.policy.localeCompare(b.policy) ||
            a.resource.localeCompare(b.resource) ||
            a.message.localeCompare(b.message),
    );
}
