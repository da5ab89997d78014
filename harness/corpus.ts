/**
 * Corpus entries: `check` on a snapshot of a public repository (`<entry>/repo`, with its licence) and the exact
 * exit code, findings and error lines it must give (`<entry>/corpus.json`). A run is a user's: the snapshot is
 * copied into a temporary git repository whose `origin` is the upstream URL. An entry that names chart
 * repositories lists them under `served`: the run serves stand-in charts of the same names and versions on
 * loopback (./corpus-charts.ts) and rewrites the clone's mentions of their URLs to it, the only change made.
 */
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError, ToolError } from "../support/errors";
import { CLI_ENTRY } from "../support/paths";
import { CorpusNetwork, CorpusServed, serveCorpusCharts } from "./corpus-charts";

/** A finding as an entry lists it. */
export interface CorpusFinding {
    status: string;
    rule: string;
    object: string;
    location: string;
}

/** A source a run fetched, as the JSON report's `projects[].sources` lists it (the digest left out: see `served`). */
export interface CorpusSource {
    kind: string;
    url: string;
    ref: string;
    resolved: string;
    floating: boolean;
}

/** What a run gives, and what an entry expects. */
export interface CorpusOutcome {
    exit: number | null;
    /** The lines on standard error of a run that ended with exit code 2 (bad input), else none. */
    stderr: string[];
    findings: CorpusFinding[];
    /** The sources the run fetched; only for an entry that serves some (`served`). */
    sources?: CorpusSource[];
}

/** An entry's corpus.json (its other fields, provenance and why, are kept as they are). */
export interface CorpusEntry extends Partial<CorpusOutcome> {
    repository: string;
    commit: string;
    args: string[];
    /** Chart repositories the snapshot names, stood in for on loopback (./corpus-charts.ts). */
    served?: CorpusServed[];
}

export const CORPUS_FILE = "corpus.json";
/** How long one run may take. */
const RUN_TIMEOUT_MS = 240000;

/** The entries at or below `root` (folders with corpus.json and repo/), sorted; none when it holds none. */
export function corpusEntries(root: string): string[] {
    if (fs.existsSync(path.join(root, CORPUS_FILE))) return [path.resolve(root)];
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return [];
    return fs
        .readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, d.name, CORPUS_FILE)))
        .map((d) => path.resolve(root, d.name))
        .sort();
}

export function readCorpusEntry(dir: string): CorpusEntry {
    const file = path.join(dir, CORPUS_FILE);
    let entry: CorpusEntry;
    try {
        entry = JSON.parse(fs.readFileSync(file, "utf8")) as CorpusEntry;
    } catch {
        throw new BadInputError(`${file}: not valid JSON`);
    }
    if (typeof entry.repository !== "string" || !Array.isArray(entry.args))
        throw new BadInputError(`${file}: needs repository (a URL) and args (check's arguments)`);
    return entry;
}

function git(cwd: string, ...args: string[]): void {
    const r = spawnSync("git", args, { cwd, encoding: "utf8" });
    if (r.status !== 0) throw new ToolError(`git ${args[0]} in ${cwd}: ${(r.stderr ?? "").split("\n")[0]}`);
}

/** Every file under `dir` that names an upstream URL, rewritten to name its loopback stand-in. */
function rewriteUrls(dir: string, urls: CorpusNetwork["urls"]): void {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) rewriteUrls(p, urls);
        else if (e.isFile()) {
            const text = fs.readFileSync(p, "utf8");
            const out = urls.reduce((t, u) => t.split(u.upstream).join(u.local), text);
            if (out !== text) fs.writeFileSync(p, out);
        }
    }
}

/** A clone as a user has it: the snapshot committed, `origin` the upstream repository. */
function cloneOf(dir: string, root: string, entry: CorpusEntry, network?: CorpusNetwork): string {
    const clone = path.join(root, path.basename(dir));
    fs.cpSync(path.join(dir, "repo"), clone, { recursive: true });
    if (network) rewriteUrls(clone, network.urls);
    git(clone, "init", "-q");
    git(clone, "remote", "add", "origin", `${entry.repository}.git`);
    git(clone, "add", "-A");
    git(clone, "-c", "user.email=corpus@example.invalid", "-c", "user.name=corpus", "commit", "-qm", entry.commit);
    return clone;
}

function objectName(o: { kind?: string; namespace?: string; name?: string } | undefined, resource: string): string {
    if (!o) return resource;
    return [o.kind, o.namespace, o.name].filter((p) => p !== undefined && p !== "").join("/");
}

/** `text` with each stand-in's loopback URL named as its upstream URL again (the port differs run to run). */
function upstream(text: string, network: CorpusNetwork | undefined): string {
    return (network?.urls ?? []).reduce((t, u) => t.split(u.local).join(u.upstream), text);
}

/** The sources of a JSON report, each URL named as upstream. */
function sourcesOf(report: { projects?: { sources?: CorpusSource[] }[] }, network: CorpusNetwork): CorpusSource[] {
    const out: CorpusSource[] = [];
    for (const project of report.projects ?? [])
        for (const s of project.sources ?? [])
            out.push({
                kind: s.kind,
                url: upstream(s.url, network),
                ref: s.ref,
                resolved: s.resolved,
                floating: s.floating,
            });
    return out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

interface ReportFinding {
    status: string;
    rule: string;
    resource: string;
    location?: string;
    object?: { kind?: string; namespace?: string; name?: string };
}

/** The findings of a JSON report (reports/json.ts), in a stable order; a fetched object's location named upstream. */
function findingsOf(report: { projects?: { findings?: ReportFinding[] }[] }, network?: CorpusNetwork): CorpusFinding[] {
    const found: CorpusFinding[] = [];
    for (const project of report.projects ?? [])
        for (const f of project.findings ?? [])
            found.push({
                status: f.status,
                rule: f.rule,
                object: objectName(f.object, f.resource),
                location: upstream(f.location ?? "", network),
            });
    const key = (f: CorpusFinding) => `${f.rule}\u0000${f.object}\u0000${f.location}\u0000${f.status}`;
    return found.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Runs `node args` in `cwd` to its end (killed past the timeout): its exit code and standard error. */
function runNode(args: string[], cwd: string): Promise<{ status: number | null; stderr: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, {
            cwd,
            env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1" },
            stdio: ["ignore", "ignore", "pipe"],
            timeout: RUN_TIMEOUT_MS,
        });
        let stderr = "";
        child.stderr.on("data", (c: Buffer) => void (stderr += c.toString("utf8")));
        child.on("error", reject);
        child.on("close", (status) => resolve({ status, stderr }));
    });
}

/**
 * Runs the entry's check as its users would, in a temporary folder of its own; what it gave. An entry that
 * serves chart repositories is run with its stand-ins on loopback, the fetched sources part of what it gave.
 */
export async function runCorpusEntry(dir: string, entry: CorpusEntry = readCorpusEntry(dir)): Promise<CorpusOutcome> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-corpus-"));
    const served = entry.served ?? [];
    const servers = served.length > 0 ? await serveCorpusCharts(dir, served, root) : undefined;
    try {
        const network = servers?.network;
        const clone = cloneOf(dir, root, entry, network);
        const report = path.join(root, "report.json");
        // A snapshot is judged as it is, with an empty cache of its own and no network but its own loopback
        // stand-ins (--offline when it has none): its verdict never depends on what a remote serves today, nor on
        // what an earlier run cached.
        const cache = ["--cache-dir", path.join(root, "cache")];
        const net = network ? network.allowHosts.flatMap((h) => ["--allow-host", h]) : ["--offline"];
        const r = await runNode(
            [CLI_ENTRY, "check", ...entry.args, ...net, ...cache, "--report", `json=${report}`],
            clone,
        );
        const json = fs.existsSync(report)
            ? (JSON.parse(fs.readFileSync(report, "utf8")) as Parameters<typeof findingsOf>[0] &
                  Parameters<typeof sourcesOf>[0])
            : {};
        return {
            exit: r.status,
            stderr: r.status === 2 ? r.stderr.split("\n").filter((l) => l.trim() !== "") : [],
            findings: findingsOf(json, network),
            ...(network ? { sources: sourcesOf(json, network) } : {}),
        };
    } finally {
        await servers?.close();
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/**
 * Rewrites the entry's expectations (exit, stderr, findings) from a run, every other field and the file's layout
 * kept; true when they changed.
 */
export async function updateCorpusEntry(dir: string): Promise<boolean> {
    const entry = readCorpusEntry(dir);
    const got = await runCorpusEntry(dir, entry);
    const file = path.join(dir, CORPUS_FILE);
    const before = fs.readFileSync(file, "utf8");
    const after = JSON.stringify({ ...entry, ...got }, null, 4) + "\n";
    if (after === before) return false;
    fs.writeFileSync(file, after);
    return true;
}
