/**
 * `pko-guard doctor [--profile P]`: each tool of the toolchain (toolchain/tools.txt), its version, where it comes
 * from (the toolchain cache, PATH: linked into the cache by install.sh or found there by the commands, or
 * missing) and, for a missing or unfitting one, the exact command that installs it (this package's own
 * toolchain/install.sh, which ships in the package, so the command works from a packed install). Exit code 0 when
 * every tool of the profile is there and fits, 1 otherwise.
 */
import { Command, InvalidArgumentError } from "commander";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { escapeText } from "../support/escape";
import {
    PROFILES,
    Profile,
    ToolSpec,
    firstVersion,
    installCommand,
    isExecutable,
    onPath,
    profileTools,
    toolSpecs,
    toolchainBin,
    versionFits,
} from "../support/toolchain";
import type { Run } from "./guide";

export type Source = "toolchain cache" | "PATH" | "missing" | "not needed";

export interface ToolState {
    name: string;
    profiles: Profile[];
    source: Source;
    /** The binary used (for PATH, the tool on PATH; for a linked one, its target). */
    file?: string;
    version?: string;
    /** Why it does not serve (outside the versions that fit), or why it is not needed. */
    note?: string;
    /** The command that installs it (when missing or unfitting). */
    install?: string;
}

export interface Environment {
    binDir: string;
    /** PATH to search (the process's). */
    pathEnv: string;
    /** Runs `file args` and returns what it prints (undefined when it cannot run). */
    probe: (file: string, args: string[]) => string | undefined;
}

/** The version a tool prints, and whether it fits its row (tools without a range always fit). */
function probed(spec: ToolSpec, file: string, env: Environment): { version?: string; note?: string } {
    if (spec.reuse !== "probe") return {};
    const version = firstVersion(env.probe(file, spec.probe) ?? "");
    if (!version) return { note: "prints no version" };
    if (spec.min && spec.below && !versionFits(version, spec.min, spec.below))
        return { version, note: `does not fit: needs >= ${spec.min}, < ${spec.below}` };
    return { version };
}

/** The version recorded in the cache's stamp (`<version> ...`, or `path <version> <target>` for a linked tool). */
function stampVersion(file: string): string | undefined {
    try {
        const words = fs
            .readFileSync(file.endsWith(path.sep) ? path.join(file, ".version") : `${file}.version`, "utf8")
            .trim()
            .split(/\s+/);
        return words[0] === "path" ? words[1] : words[0];
    } catch {
        return undefined;
    }
}

function state(spec: ToolSpec, source: Source, more: Partial<ToolState> = {}): ToolState {
    return { name: spec.name, profiles: spec.profiles, source, ...more };
}

/**
 * Where one tool comes from: the cache (built, or linked from PATH by install.sh), PATH (as the commands look
 * there), or nowhere. `cli` is the pulumi row, whose version a tool shipped beside the CLI is taken at.
 */
export function toolState(spec: ToolSpec, env: Environment, cli?: ToolSpec): ToolState {
    if (spec.name === "pulumi-resource-pulumi-python" && !["python3", "python"].some((p) => onPath(p, env.pathEnv)))
        return state(spec, "not needed", { note: "no Python on PATH" });
    if (spec.name === "schemas") {
        const dir = path.join(path.dirname(env.binDir), "schemas");
        return fs.existsSync(path.join(dir, "kubernetes-swagger.json"))
            ? state(spec, "toolchain cache", { file: dir, version: stampVersion(`${dir}${path.sep}`) })
            : state(spec, "missing", { install: installCommand(spec.name) });
    }
    const cached = path.join(env.binDir, spec.name);
    if (isExecutable(cached)) {
        const link = fs.lstatSync(cached).isSymbolicLink();
        const file = link ? fs.realpathSync(cached) : cached;
        return state(spec, link ? "PATH" : "toolchain cache", { file, version: stampVersion(cached) });
    }
    const found = onPath(spec.name, env.pathEnv, env.binDir);
    if (!found) return state(spec, "missing", { install: installCommand(spec.name) });
    if (spec.reuse === "pulumi") {
        // Shipped with the CLI: it serves with the pulumi beside it, at that CLI's version.
        const pulumi = path.join(path.dirname(found), "pulumi");
        const beside = cli && isExecutable(pulumi) ? probed(cli, pulumi, env) : {};
        return state(spec, "PATH", { file: found, version: beside.version });
    }
    const p = probed(spec, found, env);
    return state(spec, "PATH", { file: found, ...p, ...(p.note ? { install: installCommand(spec.name) } : {}) });
}

export function toolStates(profile: Profile, env: Environment, specs: ToolSpec[] = toolSpecs()): ToolState[] {
    const cli = specs.find((s) => s.name === "pulumi");
    return profileTools(profile, specs).map((s) => toolState(s, env, cli));
}

/** The states as lines: a header, a line a tool (names whole), then what to run. */
export function renderDoctor(profile: Profile, binDir: string, states: ToolState[]): string {
    const width = Math.max(...states.map((s) => s.name.length));
    // Long version strings (pko-guard's own helpers) overflow the column rather than widen every line.
    const vwidth = Math.min(10, Math.max(7, ...states.map((s) => (s.version ?? "").length)));
    const lines = [`toolchain: ${escapeText(binDir)} (profile ${profile})`];
    for (const s of states) {
        const where =
            s.source === "missing"
                ? `missing; install: ${escapeText(s.install ?? "")}`
                : [
                      s.source,
                      // A cached tool's folder is the header's; a linked or PATH one names its own file.
                      ...(s.file && path.dirname(s.file) !== binDir ? [escapeText(s.file)] : []),
                      ...(s.note ? [`(${escapeText(s.note)})`] : []),
                  ].join(" ") + (s.install ? `; install: ${escapeText(s.install)}` : "");
        lines.push(`  ${s.name.padEnd(width)}  ${escapeText(s.version ?? "-").padEnd(vwidth)}  ${where}`);
    }
    const bad = states.filter((s) => s.install !== undefined);
    lines.push(
        bad.length === 0
            ? `every tool of profile ${profile} is there`
            : `${bad.length} to install: ${escapeText(installCommand(bad.length > 1 ? profile : bad[0].name))} (builds with Go >= 1.25; a fitting tool on PATH is linked instead)`,
    );
    return `${lines.join("\n")}\n`;
}

/** Runs a tool to read its version (a bounded run: ten seconds, the first 4 KiB). */
function probeProcess(file: string, args: string[]): string | undefined {
    const r = spawnSync(file, args, { encoding: "utf8", timeout: 10_000, maxBuffer: 4096, stdio: "pipe" });
    return r.error ? undefined : `${r.stdout ?? ""}\n${r.stderr ?? ""}`;
}

/** `pko-guard doctor`: the report and its exit code. */
export function runDoctor(profile: Profile): { text: string; code: number } {
    const binDir = toolchainBin();
    const states = toolStates(profile, { binDir, pathEnv: process.env.PATH ?? "", probe: probeProcess });
    return { text: renderDoctor(profile, binDir, states), code: states.some((s) => s.install) ? 1 : 0 };
}

function profileName(v: string): Profile {
    const profile = PROFILES.find((p) => p === v);
    if (profile === undefined) throw new InvalidArgumentError("a profile is check, gate, cluster or all");
    return profile;
}

export function command(run: Run): Command {
    return new Command("doctor")
        .summary("the tools: version, source, install command")
        .description(
            "list each tool of the toolchain (kustomize, Helm, jsonnet, the Pulumi CLI, ...): its version, where it comes from (toolchain cache, PATH, missing) and the command that installs a missing one",
        )
        .option("--profile <profile>", "check, gate, cluster or all", profileName, "all")
        .action((o: { profile: Profile }) => {
            const r = runDoctor(o.profile);
            run.term.out.write(r.text);
            run.code = r.code;
        });
}
