/**
 * A rule's prose is written once, in its `about` (policy.ts `RuleAbout`), wrapped for `pko-guard explain`.
 * Everything else that shows a rule's text derives from it: the SDK's `description` and `remediationSteps` as
 * plain text, and docs/rules.md as Markdown.
 */

/** One paragraph of `about` prose as plain text: one line, no backticks, starting with a capital letter. */
export function plainText(prose: string): string {
    const line = prose.replace(/\s+/g, " ").trim();
    // Prose that opens with code (`spec.refresh`) keeps its case; a sentence starts with a capital.
    const text = line.startsWith("`") ? line : line.charAt(0).toUpperCase() + line.slice(1);
    return text.replace(/`/g, "");
}
