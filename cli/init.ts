/**
 * `pko-guard init [FILE]`: a pack config file listing every rule with its level and config defaults, and a
 * notes file beside it (the engine takes JSON without comments).
 */
import { Command } from "commander";
import * as fs from "fs";
import * as path from "path";
import { policies } from "../policies";
import { BadInputError } from "../support/errors";
import { LEVELS } from "../evaluation/pack-config";
import { configProps } from "./rules";
import type { Run } from "./guide";

/** Every policy with its level and every config default, as `--policy-pack-config` takes it. */
export function defaultConfig(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const p of policies) {
        const entry: Record<string, unknown> = { enforcementLevel: p.enforcementLevel ?? "advisory" };
        for (const [k, s] of Object.entries(configProps(p))) if ("default" in s) entry[k] = s.default;
        out[p.name] = entry;
    }
    return out;
}

function notes(file: string): string {
    const out = [
        `# Notes on ${path.basename(file)}`,
        "",
        "The pko-guard policy pack config, for `pulumi preview --policy-pack <pko-guard> --policy-pack-config " +
            path.basename(file) +
            "`,",
        "`pko-guard gate --config " +
            path.basename(file) +
            "` and Pulumi Cloud policy groups. The engine takes JSON without",
        "comments, so the comments are here. Every policy is listed with its defaults: change what you need.",
        "",
        `- \`enforcementLevel\`: ${LEVELS.join(", ")}.`,
        '- `waivers`: per-resource exceptions, each `{"resource": "<URN, Pulumi name or Kind/namespace/name; globs * ?>", "reason": "...", "expires": "YYYY-MM-DD"}`;',
        '  `"allowFailClosed": true` also waives a could-not-evaluate finding. Waived findings are reported, not blocking.',
        "- `allowAnnotationWaivers`: honour `pko-guard.io/waive: <policy>=<reason>` annotations on Kubernetes objects (off by default).",
        "",
    ];
    for (const p of policies) {
        out.push(
            `## ${p.name}`,
            "",
            `${p.description} (default level: ${p.enforcementLevel ?? "advisory"}; \`pko-guard explain ${p.name}\`)`,
            "",
        );
        for (const [k, s] of Object.entries(configProps(p))) {
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

export function command(run: Run): Command {
    return new Command("init")
        .summary("write a pack config with every rule's defaults")
        .description(
            "write a policy pack config file (JSON, for --policy-pack-config) with every policy and its defaults",
        )
        .argument("[file]", "the file to write", "pko-guard.config.json")
        .option("--force", "overwrite an existing file", false)
        .action((file: string, o: { force: boolean }) => {
            const notes = initConfig(file, o.force);
            run.term.out.write(`wrote ${file} and ${notes}\n`);
        });
}
