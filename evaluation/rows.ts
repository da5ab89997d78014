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
    /**
     * Where the finding is: the file (absolute, or relative to the repository root) and the 1-based line and
     * column of the declaration. The gate finds the resource's declaration in the program (engine/source-locations.ts);
     * `pko-guard check` and the manifest leg give the manifest's file and the field's line.
     */
    file?: string;
    line?: number;
    column?: number;
    /** The field the line points at, when known (`spec.branch`, `subjects[0]`). */
    field?: string;
    /** What brings the object into the cluster (`check`): `Application argocd/ledger`, `ApplicationSet argocd/apps`. */
    syncedBy?: string;
}

/**
 * A violation as the gate (or the check command) judges it: blocking (fails the gate), advisory (reported
 * only) or waived (a waiver in the pack config matched: reported, never blocking; see policies/model/waivers.ts).
 */
export interface Finding extends Row {
    status: "blocking" | "advisory" | "waived";
    /** Set when status is "waived": the waiver's reason and expiry. */
    waiver?: { reason: string; expires?: string };
    /** True when the rule could not decide and reports so that a gate never passes by accident. */
    failClosed?: boolean;
}

/** A note about the run that is not a finding: an unused waiver, say. */
export interface Notice {
    level: "advisory";
    policy?: string;
    message: string;
}

/**
 * Splits a URN into its type and name: the type is the last `$` part of the third `::` part, the name all that
 * follows the third `::` (fewer than three: both empty). Found by position, not split: every row is made with it.
 */
export function urnParts(urn: string): { type: string; name: string } {
    const first = urn.indexOf("::");
    const second = first < 0 ? -1 : urn.indexOf("::", first + 2);
    const third = second < 0 ? -1 : urn.indexOf("::", second + 2);
    if (third < 0) {
        return { type: "", name: "" };
    }
    const qualified = urn.slice(second + 2, third);
    return { type: qualified.slice(qualified.lastIndexOf("$") + 1), name: urn.slice(third + 2) };
}

/** Removes the engine's color directives and the policy description prefix from a message. */
export function normalizeMessage(message: string, description?: string): string {
    let m = message
        .replace(/<\{%[^%]*%\}>/g, "")
        .replace(/\u001b\[[0-9;]*m/g, "")
        .trim();
    if (description && m.startsWith(description)) {
        m = m.slice(description.length).trim();
    }
    return m;
}

export function row(policy: string, urn: string, level: Level, message: string): Row {
    const { type, name } = urnParts(urn);
    return { policy, resource: name, urn, type, level, message };
}

/**
 * The order of text in every report and listing: UTF-16 code units, as JavaScript's `<` compares them, whatever
 * the user's locale and Node's ICU version. A bare `localeCompare` follows LANG (under lt_LT, `y` sorts before `j`),
 * so the same run gave reports in another order on another machine, and a collation's rules move with ICU's
 * versions; making the first collator also cost every run start-up time (docs/contributing/benchmarks.md).
 */
export function compareText(a: string, b: string): number {
    return a < b ? -1 : a > b ? 1 : 0;
}

/** Stable order for rows, so every report and comparison is deterministic. */
export function sortRows<R extends Row>(rows: R[]): R[] {
    return [...rows].sort(
        (a, b) =>
            compareText(a.policy, b.policy) || compareText(a.resource, b.resource) || compareText(a.message, b.message),
    );
}
