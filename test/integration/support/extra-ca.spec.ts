/**
 * The user's extra CA certificates (NODE_EXTRA_CA_CERTS) through the installed launcher: `check` starts without
 * Node reading them (support/extra-ca.ts), yet what it fetches over TLS still trusts them, as it would had Node read
 * them at start. A value file served over https by a server whose certificate only the extra CA signs is fetched
 * with them, and fails the Application closed without them.
 */
import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as https from "https";
import { AddressInfo } from "net";
import * as os from "os";
import * as path from "path";
import { issueCert, makeCa } from "../../../harness/certs";
import { REPO_ROOT } from "../../../support/paths";
import { writeFiles } from "../../support/source-servers";

const LAUNCHER = path.join(REPO_ROOT, "bin", "cli", "pko-guard.sh");

const APP = (url: string) =>
    `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/me/manifests\n    path: chart\n    helm: {valueFiles: ["${url}"]}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`;

describe("extra CA certificates, read when check first connects", function () {
    this.timeout(120_000);
    let tmp: string;
    let server: https.Server;
    let url: string;
    let caFile: string;
    let repo: string;

    before(async function () {
        if (!fs.existsSync(LAUNCHER)) this.skip();
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-extra-ca-"));
        const ca = makeCa(fs.mkdtempSync(path.join(tmp, "ca-")));
        caFile = ca.cert;
        const pair = issueCert(ca, "values", { ips: ["127.0.0.1"] });
        server = https.createServer(
            { key: fs.readFileSync(pair.key), cert: fs.readFileSync(pair.cert) },
            (req, res) => {
                if (req.url === "/values/prod.yaml") res.end("stackName: from-url\n");
                else res.writeHead(404).end();
            },
        );
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        const port = (server.address() as AddressInfo).port;
        url = `https://127.0.0.1:${port}/values/prod.yaml`;
        repo = path.join(tmp, "repo");
        const files: Record<string, string> = {
            "apps/ledger.yaml": APP(url),
            "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
            "chart/templates/stack.yaml":
                'apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: {{ .Values.stackName | default "own" }}}\nspec: {stack: org/x/dev}\n',
        };
        writeFiles(repo, files);
    });
    after(async () => {
        await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    /** The launcher's check of the repository (async: this process serves the value file meanwhile). */
    function check(extraCa: string | undefined): Promise<{ objects: string[]; notRendered: string }> {
        const env: NodeJS.ProcessEnv = { ...process.env, PKO_GUARD_SNAPSHOT: undefined };
        delete env.NODE_EXTRA_CA_CERTS;
        delete env.PKO_GUARD_EXTRA_CA_CERTS;
        if (extraCa !== undefined) env.NODE_EXTRA_CA_CERTS = extraCa;
        const report = path.join(tmp, `report-${extraCa === undefined ? "none" : "ca"}.json`);
        const args = [
            "check",
            "--repository",
            "https://git.example.com/me/manifests",
            "--allow-host",
            new URL(url).host,
            "--cache-dir",
            fs.mkdtempSync(path.join(tmp, "cache-")),
            "--report",
            `json=${report}`,
            "--",
            ".",
        ];
        return new Promise((resolve) => {
            execFile(LAUNCHER, args, { env, cwd: repo, encoding: "utf8" }, (_e, stdout, stderr) => {
                const text = fs.existsSync(report) ? fs.readFileSync(report, "utf8") : "";
                const objects = [...text.matchAll(/Stack\/pulumi\/[a-z-]+/g)].map((m) => m[0]);
                resolve({ objects: [...new Set(objects)], notRendered: `${stdout}${stderr}${text}` });
            });
        });
    }

    it("fetches over TLS with the extra CA though Node did not read it at start", async () => {
        const r = await check(caFile);
        assert.deepStrictEqual(r.objects, ["Stack/pulumi/from-url"], r.notRendered);
        assert.ok(!r.notRendered.includes("could not be fetched"), r.notRendered);
    });

    it("without it, the server's certificate is not trusted: the Application fails closed", async () => {
        const r = await check(undefined);
        assert.deepStrictEqual(r.objects, [], r.notRendered);
        assert.match(r.notRendered, /valueFiles: a value file could not be fetched: [^\n]*certificate/);
    });
});
