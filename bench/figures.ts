/**
 * The benchmark's verdict table and bench/results.json (git-ignored).
 *
 * results.json keeps the latest measurement of every part: a run of some parts (`--only`) replaces those
 * parts and leaves the others as they were, each part with its own date, machine load and versions. The
 * table is built from the merged file, so it shows every part's latest figure and says when it was taken.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../support/paths";
import { Figure, PartOutput, Target } from "./types";

export type Verdict = "met" | "not met" | "not measured";

export interface PartRecord {
    measuredAt: string;
    machine: { cpus: number; node: string; loadAverageBefore: number[]; loadAverageAfter: number[] };
    versions: Record<string, string>;
    figures: Figure[];
    data: Record<string, unknown>;
}

export interface ResultsFile {
    format: 2;
    updatedAt: string;
    lastRun: {
        parts: string[];
        startedAt: string;
        node: string;
        cpus: number;
        loadAverageBefore: number[];
        loadAverageAfter: number[];
    };
    parts: Record<string, PartRecord>;
    table: TableRow[];
}

export interface TableRow {
    part: string;
    figure: string;
    value: number | null;
    unit: string;
    target: string;
    verdict: Verdict;
    measuredAt: string;
    note?: string;
}

export const RESULTS_FILE = path.join(REPO_ROOT, "bench", "results.json");
const PEERS_DIR = process.env.PKO_GUARD_PEERS_DIR ?? path.join(REPO_ROOT, ".cache", "bench-peers");

/** The environment users run pko-guard in: no phase marks (PKO_GUARD_TIMINGS loads perf_hooks and writes a file at exit). */
export const UNMARKED: NodeJS.ProcessEnv = { ...process.env };
delete UNMARKED.PKO_GUARD_TIMINGS;

/** The middle value (of an even count, the upper of the two middle ones): every median the bench prints. */
export function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
}

export const loadAverage = (): number[] => os.loadavg().map((x) => Math.round(x * 100) / 100);

export function verdict(value: number | null, t: Target): Verdict {
    if (value === null || !Number.isFinite(value)) return "not measured";
    const ok = t.op === "<=" ? value <= t.value : t.op === "<" ? value < t.value : value >= t.value;
    return ok ? "met" : "not met";
}

/**
 * The versions a part's figures depend on: Node, the policy SDK, and each peer the bench built
 * (bench/peers/build.sh stamps `<peer>.version` next to the binary); a peer not built says so.
 */
export function versions(): Record<string, string> {
    const out: Record<string, string> = { node: process.version };
    try {
        out["@pulumi/policy"] = JSON.parse(
            fs.readFileSync(path.join(REPO_ROOT, "node_modules", "@pulumi", "policy", "package.json"), "utf8"),
        ).version;
    } catch {
        out["@pulumi/policy"] = "unknown";
    }
    for (const peer of ["conftest", "kyverno"]) {
        let stamp = "";
        try {
            if (fs.existsSync(path.join(PEERS_DIR, peer)))
                stamp = fs.readFileSync(path.join(PEERS_DIR, `${peer}.version`), "utf8").trim();
        } catch {
            stamp = "built, version unknown";
        }
        out[peer] = stamp === "" ? "not built" : (stamp.split("@").pop() ?? stamp);
    }
    return out;
}

/**
 * The previous results, or none: a file of the old shape (one run's parts, not per part) or one that does
 * not parse is replaced, with one line saying so.
 */
export function readPrevious(line: (s: string) => void): Record<string, PartRecord> {
    let text: string;
    try {
        text = fs.readFileSync(RESULTS_FILE, "utf8");
    } catch {
        return {};
    }
    try {
        const old = JSON.parse(text) as Partial<ResultsFile>;
        if (old.format === 2 && old.parts && typeof old.parts === "object") return old.parts;
        line(
            `(${path.relative(process.cwd(), RESULTS_FILE)} has the old shape, without per-part records: its figures are not kept)`,
        );
    } catch {
        line(`(${path.relative(process.cwd(), RESULTS_FILE)} does not parse: its figures are not kept)`);
    }
    return {};
}

export function partRecord(out: PartOutput, startedAt: Date, before: number[]): PartRecord {
    return {
        measuredAt: startedAt.toISOString(),
        machine: {
            cpus: os.cpus().length,
            node: process.version,
            loadAverageBefore: before,
            loadAverageAfter: loadAverage(),
        },
        versions: versions(),
        figures: out.figures,
        data: out.data,
    };
}

const ORDER = ["throughput", "stack", "grpc", "startup", "peers", "real", "legs", "check", "admission", "hostile"];

export function tableRows(parts: Record<string, PartRecord>): TableRow[] {
    const names = Object.keys(parts).sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
    return names.flatMap((part) =>
        parts[part].figures.map((f) => ({
            part,
            figure: f.name,
            value: f.value,
            unit: f.unit,
            target: `${f.target.op} ${f.target.value.toLocaleString("en")} (${f.target.source})`,
            verdict: verdict(f.value, f.target),
            measuredAt: parts[part].measuredAt,
            ...(f.note ? { note: f.note } : {}),
        })),
    );
}

function shown(v: number | null, unit: string): string {
    if (v === null) return "-";
    const digits = Math.abs(v) >= 100 ? 0 : 2;
    return `${v.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits })}${unit ? " " + unit : ""}`;
}

/** The table as printed at the end of a run: one line per figure, then the versions and the machine's load. */
export function renderTable(file: ResultsFile): string[] {
    const header = ["part", "figure", "value", "target", "verdict", "measured (UTC)"];
    const rows = file.table.map((r) => [
        r.part,
        r.figure,
        shown(r.value, r.unit),
        r.target,
        r.note ? `${r.verdict} (${r.note})` : r.verdict,
        r.measuredAt.slice(0, 16).replace("T", " "),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
    const out = [
        "== verdicts (every part's latest figures; results.json)",
        fmt(header),
        fmt(widths.map((w) => "-".repeat(w))),
        ...rows.map(fmt),
    ];
    const counts = (["met", "not met", "not measured"] as Verdict[])
        .map((v) => `${file.table.filter((r) => r.verdict === v).length} ${v}`)
        .join(", ");
    out.push(`  ${counts}`);
    const never = ORDER.filter((p) => !file.parts[p]);
    if (never.length > 0) out.push(`  parts not measured yet (no figures in results.json): ${never.join(", ")}`);
    const v = versions();
    out.push(`  peers: conftest ${v.conftest}, Kyverno CLI ${v.kyverno}; @pulumi/policy ${v["@pulumi/policy"]}`);
    const r = file.lastRun;
    out.push(
        `  this run (${r.parts.join(", ")}): Node ${r.node}, ${r.cpus} CPUs, load average (1, 5, 15 min) before ${r.loadAverageBefore.join(", ")}, after ${r.loadAverageAfter.join(", ")}`,
    );
    for (const [name, p] of Object.entries(file.parts)) {
        if (r.parts.includes(name)) continue;
        out.push(
            `  ${name}: kept from ${p.measuredAt} (Node ${p.machine.node}, load before ${p.machine.loadAverageBefore.join(", ")}, after ${p.machine.loadAverageAfter.join(", ")})`,
        );
    }
    return out;
}

export function writeResults(file: ResultsFile): void {
    const tmp = `${RESULTS_FILE}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(file, null, 2) + "\n");
    fs.renameSync(tmp, RESULTS_FILE);
}
