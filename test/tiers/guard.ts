/**
 * Refusing child processes and connections: every way to start a process (`child_process` spawn, exec,
 * execFile, fork and their Sync forms, and `ChildProcess.spawn` for code that holds the class) and every
 * outgoing socket (`net.Socket.connect`, under net, http, http2, tls, fetch and gRPC) throws, and each
 * attempt is also handed to `onAttempt`, so an attempt whose error the code under test catches is still
 * seen. Returns the function that puts the originals back.
 */

// `require`, not `import * as`: the guard must patch the modules' own export objects, not a copy.
const childProcess = require("child_process");
const net = require("net");

const CHILD_PROCESS_FUNCTIONS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"];

export function refuseProcessesAndConnections(onAttempt: (message: string) => void): () => void {
    const patched: [object, string, unknown][] = [];
    const refuse = (target: Record<string, unknown>, key: string, what: string) => {
        patched.push([target, key, target[key]]);
        target[key] = () => {
            const message = `${what} in a unit spec: the unit tier starts no process and opens no connection (move the spec under test/integration/)`;
            onAttempt(message);
            throw new Error(message);
        };
    };
    for (const name of CHILD_PROCESS_FUNCTIONS) refuse(childProcess, name, `child_process.${name}`);
    refuse(childProcess.ChildProcess.prototype, "spawn", "ChildProcess.spawn");
    refuse(net.Socket.prototype, "connect", "a network connection (net.Socket.connect)");
    return () => {
        for (const [target, key, original] of patched.reverse()) (target as Record<string, unknown>)[key] = original;
    };
}
