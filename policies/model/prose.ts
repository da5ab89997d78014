/**
 * A rule's prose is written once, in its `about` (policy.ts `RuleAbout`): lines wrapped for the terminal
 * (`pko-guard explain`), `code` in backticks, the first word in lower case after "What:", "Fix:". Everything
 * else that shows a rule's text derives from it: the policy SDK's `description` and `remediationSteps`
 * (GetAnalyzerInfo, Pulumi Cloud, `pko-guard rules`, the reports) as plain text, the rule reference
 * (docs/rules.md) as Markdown.
 */

/** One paragraph of `about` prose as plain text: one line, no backticks, starting with a capital letter. */
export function plainText(prose: string): string {
    const line = prose.replace(/\s+/g, " ").trim();
    // Prose that opens with code (`spec.refresh`) keeps its case; a sentence starts with a capital.
    const text = line.startsWith("`") ? line : line.charAt(0).toUpperCase() + line.slice(1);
    return text.replace(/`/g, "");
}
