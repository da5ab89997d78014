/**
 * `pko-guard rules`: the catalogue, from the pack's own policy objects (`explain` and `init` take each rule's
 * config keys from here too).
 */
import { Command } from "commander";
import { policies } from "../policies";
import { wrap } from "../reports/table";
import { ruleCatalogue } from "../reports/subject";
import { extended } from "../support/shapes";
import type { Run } from "./guide";

export interface SchemaProp {
    type?: string;
    description?: string;
    default?: unknown;
}

/** A rule's config keys and their schemas (defaults included), from its config schema. */
export function configProps(p: (typeof policies)[number]): Record<string, SchemaProp> {
    return (p.configSchema?.properties ?? {}) as Record<string, SchemaProp>;
}

export function renderRules(json: boolean, width = 120): string {
    const rows = policies.map((p) => ({
        name: p.name,
        level: p.enforcementLevel ?? "advisory",
        severity: p.severity ?? "medium",
        description: p.description,
    }));
    if (json) {
        const docs = new Map(ruleCatalogue().map((r) => [r.id, r]));
        return (
            JSON.stringify(
                rows.map((r) =>
                    extended(r, {
                        doc: docs.get(r.name)!.doc,
                        ...(docs.get(r.name)!.helpUri ? { helpUri: docs.get(r.name)!.helpUri } : {}),
                    }),
                ),
                null,
                2,
            ) + "\n"
        );
    }
    const nameW = Math.max(...rows.map((r) => r.name.length));
    const out: string[] = [];
    for (const r of rows) {
        const head = `${r.name.padEnd(nameW)}  ${r.level.padEnd(9)}  ${r.severity.padEnd(8)}  `;
        const room = width - head.length;
        if (room < 30) {
            out.push(`${r.name}  ${r.level}  ${r.severity}`, ...wrap(r.description, width, "    "));
        } else {
            const lines = wrap(r.description, room);
            out.push(head + (lines[0] ?? ""), ...lines.slice(1).map((l) => " ".repeat(head.length) + l));
        }
    }
    return out.join("\n") + "\n";
}

export function command(run: Run): Command {
    return new Command("rules")
        .summary("list the rules: level, severity, what each checks")
        .description("list the pack's rules: name, enforcement level, severity, what it checks")
        .option("--json", "as JSON", false)
        .action((o: { json: boolean }) => {
            const out = run.term.out;
            out.write(renderRules(o.json, out.isTTY && out.columns ? out.columns : 120));
        });
}
