/**
 * Process helpers for tests that must prove nothing outlives a run: a run's descendants are found by
 * walking the process table from its pid (never by counting processes by name, which another run on the
 * same machine could change), and conditions are awaited, not slept on.
 */
import { spawnSync } from "child_process";

/** Every live descendant of `pid` (children, grandchildren, ...). */
export function descendants(pid: number): number[] {
    const table = spawnSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" }).stdout;
    const children = new Map<number, number[]>();
    for (const line of table.split("\n")) {
        const [p, pp] = line.trim().split(/\s+/).map(Number);
        if (!Number.isInteger(p) || !Number.isInteger(pp)) continue;
        children.set(pp, [...(children.get(pp) ?? []), p]);
    }
    const out: number[] = [];
    const walk = (p: number) => {
        for (const c of children.get(p) ?? []) {
            out.push(c);
            walk(c);
        }
    };
    walk(pid);
    return out;
}

/** True while `pid` exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch {
        return false;
    }
    const stat = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim();
    return stat !== "" && !stat.startsWith("Z");
}

/** Resolves when `condition` holds; rejects with `what` when it has not held within `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 60000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
    }
}
