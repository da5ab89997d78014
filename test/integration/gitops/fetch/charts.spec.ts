/**
 * Charts from a Helm chart repository on loopback that this spec starts: charts packaged by the real helm, the
 * index made by `helm repo index`, served as files. Proves version constraints resolve as helm resolves them,
 * digests are checked, hostile archives and indexes are refused, and helm itself reaches nothing but the policy.
 */
import * as assert from "assert";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FetchError, fetchChart } from "../../../../gitops/fetch/fetch";
import { fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { TestServer, fileServer, helm, tarGz, writeChart } from "../../../support/source-servers";

describe("gitops/fetch charts from a Helm repository on loopback", function () {
    this.timeout(120_000);
    let root: string;
    let repo: string;
    let server: TestServer;
    let other: TestServer;
    let n = 0;
    const policy = (allow: string[]) => fetchPolicy({ allowHosts: allow, cacheDir: path.join(root, `cache-${n++}`) });
    const host = (s: TestServer) => `127.0.0.1:${s.port}`;
    const rejects = async (work: Promise<unknown>, message: RegExp) =>
        assert.rejects(work, (e: Error) => {
            assert.ok(e instanceof FetchError, `a FetchError, not ${e}`);
            assert.match(e.message, message);
            assert.ok(!e.message.includes("\n"), "one line");
            return true;
        });

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-charts-spec-"));
        repo = path.join(root, "repo");
        fs.mkdirSync(repo);
        for (const v of ["1.0.0", "1.2.0", "1.3.0-rc.1", "2.0.0"])
            helm(repo, "package", writeChart(root, "ledger", v), "-d", repo);
        server = await fileServer(repo);
        other = await fileServer(repo);
        helm(repo, "repo", "index", ".", "--url", server.url);
    });

    after(async () => {
        await Promise.all([server?.close(), other?.close()]);
        fs.rmSync(root, { recursive: true, force: true });
    });

    beforeEach(() => {
        for (const s of [server, other]) {
            s.seen.length = 0;
            s.hook = undefined;
        }
    });

    it("pulls an exact version, its digest the archive's", async () => {
        const got = await fetchChart(server.url, "ledger", "1.0.0", policy([host(server)]));
        assert.strictEqual(got.resolved, "1.0.0");
        assert.ok(!got.floating);
        const sha = crypto
            .createHash("sha256")
            .update(fs.readFileSync(path.join(repo, "ledger-1.0.0.tgz")))
            .digest("hex");
        assert.strictEqual(got.digest, `sha256:${sha}`);
        assert.ok(fs.readFileSync(path.join(got.path, "templates", "stack.yaml"), "utf8").includes("kind: Stack"));
    });

    it("resolves a constraint as helm does: the newest stable version that satisfies it", async () => {
        const p = policy([host(server)]);
        assert.strictEqual((await fetchChart(server.url, "ledger", "^1.0.0", p)).resolved, "1.2.0");
        assert.strictEqual((await fetchChart(server.url, "ledger", "", p)).resolved, "2.0.0");
        assert.strictEqual((await fetchChart(server.url, "ledger", ">=1.3.0-0 <2", p)).resolved, "1.3.0-rc.1");
        const floating = await fetchChart(server.url, "ledger", "1.x", p);
        assert.ok(floating.floating);
    });

    it("says a missing version or chart in one line", async () => {
        const p = policy([host(server)]);
        await rejects(
            fetchChart(server.url, "ledger", "9.9.9", p),
            /chart ledger version "9\.9\.9": helm pull failed: .*not found/,
        );
        await rejects(fetchChart(server.url, "nothing", "", p), /chart nothing: helm pull failed: .*not found/);
    });

    it("refuses an archive that is not the one the index names", async () => {
        const index = fs.readFileSync(path.join(repo, "index.yaml"), "utf8");
        server.hook = (req, res) => {
            if (req.url !== "/index.yaml") return false;
            res.end(index.replace(/digest: [0-9a-f]{64}/g, `digest: ${"ab".repeat(32)}`));
            return true;
        };
        await rejects(
            fetchChart(server.url, "ledger", "1.0.0", policy([host(server)])),
            /digest mismatch \(the index says sha256:(ab){32}, the archive is sha256:[0-9a-f]{64}\)/,
        );
    });

    it("never lets helm reach a chart URL the policy refuses, an absolute one in the index included", async () => {
        const index = fs.readFileSync(path.join(repo, "index.yaml"), "utf8");
        server.hook = (req, res) => {
            if (req.url !== "/index.yaml") return false;
            res.end(index.split(server.url).join(other.url));
            return true;
        };
        await rejects(fetchChart(server.url, "ledger", "1.0.0", policy([host(server)])), /refused, plain http:\/\//);
        assert.strictEqual(other.seen.length, 0, "the host not listed is never reached");
    });

    it("refuses loopback without --allow-host, before connecting", async () => {
        await rejects(fetchChart(server.url, "ledger", "1.0.0", policy([])), /refused, plain http:\/\//);
        await rejects(
            fetchChart(`https://127.0.0.1:${server.port}`, "ledger", "1.0.0", policy([])),
            /refused, a loopback address/,
        );
        assert.strictEqual(server.seen.length, 0);
    });

    it("refuses hostile archives: a path out of the chart, a symbolic link", async () => {
        const chart = "apiVersion: v2\nname: evil\nversion: 1.0.0\n";
        const archives: Record<string, Buffer> = {
            "slip-1.0.0.tgz": tarGz([
                { name: "slip/Chart.yaml", body: chart.replace("evil", "slip") },
                { name: "slip/../../../escaped.yaml", body: "x: 1\n" },
            ]),
            "link-1.0.0.tgz": tarGz([
                { name: "link/Chart.yaml", body: chart.replace("evil", "link") },
                { name: "link/templates/passwd.yaml", link: "/etc/passwd" },
            ]),
        };
        const digest = (b: Buffer) => crypto.createHash("sha256").update(b).digest("hex");
        const index =
            "apiVersion: v1\nentries:\n" +
            Object.entries(archives)
                .map(
                    ([file, body]) =>
                        `  ${file.split("-")[0]}:\n  - apiVersion: v2\n    name: ${file.split("-")[0]}\n    version: 1.0.0\n    digest: ${digest(body)}\n    urls: [${file}]\n`,
                )
                .join("");
        server.hook = (req, res) => {
            const name = (req.url ?? "").slice(1);
            if (name === "index.yaml") return (res.end(index), true);
            if (archives[name]) return (res.end(archives[name]), true);
            return false;
        };
        const p = policy([host(server)]);
        await rejects(
            fetchChart(server.url, "slip", "1.0.0", p),
            /chart slip version "1\.0\.0": helm pull failed: chart illegally references parent directory/,
        );
        assert.ok(!fs.existsSync(path.join(root, "escaped.yaml")));
        for (const dir of fs.readdirSync(root)) assert.ok(!fs.existsSync(path.join(root, dir, "escaped.yaml")));
        const link = await fetchChart(server.url, "link", "1.0.0", p).then(
            (got) => got.path,
            (e: Error) => e,
        );
        if (typeof link === "string") {
            // helm writes the link entry as an empty regular file: nothing of /etc/passwd is in the tree.
            const f = path.join(link, "templates", "passwd.yaml");
            assert.ok(!fs.existsSync(f) || !fs.lstatSync(f).isSymbolicLink());
            assert.ok(!fs.existsSync(f) || !fs.readFileSync(f, "utf8").includes("root:"));
        } else assert.match(link.message, /link/);
    });
});
