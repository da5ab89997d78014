/**
 * The pre-commit hook's wait, and each tool's peak memory, for the peers part (bench only, ../peers.ts).
 * A git repository of 20 staged manifest files, and hooks/pko-guard-check.sh's command run from its root as
 * the hook runs it, timed beside `node -e 0` in alternating runs (medians).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { performance } from "perf_hooks";
import { SNAPSHOT_LAUNCHER } from "../../cli/bundle/snapshot-build";
import { UNMARKED, median } from "../figures";
import { writeRepository } from "./peer-manifests";

export { SNAPSHOT_LAUNCHER };

/** The name of Node's own start in the rows (`node -e 0`). */
export const NODE_FLOOR = "node -e 0";

/** Peak resident memory (MiB) of one run of `argv`, from GNU time; undefined where /usr/bin/time is missing. */
export function peakMemory(argv: string[], env: NodeJS.ProcessEnv): number | undefined {
    if (!fs.existsSync("/usr/bin/time")) return undefined;
    const r = spawnSync("/usr/bin/time", ["-f", "PEAK_KB %M", ...argv], {
        encoding: "utf8",
        maxBuffer: 1 << 30,
        env,
    });
    const m = /PEAK_KB (\d+)/.exec(r.stderr ?? "");
    return m ? Number(m[1]) / 1024 : undefined;
}

export interface HookCommit {
    /** The hook's command on the 20-file commit, median (ms). */
    ms?: number;
    /** `node -e 0` in the same rounds, median (ms). */
    nodeMs?: number;
    runs: number[];
    nodeRuns: number[];
}

/** The hook's command on a commit of 20 staged manifest files, 11 rounds beside `node -e 0`. */
export function hookCommit(tmp: string, line: (s: string) => void): HookCommit {
    const repo = path.join(tmp, "hook-commit");
    fs.mkdirSync(repo, { recursive: true });
    const git = (...args: string[]) => spawnSync("git", args, { cwd: repo, encoding: "utf8" });
    if (git("init", "-q").status !== 0) return { runs: [], nodeRuns: [] };
    writeRepository(repo, 200);
    git("add", "-A");
    const runs: number[] = [];
    const nodeRuns: number[] = [];
    for (let i = 0; i < 12; i++) {
        let t = performance.now();
        spawnSync(process.execPath, ["-e", "0"]);
        const n = performance.now() - t;
        t = performance.now();
        const r = spawnSync(SNAPSHOT_LAUNCHER, ["check", "--", "."], {
            cwd: repo,
            encoding: "utf8",
            maxBuffer: 1 << 30,
            env: UNMARKED,
        });
        const ms = performance.now() - t;
        if (r.status !== 0 && r.status !== 1) {
            line(`  pre-commit hook's check: exited ${r.status}, not timed`);
            return { runs: [], nodeRuns: [] };
        }
        if (i === 0) continue; // the file cache
        runs.push(ms);
        nodeRuns.push(n);
    }
    const out: HookCommit = { ms: median(runs), nodeMs: median(nodeRuns), runs, nodeRuns };
    line(
        `  pre-commit hook's check on a 20-file commit (200 objects): median ${out.ms?.toFixed(0)} ms of ${runs.length}, ` +
            `node -e 0 ${out.nodeMs?.toFixed(0)} ms in the same rounds (x${((out.ms ?? 0) / (out.nodeMs ?? 1)).toFixed(2)})`,
    );
    return out;
}
