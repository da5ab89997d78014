/**
 * The webhook's TLS files replaced by bad ones (cluster/serve.ts): an empty or garbage client CA, an empty
 * certificate, or a key that does not match the certificate is logged as a failed reload and the last good set
 * kept, so the API server's client certificate is still accepted and readiness still tells the truth; a good file
 * afterwards is loaded. In-process over a seeded cache, each change awaited through the log it makes.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import { Webhook, startWebhook } from "../../../cli/webhook";
import { Ca, CertPair, issueCert, makeCa } from "../../../harness/certs";
import { makeTempDir, removeTempDir } from "../../../support/process";
import { until } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";

const REVIEW = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
        uid: "u-1",
        kind: { group: "example.com", version: "v1", kind: "Widget" },
        operation: "CREATE",
        namespace: "app",
        name: "x",
        object: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "x", namespace: "app" } },
    },
});

describe("the webhook's TLS files reloaded: a bad file keeps the last good one", function () {
    this.timeout(120_000);
    let dir: string;
    let ca: Ca;
    let clientCa: Ca;
    let client: CertPair;
    let files: { cert: string; key: string; clientCa: string };
    let w: Webhook | undefined;
    const logs: string[] = [];

    const request = (port: number, o: { path?: string; pair?: CertPair }) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = https.request(
                {
                    host: "127.0.0.1",
                    port,
                    path: o.path ?? "/validate",
                    method: o.path ? "GET" : "POST",
                    agent: false,
                    headers: { "Content-Type": "application/json" },
                    ca: fs.readFileSync(ca.cert),
                    ...(o.pair ? { cert: fs.readFileSync(o.pair.cert), key: fs.readFileSync(o.pair.key) } : {}),
                },
                (res) => {
                    let body = "";
                    res.on("data", (d) => (body += d));
                    res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
                },
            );
            req.on("error", reject);
            req.end(o.path ? undefined : REVIEW);
        });
    const failures = () => logs.filter((l) => /"event":"tls.reload_failed"/.test(l)).length;
    const reloads = () => logs.filter((l) => /"event":"tls.reloaded"/.test(l)).length;

    before(async () => {
        dir = makeTempDir("tls-reload-spec");
        ca = makeCa(path.join(dir, "serving"));
        const serving = issueCert(ca, "webhook", { ips: ["127.0.0.1"] });
        clientCa = makeCa(path.join(dir, "clients"), "api-server-clients");
        client = issueCert(clientCa, "kube-apiserver", { dns: ["kube-apiserver"] });
        // The files the webhook reads are copies this spec rewrites.
        const live = path.join(dir, "live");
        fs.mkdirSync(live);
        files = {
            cert: path.join(live, "tls.crt"),
            key: path.join(live, "tls.key"),
            clientCa: path.join(live, "client-ca.crt"),
        };
        fs.copyFileSync(serving.cert, files.cert);
        fs.copyFileSync(serving.key, files.key);
        fs.copyFileSync(clientCa.cert, files.clientCa);
        w = await startWebhook(
            {
                ...files,
                port: 0,
                healthPort: 0,
                host: "127.0.0.1",
                warnOnly: false,
                certPollMs: 50,
                log: (l) => logs.push(l),
            },
            { cache: seededCache() },
        );
        // The files are polled: a change is seen only once the first poll has read them. The same CA is written
        // again (a new modification time) until a reload is logged: then the polling has begun.
        const clientCaPem = fs.readFileSync(files.clientCa);
        await until("the polling to begin", () => {
            if (reloads() > 0) return true;
            fs.writeFileSync(files.clientCa, clientCaPem);
            return false;
        });
    });
    after(async () => {
        await w?.close();
        removeTempDir(dir);
    });

    const stillServing = async () => {
        const answered = await request(w!.port, { pair: client });
        assert.strictEqual(answered.status, 200, answered.body);
        assert.strictEqual(JSON.parse(answered.body).response.allowed, true);
        const ready = await request(w!.healthPort!, { path: "/readyz" });
        assert.strictEqual(ready.status, 200, ready.body);
    };

    for (const [what, file, content] of [
        ["an empty client CA", "clientCa", ""],
        ["a garbage client CA", "clientCa", "garbage\n"],
        [
            "a client CA holding a key, not a certificate",
            "clientCa",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ],
        ["an empty certificate", "cert", ""],
        ["a garbage key", "key", "garbage\n"],
    ] as const) {
        it(`${what}: logged, the last good set kept, the API server still answered`, async () => {
            const good = fs.readFileSync(files[file]);
            const before = failures();
            fs.writeFileSync(files[file], content);
            try {
                await until(`the failed reload of ${what} logged`, () => failures() > before);
                const line = logs.filter((l) => /"event":"tls.reload_failed"/.test(l)).pop()!;
                assert.match(line, /"level":"error"/);
                await stillServing();
            } finally {
                fs.writeFileSync(files[file], good);
            }
        });
    }

    it("a key from another pair (a rotation half done) is refused, then the whole new pair loads", async () => {
        const next = issueCert(ca, "webhook-renewed", { ips: ["127.0.0.1"] });
        const before = failures();
        fs.copyFileSync(next.key, files.key);
        await until("the mismatched pair refused", () => failures() > before);
        await stillServing();
        const loaded = reloads();
        fs.copyFileSync(next.cert, files.cert);
        await until("the renewed pair loaded", () => reloads() > loaded);
        await stillServing();
    });
});
