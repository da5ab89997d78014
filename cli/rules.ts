/**
 * `pko-guard rules`, `explain` and `init`: everything from the pack's own policy objects: the catalogue,
 * each rule's description of itself (`about`: what, why, fix, notes, its example, its waiver keys), and its
 * config keys with defaults from its config schema.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { policies } from "../policies";
import { BadInputError } from "../core/errors";
import { LEVELS } from "../core/pack-config";
import { wrap } from "./reports/table";
import { ruleAnchor, ruleCatalogue } from "./reports/subject";
import { REPO_ROOT } from "../core/paths";

interface SchemaProp {
    type?: string;
    description?: string;
    default?: unknown;
}

function props(p: (typeof policies)[number]): Record<string, SchemaProp> {
    return (p.configSchema?.properties ?? {}) as Record<string, SchemaProp>;
}

export function renderRules(json: boolean, width = 120): string {
    const rows = policies.map((p) => ({ name: p.name, level: p.enforcementLevel ?? "advisory", severity: p.severity ?? "medium", description: p.description }));
    if (json) {
        const docs = new Map(ruleCatalogue().map((r) => [r.id, r]));
        return (
            JSON.stringify(
                rows.map((r) => ({ ...r, doc: docs.get(r.name)!.doc, ...(docs.get(r.name)!.helpUri ? { helpUri: docs.get(r.name)!.helpUri } : {}) })),
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

export function explainRule(name: string): string {
    const p = policies.find((x) => x.name === name);
    if (!p) throw new BadInputError(`${JSON.stringify(name)} is not a rule of this pack (see pko-guard rules)`);
    const out: string[] = [`${p.name} (${p.enforcementLevel ?? "advisory"}, severity ${p.severity ?? "medium"})`, "", p.description, ""];
    const about = p.about;
    out.push(`What: ${about.what}`, "", `Why: ${about.why}`, "", `Fix: ${about.fix}`, "");
    for (const note of about.notes ?? []) out.push(note, "");
    out.push("Config keys (in the pack config file, under this policy's name; defaults in brackets):");
    out.push(`  enforcementLevel [${p.enforcementLevel ?? "advisory"}]: one of ${LEVELS.join(", ")}`);
    out.push(...wrap(remediationNote(p), 116, "    "));
    for (const [k, s] of Object.entries(props(p))) {
        out.push(`  ${k} [${JSON.stringify(s.default ?? null)}]: ${s.description ?? s.type ?? ""}`);
    }
    const example = about.example;
    if (example.length > 0) {
        out.push("", "An example that passes (the resources as the pack sees them):", "");
        for (const r of example) out.push(`# ${r.type} "${r.name}"`, YAML.stringify(r.props).trimEnd(), "---");
        out.pop();
    }
    const entry = ruleCatalogue().find((r) => r.id === name)!;
    out.push("", `Documentation: ${entry.helpUri ?? `${path.join(REPO_ROOT, "README.md")}#${ruleAnchor(name)}`}`);
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
    return resource ? "remediate: this rule has no safe mechanical fix, so remediate acts as mandatory." : "remediate: a stack-level rule cannot remediate (the engine treats remediate as mandatory for it).";
}

/** Every policy with its level and every config default, as `--policy-pack-config` takes it. */
export function defaultConfig(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const p of policies) {
        const entry: Record<string, unknown> = { enforcementLevel: p.enforcementLevel ?? "advisory" };
        for (const [k, s] of Object.entries(props(p))) if ("default" in s) entry[k] = s.default;
        out[p.name] = entry;
    }
    return out;
}

function notes(file: string): string {
    const out = [
        `# Notes on ${path.basename(file)}`,
        "",
        "The pko-guard policy pack config, for `pulumi preview --policy-pack <pko-guard> --policy-pack-config " + path.basename(file) + "`,",
        "`pko-guard gate --config " + path.basename(file) + "` and Pulumi Cloud policy groups. The engine takes JSON without",
        "comments, so the comments are here. Every policy is listed with its defaults: change what you need.",
        "",
        `- \`enforcementLevel\`: ${LEVELS.join(", ")}.`,
        '- `waivers`: per-resource exceptions, each `{"resource": "<URN, Pulumi name or Kind/namespace/name; globs * ?>", "reason": "...", "expires": "YYYY-MM-DD"}`;',
        '  `"allowFailClosed": true` also waives a could-not-evaluate finding. Waived findings are reported, not blocking.',
        "- `allowAnnotationWaivers`: honour `pko-guard.io/waive: <policy>=<reason>` annotations on Kubernetes objects (off by default).",
        "",
    ];
    for (const p of policies) {
        out.push(`## ${p.name}`, "", `${p.description} (default level: ${p.enforcementLevel ?? "advisory"}; \`pko-guard explain ${p.name}\`)`, "");
        for (const [k, s] of Object.entries(props(p))) {
            if (p.about.waiverKeys.includes(k)) continue;
            out.push(`- \`${k}\` (default \`${JSON.stringify(s.default ?? null)}\`): ${s.description ?? ""}`);
        }
        out.push("");
    }
    return out.join("\n");
}

/** Writes the config file and its notes (FILE with .md); returns the notes file's name. */
export function initConfig(file: string, force: boolean): string {
    const notesFile = file.replace(/\.json$/i, "") + ".md";
    for (const f of [file, notesFile]) {
        if (fs.existsSync(f) && !force) throw new BadInputError(`${f} exists (use --force to overwrite)`);
    }
    try {
        fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
        fs.writeFileSync(file, JSON.stringify(defaultConfig(), null, 2) + "\n");
        fs.writeFileSync(notesFile, notes(file));
    } catch (e) {
        throw new BadInputError(`${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
    return notesFile;
}
