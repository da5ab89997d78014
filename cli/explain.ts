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
import { didYouMean } from "../support/suggest";
import { wrap } from "../reports/table";
import { ruleAnchor, ruleCatalogue } from "../reports/subject";
import { configProps } from "./rules";

/** The explanation, its prose wrapped to `width` columns (the example and the links are never wrapped). */
export function explainRule(name: string, width = 80): string {
    const p = policies.find((x) => x.name === name);
    if (!p) {
        const hint = didYouMean(
            name,
            policies.map((x) => x.name),
        ).replace(/^ \((.*)\)$/, ": $1");
        throw new BadInputError(`${JSON.stringify(name)} is not a rule of this pack${hint} (see pko-guard rules)`);
    }
    // The rule's description is its `what` as plain text (policies/model/prose.ts): "What:" says it.
    const out: string[] = [`${p.name} (${p.enforcementLevel ?? "advisory"}, severity ${p.severity ?? "medium"})`, ""];
    const about = p.about;
    out.push(`What: ${about.what}`, "", `Why: ${about.why}`, "", `Fix: ${about.fix}`, "");
    for (const note of about.notes ?? []) out.push(note, "");
    out.push("Config keys (in the pack config file, under this policy's name; defaults in brackets):");
    out.push(`  enforcementLevel [${p.enforcementLevel ?? "advisory"}]: one of ${LEVELS.join(", ")}`);
    out.push(...wrap(remediationNote(p), width, "    "));
    for (const [k, s] of Object.entries(configProps(p))) {
        const head = `${k} [${JSON.stringify(s.default ?? null)}]:`.replace(/ /g, KEEP);
        out.push(`  ${head} ${s.description ?? s.type ?? ""}`);
    }
    const prose = fitted(out.splice(0), width).map((l) => l.replaceAll(KEEP, " "));
    out.push(...prose);
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

/** Stands for a space that wrapping keeps (a config key's head: its name and default stay on one line). */
const KEEP = "\u0000";

/**
 * Lines wrapped to `width`, at spaces: a line keeps its indentation, and its continuation lines are indented two columns more
 * when it is indented (a config key's description under its key), none when it is not (a paragraph).
 */
function fitted(lines: string[], width: number): string[] {
    return lines.flatMap((line) => {
        if (line.length <= width) return [line];
        const indent = /^ */.exec(line)![0];
        const hang = indent ? `${indent}  ` : "";
        const out: string[] = [];
        let current = indent;
        for (const word of line.trim().split(/ +/)) {
            if (current.trim() !== "" && current.length + 1 + word.length > width) {
                out.push(current);
                current = hang + word;
            } else current = current.trim() === "" ? current + word : `${current} ${word}`;
        }
        return [...out, current];
    });
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
