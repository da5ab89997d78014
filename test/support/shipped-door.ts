/**
 * The cluster door as deploy/webhook/ ships it, for specs on a real API server: the AdmissionConfiguration and
 * kubeconfig through which kube-apiserver presents its client certificate (deploy/webhook/apiserver/), the
 * ValidatingWebhookConfiguration pointed at a local webhook, and an HTTPS GET that may present a certificate;
 * an API server that sends its reviews through that door (startDoor) and `pko-guard webhook` serving it as a
 * process (startShippedWebhook).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { CLI_ENTRY, REPO_ROOT } from "../../support/paths";
import { Spawned, makeTempDir, removeTempDir, spawnTracked } from "../../support/process";
import { ApiServer, installPkoCrds, startApiServer } from "../../harness/apiserver";
import { freePort } from "../../harness/ports";
import { Ca, CertPair, issueCert, makeCa } from "../../harness/certs";
import { Doc, namespaceYaml, until } from "./cluster";

const APISERVER_DIR = path.join(REPO_ROOT, "deploy", "webhook", "apiserver");

/** The namespace the shipped Deployment runs in: its claims are made there. */
export const WEBHOOK_NAMESPACE = "pko-guard-system";

export interface Answer {
    status: number;
    body: string;
}

export function get(port: number, p: string, ca: Buffer, pair?: { cert: Buffer; key: Buffer }): Promise<Answer> {
    return new Promise((resolve, reject) => {
        https
            .get({ host: "127.0.0.1", port, path: p, ca, agent: false, ...(pair ?? {}) }, (res) => {
                let body = "";
                res.on("data", (d) => (body += d));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on("error", reject);
    });
}

/** The shipped admission configuration and kubeconfig, for a webhook at 127.0.0.1:`port`, under `dir`. */
export function admissionConfig(dir: string, port: number, client: CertPair): string {
    const kubeconfig = jsyaml.load(fs.readFileSync(path.join(APISERVER_DIR, "webhook-kubeconfig.yaml"), "utf8")) as Doc;
    assert.strictEqual(kubeconfig.users[0].name, "pko-guard-webhook.pko-guard-system.svc");
    kubeconfig.users[0].name = `127.0.0.1:${port}`;
    kubeconfig.users[0].user = { "client-certificate": client.cert, "client-key": client.key };
    const kubeconfigFile = path.join(dir, "webhook-kubeconfig.yaml");
    fs.writeFileSync(kubeconfigFile, jsyaml.dump(kubeconfig));
    const config = jsyaml.load(
        fs.readFileSync(path.join(APISERVER_DIR, "admission-configuration.yaml"), "utf8"),
    ) as Doc;
    config.plugins[0].configuration.kubeConfigFile = kubeconfigFile;
    const configFile = path.join(dir, "admission-configuration.yaml");
    fs.writeFileSync(configFile, jsyaml.dump(config));
    return configFile;
}

/** The shipped webhook configuration, pointed at `url` with `caBundle`. */
export function webhookConfiguration(url: string, caBundle: string): string {
    const doc = jsyaml.load(
        fs.readFileSync(path.join(REPO_ROOT, "deploy", "webhook", "validatingwebhookconfiguration.yaml"), "utf8"),
    ) as Doc;
    for (const w of doc.webhooks) w.clientConfig = { url: `${url}/validate`, caBundle };
    return jsyaml.dump(doc);
}

/** A real API server whose admission reviews go through the shipped door to a webhook at 127.0.0.1:`port`. */
export interface Door {
    /** The spec's own temporary folder (certificates, configurations). */
    dir: string;
    server: ApiServer;
    /** The CA the webhook takes client certificates of (kube-apiserver's among them). */
    clientCa: Ca;
    /** The webhook's port and its health port. */
    port: number;
    healthPort: number;
    /** The API server's CA, which also issues the webhook's serving certificate. */
    caPem: Buffer;
}

/**
 * Starts an API server that presents a client certificate of its own CA to the webhook, with the PKO CRDs and
 * `namespaces`, in a new temporary folder named after `prefix` (and kube-controller-manager's `controllers` as a
 * cluster runs them, when given). On failure nothing is left running.
 */
export async function startDoor(prefix: string, namespaces: string[], controllers?: readonly string[]): Promise<Door> {
    const dir = makeTempDir(prefix);
    let server: ApiServer | undefined;
    try {
        const clientCa = makeCa(path.join(dir, "clients"), "apiserver-clients");
        const client = issueCert(clientCa, "kube-apiserver", { dns: ["kube-apiserver"] });
        const port = await freePort();
        const healthPort = await freePort();
        server = await startApiServer({
            admissionConfigFile: admissionConfig(dir, port, client),
            ...(controllers ? { controllers } : {}),
        });
        await installPkoCrds(server);
        // The webhook's own namespace: its replicas' claims are Leases there (cluster/claims.ts).
        for (const ns of [WEBHOOK_NAMESPACE, ...namespaces]) await server.apply(namespaceYaml(ns));
        return { dir, server, clientCa, port, healthPort, caPem: fs.readFileSync(server.ca.cert) };
    } catch (e) {
        await server?.stop();
        removeTempDir(dir);
        throw e;
    }
}

/**
 * Starts `pko-guard webhook` as a process on the door's ports (a serving certificate of the API server's CA,
 * client certificates of the door's CA), reading the cluster through `kubeconfig` and claiming interacting reviews in
 * WEBHOOK_NAMESPACE as the Deployment does, with `extra` arguments; waits
 * until it is ready, then applies the shipped ValidatingWebhookConfiguration. Its output goes to `log`; `env` adds to
 * its environment (NODE_OPTIONS, say). A webhook
 * that exits before it is ready fails the start with the end of its output.
 */
export async function startShippedWebhook(
    door: Door,
    kubeconfig: string,
    extra: string[],
    log: (d: string) => void,
    env?: NodeJS.ProcessEnv,
): Promise<Spawned> {
    const serving = issueCert(door.server.ca, "webhook", { ips: ["127.0.0.1"] });
    const hook = spawnTracked(
        process.execPath,
        [
            CLI_ENTRY,
            "webhook",
            ...["--cert", serving.cert, "--key", serving.key, "--client-ca", door.clientCa.cert],
            ...["--host", "127.0.0.1", "--port", String(door.port), "--health-port", String(door.healthPort)],
            ...["--kubeconfig", kubeconfig, "--claims-namespace", WEBHOOK_NAMESPACE, ...extra],
        ],
        { cwd: door.dir, stdio: ["ignore", "pipe", "pipe"], ...(env ? { env: { ...process.env, ...env } } : {}) },
    );
    let tail = "";
    const onData = (d: Buffer) => {
        tail = (tail + d).slice(-3000);
        log(String(d));
    };
    hook.child.stdout!.on("data", onData);
    hook.child.stderr!.on("data", onData);
    try {
        await until("the webhook's /readyz", async () => {
            if (hook.child.exitCode !== null) throw new Error(`the webhook exited: ${tail}`);
            return (await get(door.healthPort, "/readyz", door.caPem).catch(() => ({ status: 0 }))).status === 200;
        });
    } catch (e) {
        hook.kill();
        await hook.exited;
        throw e;
    }
    await door.server.apply(webhookConfiguration(`https://127.0.0.1:${door.port}`, door.caPem.toString("base64")));
    return hook;
}
