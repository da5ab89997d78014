/**
 * `pko-guard init [FILE]`: a pack config file listing every rule with its level and config defaults (by default
 * policy/pko-guard.json, where the README keeps it), a notes file beside it (the engine takes JSON without
 * comments), and the repository's .pko-guard.yaml pointed at it, so every command that reads the repository's
 * settings finds it.
 */
import { Command } from "commander";
import * as fs from "fs";
import * as path from "path";
import { policies } from "../policies";
import { BadInputError } from "../support/errors";
import { LEVELS } from "../evaluation/pack-config";
import { configProps } from "./rules";
import type { Run } from "./guide";
import { isMap, parseDocument } from "yaml";
import { escapeText } from "../support/escape";
import { CONFIG_FILE } from "../gitops/manifests/exclude";
import { runRepoRoot } from "../gitops/manifests/load";

/** Where `init` writes without a name: where the README and the CI docs keep it. */
export const DEFAULT_CONFIG = "policy/pko-guard.json";

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

/**
 * Points the repository's .pko-guard.yaml at the config (`config:`, relative to the repository root), so check,
 * the pre-commit hook and test find it without --config: writes the file when there is none, adds the key to one
 * without it (its comments and other keys kept). Says what it did, or why it left the file alone.
 */
export function pointRepositoryAt(file: string, cwd: string = process.cwd()): string {
    const repoRoot = runRepoRoot(["."], { cwd });
    const settings = path.join(repoRoot, CONFIG_FILE);
    const rel = path.relative(repoRoot, path.resolve(cwd, file)).split(path.sep).join("/");
    const shown = path.relative(cwd, settings) || CONFIG_FILE;
    if (rel.startsWith("../") || path.isAbsolute(rel))
        return `${file} is outside the repository (${repoRoot}): pass it with --config`;
    const existed = fs.existsSync(settings);
    let doc;
    try {
        doc = existed ? parseDocument(fs.readFileSync(settings, "utf8")) : parseDocument("");
    } catch {
        return `${shown} cannot be read: add "config: ${rel}" to it`;
    }
    if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents)))
        return `${shown} is not a YAML mapping: add "config: ${rel}" to it`;
    const named: unknown = doc.get("config");
    if (named === rel) return `${shown} already names it (config: ${rel})`;
    if (named !== undefined)
        return `${shown} names another config (config: ${String(named)}): change it to ${rel} to use this one`;
    doc.set("config", rel);
    fs.writeFileSync(settings, doc.toString());
    return `${existed ? "set" : "wrote"} config: ${rel} in ${shown}, so check, the pre-commit hook and test read it`;
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
        .argument("[file]", "the file to write", DEFAULT_CONFIG)
        .option("--force", "overwrite an existing file", false)
        .option("--no-point", `do not point the repository's ${CONFIG_FILE} at the file`)
        .action((file: string, o: { force: boolean; point: boolean }) => {
            const notes = initConfig(file, o.force);
            run.term.out.write(`wrote ${escapeText(file)} (every rule at its defaults) and ${escapeText(notes)}\n`);
            if (o.point) run.term.out.write(`${escapeText(pointRepositoryAt(file))}\n`);
            else run.term.out.write(`check reads it with --config ${escapeText(file)}\n`);
        });
}
