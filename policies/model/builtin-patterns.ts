/**
 * The pack's default patterns (the production Stack pattern, the preview Stack pattern) and what each compiles to,
 * written out: a run that keeps the defaults, as most do, then needs no RE2 engine at all, so re2js (a third of a
 * megabyte of code, a megabyte of heap once compiled) is loaded only on the first pattern a user configures
 * (./production.ts). Both defaults are a test of the input's last `/`-separated part (`(^|/)` before, `$` after,
 * nothing between that matches `/`), so each is that part tested; test/unit/policies/model/builtin-patterns.spec.ts
 * proves each agrees with RE2 on every input it generates.
 */

/** A compiled user pattern: RE2 semantics, linear in the input whatever the pattern. */
export interface Pattern {
    test(input: string): boolean;
}

/** The default of productionStackPatterns: a stack named `prod`, `production` or `prd` (with a `-`/`_`/`.` suffix). */
export const PRODUCTION_STACK_PATTERN = "(^|/)(prod|production|prd)([-_.][^/]*)?$";
/** The default of previewOnlyStackPatterns: a stack named `preview` or `pr-<digits>`. */
export const PREVIEW_STACK_PATTERN = "(^|/)(preview|pr-[0-9]+)$";

/** The input after its last `/` (all of it when it has none). */
function lastPart(input: string): string {
    return input.slice(input.lastIndexOf("/") + 1);
}

function production(input: string): boolean {
    const part = lastPart(input);
    for (const name of ["prod", "production", "prd"]) {
        if (!part.startsWith(name)) continue;
        if (part.length === name.length || "-_.".includes(part[name.length])) return true;
    }
    return false;
}

function preview(input: string): boolean {
    const part = lastPart(input);
    return part === "preview" || (part.length > 3 && part.startsWith("pr-") && /^[0-9]+$/.test(part.slice(3)));
}

/** Each default pattern's text, and the matcher it compiles to. */
export const BUILT_IN_PATTERNS: ReadonlyMap<string, Pattern> = new Map([
    [PRODUCTION_STACK_PATTERN, { test: production }],
    [PREVIEW_STACK_PATTERN, { test: preview }],
]);
