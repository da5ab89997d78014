/**
 * `pko-guard webhook` as deploy/webhook/deployment.yaml runs it, for the admission bench: a process of its own
 * (its heap, its garbage collector and its event loop are the webhook's alone, as in its container), serving
 * reviews only to callers with a client certificate of `--client-ca` (the API server's, through
 * deploy/webhook/apiserver/), probes and metrics on a port of their own. Its log lines go to a pipe this
 * process drains, as a container's go to the runtime's.
 */
import { CLI_ENTRY } from "../support/paths";
import { spawnTracked } from "../support/process";
import { freePort } from "../harness/ports";
import { get, waitFor } from "../harness/readiness";

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
    const ca = Buffer.from(caPem);
    const health = (path: string) => get(`https://127.0.0.1:${healthPort}${path}`, { ca });
    try {
        await waitFor(
            "the webhook's /readyz",
            async () => (await health("/readyz")).status === 200,
            [{ name: "pko-guard webhook", p: hook, log: () => tail }],
            readyMs,
        );
    } catch (e) {
        await close();
        throw e;
    }
    return {
        port,
        pid: hook.child.pid!,
        metrics: async () => {
            const answer = await health("/metrics");
            if (answer.status !== 200) throw new Error(`the webhook's /metrics answered ${answer.status}`);
            return answer.body;
        },
        close,
    };
}
