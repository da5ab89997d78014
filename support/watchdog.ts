/**
 * The watchdog of a pko-guard process (see ./process.ts): reads `+pid` / `-pid` lines on standard input (a pipe from
 * its parent) for the children it must not let outlive the parent.
 * On end of file (the kernel closes the pipe on any death of the parent, SIGKILL included) it kills each listed child's
 * tree and exits. It ignores a terminal's SIGINT/SIGTERM so it does not race the parent's own cleanup.
 */
import { killPidTree } from "./process";

const live = new Set<number>();
let partial = "";

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => undefined);

process.stdin.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
        const pid = Number(line.slice(1));
        if (!Number.isInteger(pid) || pid <= 1) continue;
        if (line.startsWith("+")) live.add(pid);
        else if (line.startsWith("-")) live.delete(pid);
    }
});

const finish = () => {
    for (const pid of live) killPidTree(pid);
    process.exit(0);
};
process.stdin.on("end", finish);
process.stdin.on("error", finish);
