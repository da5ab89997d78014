/**
 * Interrupt handling: children and temporary folders the harness creates are tracked, and on SIGINT or
 * SIGTERM every child process group is killed and every temporary folder removed before exiting 130
 * (SIGINT) or 143 (SIGTERM), as shells do.
 */
import { ChildProcess } from "child_process";
import * as fs from "fs";

const children = new Set<ChildProcess>();
const folders = new Set<string>();
let installed = false;

export function track(x: ChildProcess | string): void {
    typeof x === "string" ? folders.add(x) : children.add(x);
    install();
}

export function untrack(x: ChildProcess | string): void {
    typeof x === "string" ? folders.delete(x) : children.delete(x);
}

/** Kills tracked children and removes tracked folders; safe to call more than once. */
export function cleanupNow(): void {
    for (const c of children) {
        try {
            if (c.pid) process.kill(-c.pid, "SIGKILL");
        } catch {
            try {
                c.kill("SIGKILL");
            } catch {
                /* gone */
            }
        }
    }
    children.clear();
    for (const f of folders) fs.rmSync(f, { recursive: true, force: true });
    folders.clear();
}

function install(): void {
    if (installed) return;
    installed = true;
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.once(signal, () => {
            cleanupNow();
            process.stderr.write(`pko-guard: interrupted (${signal}); cleaned up\n`);
            process.exit(signal === "SIGINT" ? 130 : 143);
        });
    }
}
