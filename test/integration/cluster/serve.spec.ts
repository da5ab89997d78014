/**
 * The webhook's servers as a caller meets them (cli/webhook.ts startWebhook over cluster/serve.ts and
 * cluster/limits.ts), in-process over a seeded cache: callers without a certificate the client CA signed are
 * refused in the TLS handshake while probes are served on the health port; wrong content types, oversized
 * bodies and reviews beyond the byte limit are refused with their status; bodies trickled in hold only what
 * they sent, so they do not keep a review from being judged; made-up kinds add no metric series; silent, slow
 * and idle connections are closed by the server. Waits are on events and conditions.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as http from "http";
import * as https from "https";
import * as net from "net";
import * as path from "path";
import * as tls from "tls";
import { Webhook, WebhookOptions, startWebhook } from "../../../cli/webhook";
import { Ca, CertPair, issueCert, makeCa } from "../../../harness/certs";
import { makeTempDir, removeTempDir } from "../../../support/process";
import { until } from "../../support/cluster";
import { seededCache } from "../../support/fake-cluster";

interface Answer {
    status: number;
    body: string;
    headers: Record<string, unknown>;
}

function review(kind: string, uid = "u-1"): string {
    return JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
            uid,
            kind: { group: "example.com", version: "v1", kind },
            operation: "CREATE",
            namespace: "app",
            name: "x",
            object: { apiVersion: "example.com/v1", kind, metadata: { name: "x", namespace: "app" } },
        },
    });
}

describe("the webhook's servers: authenticated and bounded", function () {
    this.timeout(120_000);
    let dir: string;
    let ca: Ca;
    let serving: CertPair;
    let clientCa: Ca;
    let client: CertPair;
    let stranger: CertPair;
    const hooks: Webhook[] = [];
    let logs: string[] = [];

    const start = async (o: Partial<WebhookOptions> = {}) => {
        const w = await startWebhook(
            { cert: serving.cert, key: serving.key, port: 0, warnOnly: false, log: (l) => logs.push(l), ...o },
            { cache: seededCache() },
        );
        hooks.push(w);
        return w;
    };
    const tlsOptions = (pair?: CertPair) => ({
        ca: fs.readFileSync(ca.cert),
        ...(pair ? { cert: fs.readFileSync(pair.cert), key: fs.readFileSync(pair.key) } : {}),
    });
    const request = (
        port: number,
        o: { path?: string; method?: string; body?: string; headers?: Record<string, string>; pair?: CertPair } = {},
    ) =>
        new Promise<Answer>((resolve, reject) => {
            const req = https.request(
                {
                    host: "127.0.0.1",
                    port,
                    path: o.path ?? "/validate",
                    method: o.method ?? "POST",
                    agent: false,
                    headers: o.headers ?? { "Content-Type": "application/json" },
                    ...tlsOptions(o.pair),
                },
                (res) => {
                    let body = "";
                    res.on("data", (d) => (body += d));
                    res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
                },
            );
            req.on("error", reject);
            req.end(o.body);
        });

    before(() => {
        dir = makeTempDir("serve-spec");
        ca = makeCa(path.join(dir, "serving"));
        serving = issueCert(ca, "webhook", { ips: ["127.0.0.1"] });
        clientCa = makeCa(path.join(dir, "clients"), "api-server-clients");
        client = issueCert(clientCa, "kube-apiserver", { dns: ["kube-apiserver"] });
        stranger = issueCert(makeCa(path.join(dir, "other"), "other-ca"), "stranger", { dns: ["stranger"] });
    });
    afterEach(async () => {
        await Promise.all(hooks.splice(0).map((h) => h.close()));
        logs = [];
    });
    after(() => removeTempDir(dir));

    it("with --client-ca, refuses in the handshake a caller with no certificate or one another CA signed; probes on the health port", async () => {
        const w = await start({ clientCa: clientCa.cert, healthPort: 0, host: "127.0.0.1" });
        const ok = await request(w.port, { body: review("Widget"), pair: client });
        assert.strictEqual(ok.status, 200);
        assert.strictEqual(JSON.parse(ok.body).response.allowed, true);
        for (const pair of [undefined, stranger]) {
            const refused = await request(w.port, { body: review("Widget"), pair }).then(
                (a) => `answered ${a.status}`,
                (e: Error) => e.message,
            );
            assert.doesNotMatch(refused, /^answered/, "no answer without a trusted client certificate");
        }
        await until(
            "the refusals logged",
            () => logs.filter((l) => /"event":"tls.client_refused"/.test(l)).length >= 2,
        );
        const ready = await request(w.healthPort!, { method: "GET", path: "/readyz" });
        assert.strictEqual(ready.status, 200, ready.body);
        assert.strictEqual((await request(w.healthPort!, { method: "GET", path: "/healthz" })).status, 200);
        assert.strictEqual((await request(w.healthPort!, { body: review("Widget") })).status, 404);
    });

    it("binds loopback by default without a client CA, and says so", async () => {
        await start();
        assert.ok(logs.some((l) => /"event":"webhook.listening"/.test(l) && /"host":"127\.0\.0\.1"/.test(l)));
        assert.ok(logs.some((l) => /"event":"webhook.unauthenticated"/.test(l)));
    });

    it("refuses a wrong content type (415), an oversized body (413) and a body beyond the bytes held (429)", async () => {
        const w = await start({ limits: { maxConcurrent: 1, maxBodyBytes: 64 * 1024, maxInflightBytes: 400 } });
        const plain = await request(w.port, { body: review("Widget"), headers: { "Content-Type": "text/plain" } });
        assert.strictEqual(plain.status, 415);
        const big = "x".repeat(70 * 1024);
        const oversized = await request(w.port, { body: big, headers: { "Content-Type": "application/json" } });
        assert.strictEqual(oversized.status, 413);
        assert.match(oversized.body, /larger than 65536 bytes/);
        // A review whose body is still arriving holds the bytes it sent: with them, another is beyond the bytes.
        const body = review("Widget", "slow");
        let answered: Promise<Answer>;
        const held = new Promise<http.ClientRequest>((resolve) => {
            answered = new Promise<Answer>((done, fail) => {
                const req = https.request(
                    {
                        host: "127.0.0.1",
                        port: w.port,
                        path: "/validate",
                        method: "POST",
                        agent: false,
                        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
                        ...tlsOptions(),
                    },
                    (res) => {
                        let b = "";
                        res.on("data", (d) => (b += d));
                        res.on("end", () => done({ status: res.statusCode ?? 0, body: b, headers: res.headers }));
                    },
                );
                req.on("error", fail);
                req.write(body.slice(0, 240));
                resolve(req);
            });
        });
        const slow = await held;
        await until("the slow review's bytes to be held", async () =>
            /pko_guard_admission_body_bytes 240/.test(await w.metrics.metrics()),
        );
        const busy = await request(w.port, { body: review("Widget", "busy") });
        assert.strictEqual(busy.status, 429);
        assert.strictEqual(busy.headers["retry-after"], "1");
        slow.end(body.slice(240));
        assert.strictEqual((await answered!).status, 200);
        assert.strictEqual((await request(w.port, { body: review("Widget", "after") })).status, 200);
        const m = await w.metrics.metrics();
        for (const status of ["413", "415", "429"])
            assert.match(m, new RegExp(`pko_guard_admission_refused_total\\{status="${status}"\\} 1`));
    });

    it("made-up kinds add no metric series", async () => {
        const w = await start();
        for (let i = 0; i < 40; i++)
            assert.strictEqual((await request(w.port, { body: review(`MadeUp${i}`, `u${i}`) })).status, 200);
        const m = await w.metrics.metrics();
        const series = m.split("\n").filter((l) => l.startsWith("pko_guard_admission_requests_total{"));
        assert.deepStrictEqual(series, [
            'pko_guard_admission_requests_total{kind="other",operation="CREATE",decision="skipped"} 40',
        ]);
        assert.doesNotMatch(m, /MadeUp/);
    });

    it("bodies trickled in (announced or chunked, never ending) hold only what they sent: a review is still judged", async () => {
        const w = await start({ limits: { maxConcurrent: 4, maxInflightBytes: 4096 } });
        const heads = [
            ...Array.from({ length: 6 }, () => "Content-Length: 1000\r\n\r\n{"),
            ...Array.from({ length: 3 }, () => "Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"),
        ];
        const tricklers = heads.map((head) => {
            const s = tls.connect({ host: "127.0.0.1", port: w.port, ...tlsOptions() }, () =>
                s.write(`POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${head}`),
            );
            s.on("error", () => undefined);
            return s;
        });
        try {
            await until("the trickled bytes to be held", async () =>
                /pko_guard_admission_body_bytes 9\n/.test(await w.metrics.metrics()),
            );
            const judged = await request(w.port, { body: review("Widget", "while-trickled") });
            assert.strictEqual(judged.status, 200, judged.body);
            assert.match(judged.body, /"uid":"while-trickled"/);
        } finally {
            for (const s of tricklers) s.destroy();
        }
    });

    it("closes a connection that never finishes its TLS handshake, within the header timeout", async function () {
        // Node's own handshake timeout is 120 s: a caller with no certificate could hold connections that long.
        this.timeout(20_000);
        const w = await start({ clientCa: clientCa.cert, limits: { headersTimeoutMs: 300 } });
        const refusals = () => logs.filter((l) => /"event":"tls.client_refused"/.test(l)).length;
        const before = refusals();
        const mute = net.connect(w.port, "127.0.0.1");
        mute.on("error", () => undefined);
        await new Promise<void>((resolve) => mute.on("close", () => resolve()));
        assert.strictEqual(refusals(), before + 1, logs.join("\n"));
    });

    it("closes a connection that never sends a request, one whose headers stall, and an idle kept-alive one", async function () {
        // Node's defaults would hold a silent connection for a minute or more: this bound fails them.
        this.timeout(30_000);
        const w = await start({
            limits: { headersTimeoutMs: 300, requestTimeoutMs: 1000, keepAliveTimeoutMs: 300, idleTimeoutMs: 2000 },
        });
        const closed = (socket: tls.TLSSocket) =>
            new Promise<string>((resolve) => {
                let data = "";
                socket.on("data", (d) => (data += d));
                socket.on("error", () => undefined);
                socket.on("close", () => resolve(data));
            });
        const silent = tls.connect({ host: "127.0.0.1", port: w.port, ...tlsOptions() });
        const stalled = tls.connect({ host: "127.0.0.1", port: w.port, ...tlsOptions() }, () =>
            stalled.write("GET /healthz HTTP/1.1\r\nHost: x\r\n"),
        );
        const keptAlive = tls.connect({ host: "127.0.0.1", port: w.port, ...tlsOptions() }, () =>
            keptAlive.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        );
        const [a, b, c] = await Promise.all([closed(silent), closed(stalled), closed(keptAlive)]);
        // Closed without a response, or with Node's 408 (its header timer also covers a first request that never came).
        assert.ok(a === "" || /^HTTP\/1\.1 408 /.test(a), a);
        assert.match(b, /^HTTP\/1\.1 408 /);
        assert.match(c, /^HTTP\/1\.1 200 OK/);
        assert.match(c, /Keep-Alive: timeout=/i);
    });
});
