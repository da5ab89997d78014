/**
 * The cluster door as deploy/webhook/ ships it, for specs on a real API server: the AdmissionConfiguration and
 * kubeconfig through which kube-apiserver presents its client certificate (deploy/webhook/apiserver/), the
 * ValidatingWebhookConfiguration pointed at a local webhook, and an HTTPS GET that may present a certificate.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { REPO_ROOT } from "../../support/paths";
import { CertPair } from "../../harness/certs";
import { Doc } from "./cluster";

const APISERVER_DIR = path.join(REPO_ROOT, "deploy", "webhook", "apiserver");

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
