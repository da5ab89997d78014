/**
 * The one data model the harness shares: legs produce rows, the verdict compares rows with
 * expectations, reports render rows and verdicts. Nothing else builds its own shape.
 */

export type Level = "mandatory" | "advisory" | "remediate" | "disabled";

/** One policy violation, as either leg observed it. */
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
     * Where the finding is in a manifest (`pko-guard check`, manifest leg): the file, and the line and column
     * of the field the rule named (or of the object). Absent for program resources.
     */
    file?: string;
    line?: number;
    column?: number;
    /** The field the line points at, when known (`spec.branch`, `subjects[0]`). */
    field?: string;
}

export type LegName = "mock" | "real" | "deploy" | "manifest";

export interface LegResult {
    leg: LegName;
    rows: Row[];
    /** Set when the fixture could not be run by this leg: never a clean result. */
    error?: string;
    /** Set when the leg does not run this fixture (e.g. mock-only): never a match. */
    skipped?: string;
    /** Leg-specific facts (e.g. the CLI's exit code), for checks and reports. */
    details?: Record<string, unknown>;
    /**
     * Checks a leg makes itself instead of comparing rows with expect.yaml (the deploy leg: manifest
     * schemas, destroy); imported lazily as a type to keep the model free of the verdict module.
     */
    checks?: import("./verdict").Check[];
    durationMs: number;
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
