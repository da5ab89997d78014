/**
 * `pko-guard explain RULE`: a rule's description of itself (`about`: what, why, fix, notes, its example), its
 * config keys with their defaults, what `remediate` does for it, and where its documentation is.
 */
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError } from "../support/errors";
import { LEVELS } from "../evaluation/pack-config";
import { REPO_ROOT } from "../support/paths";
import { wrap } from "../reports/table";
import { ruleAnchor, ruleCatalogue } from "../reports/subject";
import { configProps } from "./rules";

export function explainRule(name: string): string {
    const p = policies.find((x) => x.name === name);
    if (!p) throw new BadInputError(`${JSON.stringify(name)} is not a rule of this pack (see pko-guard rules)`);
    // The rule's description is its `what` as plain text (policies/model/prose.ts): "What:" says it.
    const out: string[] = [`${p.name} (${p.enforcementLevel ?? "advisory"}, severity ${p.severity ?? "medium"})`, ""];
    const about = p.about;
    out.push(`What: ${about.what}`, "", `Why: ${about.why}`, "", `Fix: ${about.fix}`, "");
    for (const note of about.notes ?? []) out.push(note, "");
    out.push("Config keys (in the pack config file, under this policy's name; defaults in brackets):");
    out.push(`  enforcementLevel [${p.enforcementLevel ?? "advisory"}]: one of ${LEVELS.join(", ")}`);
    out.push(...wrap(remediationNote(p), 116, "    "));
    for (const [k, s] of Object.entries(configProps(p))) {
        out.push(`  ${k} [${JSON.stringify(s.default ?? null)}]: ${s.description ?? s.type ?? ""}`);
    }
    const example = about.example;
    if (example.length > 0) {
        out.push("", "An example that passes (the resources as the pack sees them):", "");
        for (const r of example) out.push(`# ${r.type} "${r.name}"`, YAML.stringify(r.props).trimEnd(), "---");
        out.pop();
    }
    const entry = ruleCatalogue().find((r) => r.id === name)!;
    out.push(
        "",
        `Documentation: ${entry.helpUri ?? `${path.join(REPO_ROOT, "docs", "rules.md")}#${ruleAnchor(name)}`}`,
    );
    if (p.url) out.push(`Background: ${p.url}`);
    return out.join("\n") + "\n";
}

/** What the `remediate` level does for this rule. */
export function remediationNote(p: (typeof policies)[number]): string {
    const resource = typeof (p as { validateResource?: unknown }).validateResource !== "undefined";
    const stack = typeof (p as { validateStack?: unknown }).validateStack === "function";
    if (typeof (p as { remediateResource?: unknown }).remediateResource === "function") {
        return (
            "remediate: the pack fixes the Stack itself before the engine checks it (see Remediate above); what it cannot fix is reported as mandatory." +
            (stack ? " Its stack-level part (Stack patches) cannot remediate: the engine treats it as mandatory." : "")
        );
    }
    return resource
        ? "remediate: this rule has no safe mechanical fix, so remediate acts as mandatory."
        : "remediate: a stack-level rule cannot remediate (the engine treats remediate as mandatory for it).";
}
