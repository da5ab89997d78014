/**
 * Corpus entries: `check` on a snapshot of a public repository (`<entry>/repo`, with its licence) and the exact
 * exit code, findings and error lines it must give (`<entry>/corpus.json`). The corpus tier
 * (test/corpus/cli/check-corpus.spec.ts) compares a run with them; `pko-guard test --update` rewrites them from a
 * run, for review by diff.
 *
 * A run is a user's: the snapshot is copied into a temporary git repository whose `origin` is the upstream URL,
 * and the installed command checks it with the entry's arguments.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError, ToolError } from "../support/errors";
import { CLI_ENTRY } from "../support/paths";

/** A finding as an entry lists it. */
export interface CorpusFinding {
    status: string;
    rule: string;
    object: string;
    location: string;
}

/** What a run gives, and what an entry expects. */
export interface CorpusOutcome {
    exit: number | null;
    /** The lines on standard error of a run that ended with exit code 2 (bad input), else none. */
    stderr: string[];
    findings: CorpusFinding[];
}

/** An entry's corpus.json (its other fields, provenance and why, are kept as they are). */
export interface CorpusEntry extends Partial<CorpusOutcome> {
    repository: string;
    commit: string;
    args: string[];
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

/** A clone as a user has it: the snapshot committed, `origin` the upstream repository. */
function cloneOf(dir: string, root: string, entry: CorpusEntry): string {
    const clone = path.join(root, path.basename(dir));
    fs.cpSync(path.join(dir, "repo"), clone, { recursive: true });
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

interface ReportFinding {
    status: string;
    rule: string;
    resource: string;
    location?: string;
    object?: { kind?: string; namespace?: string; name?: string };
}

/** The findings of a JSON report (reports/json.ts), in a stable order. */
function findingsOf(report: { projects?: { findings?: ReportFinding[] }[] }): CorpusFinding[] {
    const found: CorpusFinding[] = [];
    for (const project of report.projects ?? [])
        for (const f of project.findings ?? [])
            found.push({
                status: f.status,
                rule: f.rule,
                object: objectName(f.object, f.resource),
                location: f.location ?? "",
            });
    const key = (f: CorpusFinding) => `${f.rule}\u0000${f.object}\u0000${f.location}\u0000${f.status}`;
    return found.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Runs the entry's check as its users would, in a temporary folder of its own; what it gave. */
export function runCorpusEntry(dir: string, entry: CorpusEntry = readCorpusEntry(dir)): CorpusOutcome {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-corpus-"));
    try {
        const clone = cloneOf(dir, root, entry);
        const report = path.join(root, "report.json");
        // A snapshot is judged as it is, with no network and an empty cache of its own (--offline): its verdict
        // never depends on what a remote serves today, nor on what an earlier run cached.
        const offline = ["--offline", "--cache-dir", path.join(root, "cache")];
        const r = spawnSync(
            process.execPath,
            [CLI_ENTRY, "check", ...entry.args, ...offline, "--report", `json=${report}`],
            {
                cwd: clone,
                encoding: "utf8",
                env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1" },
                timeout: RUN_TIMEOUT_MS,
            },
        );
        return {
            exit: r.status,
            stderr: r.status === 2 ? r.stderr.split("\n").filter((l) => l.trim() !== "") : [],
            findings: fs.existsSync(report)
                ? findingsOf(JSON.parse(fs.readFileSync(report, "utf8")) as Parameters<typeof findingsOf>[0])
                : [],
        };
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/**
 * Rewrites the entry's expectations (exit, stderr, findings) from a run, every other field and the file's layout
 * kept; true when they changed.
 */
export function updateCorpusEntry(dir: string): boolean {
    const entry = readCorpusEntry(dir);
    const got = runCorpusEntry(dir, entry);
    const file = path.join(dir, CORPUS_FILE);
    const before = fs.readFileSync(file, "utf8");
    const after = JSON.stringify({ ...entry, ...got }, null, 4) + "\n";
    if (after === before) return false;
    fs.writeFileSync(file, after);
    return true;
}
