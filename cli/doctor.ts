/**
 * `pko-guard doctor [--profile P] [dir]`: whether the tools this repository's doors need are there.
 * Without --profile it picks one from the repository (kustomizations, charts or jsonnet: check; a Pulumi.yaml: gate).
 * Each tool is shown with its version and source, then one line names the doors ready and the one command that installs
 * the rest. Exit 0 when the profile is complete, else 1.
 */
import { spawnSync } from "child_process";
import { Command, InvalidArgumentError } from "commander";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { escapeText } from "../support/escape";
import {
    LocatedTool,
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
import { prebuiltTool } from "../support/prebuilt";
import { wrapWords } from "../reports/table";
import type { Run } from "./guide";

export type Source = "prebuilt" | "toolchain cache" | "PATH" | "Pulumi plugins" | "missing" | "not needed";

export interface ToolState {
    name: string;
    profiles: Profile[];
    source: Source;
    /** The binary used (for PATH, the tool on PATH; for a linked one, its target). */
    file?: string;
    version?: string;
    /** Why it does not serve (outside the versions that fit), or why it is not needed. */
    note?: string;
    /** True when it is missing or does not fit: the profile's install command brings it. */
    install?: boolean;
}

export interface Environment {
    binDir: string;
    /** PATH to search (the process's). */
    pathEnv: string;
    /** Runs `file args` and returns what it prints (undefined when it cannot run). */
    probe: (file: string, args: string[]) => string | undefined;
    /** The prebuilt tool of this platform's package, checked against its checksum (support/prebuilt.ts). */
    prebuilt?: (name: string) => LocatedTool | undefined;
    /** Pulumi's plugin folder ($PULUMI_HOME/plugins, else ~/.pulumi/plugins). */
    pulumiPlugins?: string;
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

function compareVersions(a: string, b: string): number {
    const pa = a.split(/[.+-]/).map((x) => Number.parseInt(x, 10) || 0);
    const pb = b.split(/[.+-]/).map((x) => Number.parseInt(x, 10) || 0);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
    return 0;
}

/**
 * A plugin in Pulumi's plugin folder, as the CLI installs it (`<kind>-<name>-v<version>/pulumi-<kind>-<name>`):
 * the newest installed version, which is the plugin's own.
 */
export function pluginInFolder(
    name: string,
    folder: string | undefined,
): { file: string; version: string } | undefined {
    const m = /^pulumi-(resource|language|analyzer)-(.+)$/.exec(name);
    if (!m || !folder) return undefined;
    let entries: string[];
    try {
        entries = fs.readdirSync(folder);
    } catch {
        return undefined;
    }
    const prefix = `${m[1]}-${m[2]}-v`;
    const found = entries
        .filter((e) => e.startsWith(prefix) && /^\d+\.\d+\.\d+[\w.+-]*$/.test(e.slice(prefix.length)))
        .filter((e) => !/\.(lock|partial)$/.test(e) && isExecutable(path.join(folder, e, name)))
        .map((e) => ({ file: path.join(folder, e, name), version: e.slice(prefix.length) }))
        .sort((a, b) => compareVersions(b.version, a.version));
    return found[0];
}

/** Plugins that ship inside the Pulumi CLI's own release, at the CLI's version (their own). */
const SHIPPED_WITH_CLI = /^pulumi-(language-|resource-pulumi-)/;

/**
 * Where one tool comes from: this platform's prebuilt package, the toolchain folder (built, or linked from PATH by
 * install.sh), PATH (as the commands look there), Pulumi's plugin folder (where the engine also finds plugins),
 * or nowhere. `cli` is the pulumi row: the plugins shipped with the CLI are at its version.
 */
export function toolState(spec: ToolSpec, env: Environment, cli?: ToolSpec): ToolState {
    if (spec.name === "pulumi-resource-pulumi-python" && !["python3", "python"].some((p) => onPath(p, env.pathEnv)))
        return state(spec, "not needed", { note: "no Python on PATH" });
    if (spec.name === "schemas") {
        const dir = path.join(path.dirname(env.binDir), "schemas");
        return fs.existsSync(path.join(dir, "kubernetes-swagger.json"))
            ? state(spec, "toolchain cache", { file: dir, version: stampVersion(`${dir}${path.sep}`) })
            : state(spec, "missing", { install: true });
    }
    const prebuilt = env.prebuilt?.(spec.name);
    if (prebuilt) return state(spec, "prebuilt", { file: prebuilt.path, version: prebuilt.version });
    const cached = path.join(env.binDir, spec.name);
    if (isExecutable(cached)) {
        const link = fs.lstatSync(cached).isSymbolicLink();
        const file = link ? fs.realpathSync(cached) : cached;
        return state(spec, link ? "PATH" : "toolchain cache", { file, version: stampVersion(cached) });
    }
    const found = onPath(spec.name, env.pathEnv, env.binDir);
    const plugin = pluginInFolder(spec.name, env.pulumiPlugins);
    if (!found && plugin) return state(spec, "Pulumi plugins", plugin);
    if (!found) return state(spec, "missing", { install: true });
    if (spec.reuse === "pulumi") {
        // A plugin the CLI ships is at the CLI's version; any other (a provider) is at its own, which Pulumi's
        // plugin folder names when it holds the same one; else it is unknown (providers print no version).
        const pulumi = path.join(path.dirname(found), "pulumi");
        const version = SHIPPED_WITH_CLI.test(spec.name)
            ? cli && isExecutable(pulumi)
                ? probed(cli, pulumi, env).version
                : undefined
            : plugin?.version;
        return state(spec, "PATH", { file: found, version });
    }
    const p = probed(spec, found, env);
    return state(spec, "PATH", { file: found, ...p, ...(p.note ? { install: true } : {}) });
}

export function toolStates(profile: Profile, env: Environment, specs: ToolSpec[] = toolSpecs()): ToolState[] {
    const cli = specs.find((s) => s.name === "pulumi");
    return profileTools(profile, specs).map((s) => toolState(s, env, cli));
}

/** What a repository needs, from its files: why, and the profiles (check for rendering, gate for a program). */
export function neededProfiles(dir: string, limit = 20000): { profiles: Profile[]; why: string[] } {
    const found = new Set<string>();
    let seen = 0;
    const walk = (d: string, depth: number) => {
        if (depth > 8 || seen > limit) return;
        let entries: fs.Dirent[];
        try {
            entries = fs.readdirSync(d, { withFileTypes: true });
        } catch {
            return;
        }
        for (const e of entries) {
            if (++seen > limit) return;
            if (e.isDirectory()) {
                if (!e.name.startsWith(".") && e.name !== "node_modules") walk(path.join(d, e.name), depth + 1);
            } else if (/^kustomization\.ya?ml$|^Kustomization$/.test(e.name)) found.add("kustomizations");
            else if (e.name === "Chart.yaml") found.add("Helm charts");
            else if (/\.(jsonnet|libsonnet)$/.test(e.name)) found.add("jsonnet");
            else if (/^Pulumi\.ya?ml$/.test(e.name)) found.add("a Pulumi project");
        }
    };
    walk(dir, 0);
    const why = [...found].sort();
    const profiles: Profile[] = [];
    if (why.some((w) => w !== "a Pulumi project")) profiles.push("check");
    if (found.has("a Pulumi project")) profiles.push("gate");
    return { profiles, why };
}

/** A path as the user reads it: relative to the working folder when inside it, else with ~ for home. */
function shown(file: string, cwd: string = process.cwd()): string {
    const rel = path.relative(cwd, file);
    if (rel && !rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
    const home = os.homedir();
    return file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/** The doors a profile serves, as the last line names them. */
const DOORS: Record<Profile, string> = { check: "check", gate: "gate", cluster: "the deploy leg", all: "all" };

const WIDTH = 80;

/**
 * The report: a header, a line a tool (name, its own version, where from) with its file or why it does not serve
 * on a line below, then one line: the doors that are ready and the one command that installs the rest.
 */
export function renderDoctor(checked: Profile[], states: Map<Profile, ToolState[]>, header: string): string {
    const rows = [...new Map(checked.flatMap((p) => states.get(p) ?? []).map((s) => [s.name, s])).values()];
    const width = Math.max(...rows.map((s) => s.name.length));
    const vwidth = Math.min(18, Math.max(7, ...rows.map((s) => (s.version ?? "").length)));
    const lines = wrapWords(header, WIDTH, "").map((l, i) => (i === 0 ? l : `  ${l}`));
    for (const s of rows) {
        const version = escapeText(s.version ?? "-");
        lines.push(`  ${s.name.padEnd(width)}  ${version.padEnd(vwidth)}  ${s.source}`.trimEnd());
        const more = [
            ...(s.file && s.source !== "toolchain cache" ? [escapeText(shown(s.file))] : []),
            ...(s.note ? [`(${escapeText(s.note)})`] : []),
        ].join(" ");
        if (more) lines.push(`    ${more}`);
    }
    const ready = [...states].filter(([, st]) => st.every((s) => !s.install)).map(([p]) => p);
    const missing = [...states].filter(([, st]) => st.some((s) => s.install)).map(([p]) => p);
    const doors = ready.map((p) => DOORS[p]).join(" and ");
    const last =
        missing.length === 0
            ? `ready for ${doors}`
            : `${ready.length > 0 ? `ready for ${doors}; ` : "not ready; "}for ${missing.map((p) => DOORS[p]).join(" and ")} run: ${escapeText(installCommand(missing.join(" ")))}`;
    lines.push(last.length > WIDTH ? last.replace(/ run: /, "\n  run: ") : last);
    return `${lines.join("\n")}\n`;
}

/** Runs a tool to read its version (a bounded run: ten seconds, the first 4 KiB). */
function probeProcess(file: string, args: string[]): string | undefined {
    const r = spawnSync(file, args, { encoding: "utf8", timeout: 10_000, maxBuffer: 4096, stdio: "pipe" });
    return r.error ? undefined : `${r.stdout ?? ""}\n${r.stderr ?? ""}`;
}

/** The environment of this process: its PATH, the toolchain folder, the prebuilt package, Pulumi's plugins. */
export function processEnvironment(): Environment {
    const home = process.env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return {
        binDir: toolchainBin(),
        pathEnv: process.env.PATH ?? "",
        probe: probeProcess,
        prebuilt: (name) => {
            if (process.env.PKO_GUARD_TOOLCHAIN_BIN !== undefined) return undefined;
            const t = prebuiltTool(name);
            return t ? { path: t.path, source: "prebuilt", version: t.version } : undefined;
        },
        pulumiPlugins: path.join(home, "plugins"),
    };
}

/**
 * `pko-guard doctor`: the report and its exit code. `profile` names the one to check; else the repository at
 * `dir` says (nothing that needs a tool: check's, the door most repositories use).
 */
export function runDoctor(
    profile: Profile | undefined,
    dir: string = process.cwd(),
    env: Environment = processEnvironment(),
): { text: string; code: number } {
    const needed = profile ? { profiles: [profile], why: [] } : neededProfiles(dir);
    const checked: Profile[] = needed.profiles.length > 0 ? needed.profiles : ["check"];
    // The doors the last line speaks of: those checked, and check and gate always (the ones users install).
    const doors = [...new Set<Profile>([...checked, "check", "gate"])];
    const specs = toolSpecs();
    const states = new Map(doors.map((p) => [p, toolStates(p, env, specs)] as const));
    const why = profile
        ? "as asked"
        : needed.why.length > 0
          ? `this repository has ${needed.why.join(", ")}`
          : "nothing here needs a tool; check's, the usual door";
    const header = `pko-guard doctor: profile ${checked.join(" and ")} (${why})`;
    const text = renderDoctor(checked, states, header);
    const code = checked.some((p) => states.get(p)!.some((s) => s.install)) ? 1 : 0;
    return { text, code };
}

function profileName(v: string): Profile {
    const profile = PROFILES.find((p) => p === v);
    if (profile === undefined) throw new InvalidArgumentError("a profile is check, gate, cluster or all");
    return profile;
}

export function command(run: Run): Command {
    return new Command("doctor")
        .summary("the tools your repository needs")
        .description(
            "check the tools the repository's doors need (kustomizations, charts or jsonnet: check; a Pulumi.yaml: gate), each with its own version and where it comes from (prebuilt, toolchain cache, PATH, Pulumi plugins, missing), then the doors that are ready and the one command for the rest",
        )
        .argument("[dir]", "the repository to look at (default: the working folder)")
        .option("--profile <profile>", "check this profile instead: check, gate, cluster or all", profileName)
        .action((dir: string | undefined, o: { profile?: Profile }) => {
            const r = runDoctor(o.profile, dir);
            run.term.out.write(r.text);
            run.code = r.code;
        });
}
