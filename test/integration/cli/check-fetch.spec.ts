/**
 * `pko-guard check` as a user runs it on a repository whose Application takes a chart from a Helm repository on
 * loopback that this spec starts (charts packaged by the real helm): the network options, the record of what was
 * fetched in every report and with --verbose, the finding on a production Stack from a version range, and
 * --offline before and after the cache holds the chart.
 */
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_ENTRY } from "../../../support/paths";
import { TestServer, fileServer, helm, writeChart } from "../../support/source-servers";

describe("pko-guard check fetches a chart from a Helm repository on loopback", function () {
    this.timeout(180_000);
    let root: string;
    let repo: string;
    let work: string;
    let server: TestServer;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-check-fetch-"));
        repo = path.join(root, "charts");
        fs.mkdirSync(repo);
        for (const v of ["1.0.0", "1.2.0"]) helm(repo, "package", writeChart(root, "ledger", v), "-d", repo);
        server = await fileServer(repo);
        helm(repo, "repo", "index", ".", "--url", server.url);
        work = path.join(root, "work");
        fs.mkdirSync(path.join(work, "apps"), { recursive: true });
        fs.writeFileSync(
            path.join(work, "apps", "ledger.yaml"),
            `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ledger, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: "${server.url}", chart: ledger, targetRevision: "1.x"}\n  destination: {server: "https://kubernetes.default.svc", namespace: pulumi}\n`,
        );
    });
    after(async () => {
        await server?.close();
        fs.rmSync(root, { recursive: true, force: true });
    });

    // Run without blocking this process: the chart repository answers from it.
    const check = (...args: string[]) =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
            const base = ["check", ".", "--repository", "https://git.example.com/me/work"];
            const child = spawn(
                process.execPath,
                [CLI_ENTRY, ...base, "--cache-dir", path.join(root, "cache"), ...args],
                {
                    cwd: work,
                    env: { ...process.env, GITHUB_ACTIONS: "", NO_COLOR: "1" },
                },
            );
            let out = "";
            let err = "";
            child.stdout.on("data", (c: Buffer) => (out += c.toString()));
            child.stderr.on("data", (c: Buffer) => (err += c.toString()));
            child.on("close", (code) => resolve({ code, out, err }));
        });
    const allow = () => ["--allow-host", `127.0.0.1:${server.port}`];

    it("keeps today's finding with --offline and an empty cache", async () => {
        const r = await check("--offline");
        assert.strictEqual(r.code, 1, r.err);
        // Said once, in the argocd-app-rendered finding; stderr does not repeat it.
        assert.strictEqual(r.err, "");
        assert.match(r.out, /argocd-app-rendered/);
        const reason =
            'spec.source is chart "ledger" from a Helm repository, which check does not read (it uses no network)';
        assert.ok(r.out.replace(/\s+/g, " ").includes(reason), r.out);
    });

    it("refuses loopback without --allow-host: the fail-closed finding, one line", async () => {
        const r = await check();
        assert.strictEqual(r.code, 1, r.err);
        assert.strictEqual(r.err, "");
        assert.match(r.out, /argocd-app-rendered/);
        const reason = `spec.source could not be fetched: ${server.url}/index.yaml: refused, plain http:// (list the host with --allow-host to fetch it without TLS)`;
        assert.ok(r.out.replace(/\s+/g, " ").includes(reason), r.out);
    });

    it("judges the chart's Stack, records the source in every report and with --verbose", async () => {
        const r = await check(...allow(), "-v", "--report", "json=r.json", "--report", "sarif=r.sarif");
        assert.strictEqual(r.code, 1, r.err + r.out);
        const source = {
            kind: "helm",
            url: `${server.url}#ledger`,
            ref: "1.x",
            resolved: "1.2.0",
            floating: true,
            fromCache: false,
        };
        const json = JSON.parse(fs.readFileSync(path.join(work, "r.json"), "utf8"));
        const listed = json.projects[0].sources;
        assert.strictEqual(listed?.length, 1, r.err);
        assert.deepStrictEqual({ ...listed[0], digest: undefined }, { ...source, digest: undefined });
        assert.match(listed[0].digest, /^sha256:[0-9a-f]{64}$/);
        const sarif = JSON.parse(fs.readFileSync(path.join(work, "r.sarif"), "utf8"));
        assert.deepStrictEqual(sarif.runs[0].properties.fetchedSources, listed);
        assert.match(
            r.err,
            new RegExp(
                `^pko-guard: fetched helm ${server.url}#ledger 1\\.x -> 1\\.2\\.0 \\(sha256:[0-9a-f]{64}, floating\\)$`,
                "m",
            ),
        );
        const pinned = json.projects[0].findings.filter(
            (f: { rule: string }) => f.rule === "pko-stack-prod-pinned-commit",
        );
        assert.strictEqual(pinned.length, 1);
        assert.match(
            pinned[0].message,
            /read from http:\/\/127\.0\.0\.1:\d+#ledger at "1\.x", resolved to 1\.2\.0, a reference that can move/,
        );
        assert.strictEqual(pinned[0].file, `${server.url}#ledger@1.2.0/templates/stack.yaml`);
        const uri = sarif.runs[0].results.find((x: { ruleId: string }) => x.ruleId === "pko-stack-prod-pinned-commit")
            .locations[0].physicalLocation.artifactLocation.uri;
        assert.strictEqual(uri, `${server.url}#ledger@1.2.0/templates/stack.yaml`);
    });

    it("reads the cache with --offline once it holds the chart, reaching nothing", async () => {
        await check(...allow());
        server.seen.length = 0;
        const r = await check("--offline", "--report", "json=o.json");
        assert.strictEqual(r.code, 1, r.err);
        assert.strictEqual(server.seen.length, 0);
        const listed = JSON.parse(fs.readFileSync(path.join(work, "o.json"), "utf8")).projects[0].sources;
        assert.strictEqual(listed[0].fromCache, true);
        assert.strictEqual(listed[0].resolved, "1.2.0");
    });

    it("takes allow-hosts from .pko-guard.yaml, refuses a bad one in one line, and prints the settings", async () => {
        fs.writeFileSync(path.join(work, ".pko-guard.yaml"), `allow-hosts: ["127.0.0.1:${server.port}"]\n`);
        try {
            const printed = await check("--print-config");
            assert.match(
                printed.out,
                new RegExp(`^allow-hosts +127\\.0\\.0\\.1:${server.port} \\(\\.pko-guard\\.yaml\\)$`, "m"),
            );
            assert.match(printed.out, /^network +fetches remote sources \(default\)$/m);
            assert.strictEqual((await check()).code, 1);
            fs.writeFileSync(path.join(work, ".pko-guard.yaml"), 'allow-hosts: ["http://x/"]\n');
            const bad = await check();
            assert.strictEqual(bad.code, 2);
            assert.strictEqual(
                bad.err,
                'pko-guard: .pko-guard.yaml: "allow-hosts": item 1 is not a host or host:port\n',
            );
        } finally {
            fs.rmSync(path.join(work, ".pko-guard.yaml"));
        }
    });
});
