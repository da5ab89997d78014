/**
 * The shipped timeouts of deploy/webhook agree with the webhook's own (cli/webhook.ts, cluster/limits.ts,
 * cluster/deadline.ts): a review's reads of the API server end (refusing it, fail closed) at least a second
 * before the API server stops waiting (the configuration's timeoutSeconds), leaving time to judge and answer;
 * the server never cuts a request the API server still waits for; readiness is asked of the port that asks
 * no client certificate, and a probe answers at once (it never waits on a read), within the kubelet's timeout.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { READ_TIMEOUT_MS } from "../../../cli/webhook";
import { DEFAULT_LIMITS } from "../../../cluster/limits";
import { REPO_ROOT } from "../../../support/paths";

type Doc = Record<string, any>;

const load = (file: string): Doc[] =>
    jsyaml.loadAll(fs.readFileSync(path.join(REPO_ROOT, "deploy", "webhook", file), "utf8")) as Doc[];

describe("the shipped timeouts of deploy/webhook", () => {
    const hooks = load("validatingwebhookconfiguration.yaml")[0].webhooks as Doc[];
    const deployment = load("deployment.yaml").find((d) => d?.kind === "Deployment")!;
    const container = deployment.spec.template.spec.containers[0];
    const args: string[] = container.args;
    const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];

    it("a review's reads end at least a second before the API server stops waiting", () => {
        const read = flag("read-timeout") !== undefined ? Number(flag("read-timeout")) * 1000 : READ_TIMEOUT_MS;
        for (const h of hooks) {
            assert.ok(h.timeoutSeconds !== undefined, `${h.name} sets timeoutSeconds`);
            assert.ok(read + 1000 <= h.timeoutSeconds * 1000, `reads ${read} ms, webhook ${h.timeoutSeconds} s`);
            assert.ok(DEFAULT_LIMITS.requestTimeoutMs >= h.timeoutSeconds * 1000, "a request is not cut short");
        }
    });

    it("probes go to the health port, which asks no client certificate, and are given time to answer", () => {
        assert.ok(flag("client-ca"), "reviews need a client certificate");
        const healthPort = Number(flag("health-port"));
        const port = (name: string) => container.ports.find((p: Doc) => p.name === name)?.containerPort;
        for (const probe of [container.readinessProbe, container.livenessProbe]) {
            assert.strictEqual(port(probe.httpGet.port), healthPort);
            assert.strictEqual(probe.httpGet.scheme, "HTTPS");
            // The kubelet's default probe timeout is 1 s; /readyz never waits on a read (it starts one).
            assert.ok((probe.timeoutSeconds ?? 1) >= 1);
        }
        assert.strictEqual(container.readinessProbe.httpGet.path, "/readyz");
        assert.strictEqual(container.livenessProbe.httpGet.path, "/healthz");
    });
});
