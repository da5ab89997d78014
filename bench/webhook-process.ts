/**
 * `pko-guard webhook` as deploy/webhook/deployment.yaml runs it, for the admission bench: a process of its own
 * (its heap, its garbage collector and its event loop are the webhook's alone, as in its container), serving
 * reviews only to callers with a client certificate of `--client-ca` (the API server's, through
 * deploy/webhook/apiserver/), probes and metrics on a port of their own. Its log lines go to a pipe this
 * process drains, as a container's go to the runtime's.
 */
import * as https from "https";
import { CLI_ENTRY } from "../support/paths";
import { spawnTracked } from "../support/process";
import { freePort } from "../harness/ports";

export interface WebhookFiles {
    cert: string;
    key: string;
    /** The CA of the callers' client certificates. */
    clientCa: string;
    /** How the webhook reads the cluster. */
    kubeconfig: string;
}

export interface WebhookProcess {
    port: number;
    pid: number;
    /** The text of its /metrics. */
    metrics(): Promise<string>;
    /** Ends it (SIGTERM to its process group) and waits for it to exit. */
    close(): Promise<void>;
}

function get(port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
        https
            .get({ host: "127.0.0.1", port, path, ca, agent: false }, (res) => {
                let body = "";
                res.on("data", (d) => (body += d));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on("error", reject);
    });
}

/** Starts the webhook and waits until /readyz answers 200 (its cache synced), at most `readyMs`. */
export async function startWebhookProcess(
    files: WebhookFiles,
    caPem: string,
    readyMs = 300_000,
): Promise<WebhookProcess> {
    const [port, healthPort] = [await freePort(), await freePort()];
    const hook = spawnTracked(
        process.execPath,
        [
            CLI_ENTRY,
            "webhook",
            ...["--cert", files.cert, "--key", files.key, "--client-ca", files.clientCa],
            ...["--host", "127.0.0.1", "--port", String(port), "--health-port", String(healthPort)],
            ...["--kubeconfig", files.kubeconfig],
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
    );
    let tail = "";
    const keep = (d: Buffer) => void (tail = (tail + d.toString("utf8")).slice(-2000));
    hook.child.stdout!.on("data", keep);
    hook.child.stderr!.on("data", keep);
    const close = async () => {
        hook.child.kill("SIGTERM");
        await hook.exited;
    };
    const deadline = Date.now() + readyMs;
    for (;;) {
        if (hook.child.exitCode !== null) throw new Error(`the webhook exited before it was ready: ${tail}`);
        const ready = await get(healthPort, "/readyz", caPem).catch(() => undefined);
        if (ready?.status === 200) break;
        if (Date.now() > deadline) {
            await close();
            throw new Error(`the webhook was not ready within ${readyMs / 1000} s: ${tail}`);
        }
        await new Promise((r) => setTimeout(r, 250));
    }
    return {
        port,
        pid: hook.child.pid!,
        metrics: async () => (await get(healthPort, "/metrics", caPem)).body,
        close,
    };
}
