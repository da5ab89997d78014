/**
 * `pko-guard explain RULE`: a rule's description of itself (`about`: what, why, fix, notes, its example), its
 * config keys with their defaults, what `remediate` does for it, and where its documentation is.
 */
import { Command } from "commander";
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
import { Run, textWidth } from "./guide";

/**
 * The explanation. Its prose is reflowed into paragraphs, wrapped to `width` columns when given (the command gives
 * the terminal's, or 80); the example that passes and the links are never wrapped.
 */
export function explainRule(name: string, width = Infinity): string {
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
 * Blocks of prose (each may hold the line breaks of the text it comes from) reflowed to `width`. A block whose
 * every line is indented is code (a note's example) and stays as written. Otherwise its lines are joined into
 * paragraphs: a list item (`- `, `1. `) starts one of its own, its later lines hanging under its text; an indented
 * block (a config key) hangs two columns deeper; a blank line stays.
 */
function fitted(blocks: string[], width: number): string[] {
    return blocks.flatMap((block) => {
        const lines = block.split("\n");
        if (lines.length > 1 && lines.every((l) => l === "" || /^\s/.test(l))) return lines;
        const paragraphs: Paragraph[] = [];
        for (const line of lines) {
            const item = /^( *)((?:[-*]|\d+\.) +)(.*)$/.exec(line);
            const last = paragraphs[paragraphs.length - 1];
            if (line.trim() === "") paragraphs.push({ head: "", hang: "", words: [] });
            else if (item || !last || last.words.length === 0) {
                const indent = item ? item[1] : /^ */.exec(line)![0];
                const head = item ? indent + item[2] : indent;
                const hang = item ? " ".repeat(head.length) : indent ? `${indent}  ` : "";
                paragraphs.push({ head, hang, words: (item ? item[3] : line).trim().split(/\s+/) });
            } else last.words.push(...line.trim().split(/\s+/));
        }
        return paragraphs.flatMap((p) => (p.words.length === 0 ? [""] : filled(p, width)));
    });
}

/** A paragraph: what its first line starts with, what its other lines start with, its words. */
interface Paragraph {
    head: string;
    hang: string;
    words: string[];
}

/** A paragraph's words filled into lines of at most `width` (a word longer than that has a line of its own). */
function filled(p: Paragraph, width: number): string[] {
    const out: string[] = [];
    let current = p.head + p.words[0];
    for (const word of p.words.slice(1)) {
        if (current.length + 1 + word.length > width) {
            out.push(current);
            current = p.hang + word;
        } else current += ` ${word}`;
    }
    return [...out, current];
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

export function command(run: Run): Command {
    return new Command("explain")
        .summary("what a rule checks, why, and how to fix it")
        .description("what a rule checks, why, how to fix it, its config keys and defaults, and an example that passes")
        .argument("<rule>", "the rule (policy) name")
        .action((rule: string) => {
            run.term.out.write(explainRule(rule, textWidth(run.term.out)));
        });
}
