/**
 * The fetch layer against real servers on loopback that this spec starts: a git server (git's own http-backend)
 * and plain HTTP servers that answer as hostile or broken servers do. Every case names the fault and the one line
 * it must give; none reaches beyond this machine (the policy refuses anything else, which is what is tested).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { FetchError, fetchGit, fetchSource } from "../../../../gitops/fetch/fetch";
import { Budget, policyGet } from "../../../../gitops/fetch/http-client";
import { FetchLimits, FetchPolicy, fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { authFor, helmRepoCredential } from "../../../../gitops/fetch/source-credentials";
import { TestServer, fileServer, gitServer, makeRepository } from "../../../support/source-servers";

describe("gitops/fetch against loopback servers", function () {
    this.timeout(60_000);
    let root: string;
    let git: TestServer;
    let files: TestServer;
    let other: TestServer;
    let commit: string;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-fetch-spec-"));
        const repos = path.join(root, "repos");
        commit = makeRepository(repos, "apps", {
            "base/kustomization.yaml": "resources: [stack.yaml]\n",
            "base/stack.yaml": "apiVersion: pulumi.com/v1\nkind: Stack\nmetadata: {name: ledger}\n",
        });
        fs.symlinkSync("/etc/passwd", path.join(repos, "apps", "base", "passwd"));
        spawnSync("git", ["-C", path.join(repos, "apps"), "add", "-A"]);
        spawnSync("git", [
            "-C",
            path.join(repos, "apps"),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "link",
        ]);
        commit = spawnSync("git", ["-C", path.join(repos, "apps"), "rev-parse", "HEAD"], {
            encoding: "utf8",
        }).stdout.trim();
        const many: Record<string, string> = {};
        for (let i = 0; i < 30; i++) many[`f${i}.yaml`] = `n: ${i}\n`;
        makeRepository(repos, "many", many);
        git = await gitServer(repos);
        const served = path.join(root, "served");
        fs.mkdirSync(served);
        fs.writeFileSync(path.join(served, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
        files = await fileServer(served);
        other = await fileServer(served);
    });

    after(async () => {
        await Promise.all([git?.close(), files?.close(), other?.close()]);
        fs.rmSync(root, { recursive: true, force: true });
    });

    beforeEach(() => {
        for (const s of [git, files, other]) {
            s.seen.length = 0;
            s.hook = undefined;
        }
    });

    let n = 0;
    const policy = (allow: string[], limits: Partial<FetchLimits> = {}, more: Partial<FetchPolicy> = {}) =>
        Object.assign(fetchPolicy({ allowHosts: allow, cacheDir: path.join(root, `cache-${n++}`), limits }), more);
    const rejects = async (work: Promise<unknown>, message: RegExp) => {
        await assert.rejects(work, (e: Error) => {
            assert.ok(e instanceof FetchError, `a FetchError, not ${e}`);
            assert.match(e.message, message);
            assert.ok(!e.message.includes("\n"), "one line");
            return true;
        });
    };
    const host = (s: TestServer) => `127.0.0.1:${s.port}`;

    it("fetches a branch by the real git, resolved to its commit, with no symbolic link checked out", async () => {
        const got = await fetchGit(`${git.url}/apps`, "main", policy([host(git)]));
        assert.strictEqual(got.resolved, commit);
        assert.ok(got.floating);
        assert.match(got.digest, /^git-tree:[0-9a-f]{40}$/);
        assert.ok(fs.readFileSync(path.join(got.path, "base", "stack.yaml"), "utf8").includes("kind: Stack"));
        assert.ok(!fs.lstatSync(path.join(got.path, "base", "passwd")).isSymbolicLink());
        assert.ok(!fs.existsSync(path.join(got.path, ".git")));
    });

    it("answers a commit from the cache, and --offline from the cache only", async () => {
        const p = policy([host(git)]);
        const first = await fetchGit(`${git.url}/apps`, commit, p);
        assert.strictEqual(first.fromCache, false);
        const again = await fetchGit(`${git.url}/apps`, commit, p);
        assert.strictEqual(again.fromCache, true);
        assert.strictEqual(again.path, first.path);
        git.seen.length = 0;
        const offline = await fetchGit(`${git.url}/apps`, commit, Object.assign({}, p, { offline: true }));
        assert.strictEqual(offline.path, first.path);
        assert.strictEqual(git.seen.length, 0, "offline reaches nothing");
        await rejects(
            fetchGit(`${git.url}/apps`, "other", Object.assign({}, p, { offline: true })),
            /not in the cache, and --offline fetches nothing/,
        );
    });

    it("keys the cache by the whole URL: one that differs only by its query is another entry", async () => {
        files.hook = (req, res) => {
            const env = new URL(req.url ?? "/", "http://x").searchParams.get("env");
            if (env === null) return false;
            res.writeHead(200).end(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${env}}\n`);
            return true;
        };
        const p = policy([host(files)]);
        const offline = Object.assign({}, p, { offline: true });
        const staging = await fetchSource({ kind: "file", url: `${files.url}/cm.yaml?env=staging` }, p);
        assert.match(fs.readFileSync(path.join(staging.path, "cm.yaml"), "utf8"), /name: staging/);
        assert.strictEqual(staging.url, `${files.url}/cm.yaml`, "the query is never shown or recorded");
        files.seen.length = 0;
        // Offline, the cache answers the URL it holds, and not another query of it.
        const again = await fetchSource({ kind: "file", url: `${files.url}/cm.yaml?env=staging` }, offline);
        assert.strictEqual(again.path, staging.path);
        await rejects(
            fetchSource({ kind: "file", url: `${files.url}/cm.yaml?env=production` }, offline),
            /cm\.yaml: not in the cache, and --offline fetches nothing/,
        );
        assert.strictEqual(files.seen.length, 0, "offline reaches nothing");
        // Online, the other query is fetched and kept on its own; each answers its own content offline.
        const production = await fetchSource({ kind: "file", url: `${files.url}/cm.yaml?env=production` }, p);
        assert.notStrictEqual(production.path, staging.path);
        assert.match(fs.readFileSync(path.join(production.path, "cm.yaml"), "utf8"), /name: production/);
        for (const [env, got] of [
            ["staging", staging],
            ["production", production],
        ] as const) {
            const cached = await fetchSource({ kind: "file", url: `${files.url}/cm.yaml?env=${env}` }, offline);
            assert.strictEqual(cached.path, got.path);
            assert.match(fs.readFileSync(path.join(cached.path, "cm.yaml"), "utf8"), new RegExp(`name: ${env}`));
        }
    });

    it("refuses loopback without --allow-host, before connecting", async () => {
        await rejects(
            fetchGit(`https://127.0.0.1:${git.port}/apps`, "main", policy([])),
            /refused, a loopback address/,
        );
        await rejects(
            fetchSource({ kind: "file", url: `https://localhost:${files.port}/cm.yaml` }, policy([])),
            /localhost \(127\.0\.0\.1\): refused, a loopback address; list the host with --allow-host localhost:/,
        );
        await rejects(fetchGit(`${git.url}/apps`, "main", policy([])), /refused, plain http:\/\//);
        assert.strictEqual(git.seen.length + files.seen.length, 0);
    });

    it("refuses a redirect to the metadata address and to a host not listed, and counts redirects", async () => {
        files.hook = (req, res) => {
            if (req.url === "/meta") res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
            else if (req.url === "/other") res.writeHead(301, { location: `https://127.0.0.1:${other.port}/cm.yaml` });
            else if (req.url?.startsWith("/loop")) res.writeHead(307, { location: `/loop${req.url.length}` });
            else return false;
            res.end();
            return true;
        };
        const p = policy([host(files)]);
        await rejects(
            fetchSource({ kind: "file", url: `${files.url}/meta` }, p),
            /http:\/\/169\.254\.169\.254\/latest\/meta-data\/: refused, plain http:\/\/ .*\(redirected from/,
        );
        await rejects(policyGet(p, `${files.url}/meta`, { budget: new Budget(1 << 20, 10_000) }), /refused/);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/other` }, p), /refused, a loopback address/);
        assert.strictEqual(other.seen.length, 0, "the host not listed is never reached");
        await rejects(fetchSource({ kind: "file", url: `${files.url}/loop` }, p), /more than 5 redirects/);
    });

    it("holds git to the policy on a redirect: to the metadata address, or to loopback not listed", async () => {
        git.hook = (req, res) => {
            if (!req.url?.startsWith("/moved/")) return false;
            const to = req.url.includes("meta") ? "http://169.254.169.254/latest" : `http://127.0.0.1:${other.port}/x`;
            res.writeHead(302, { location: `${to}${req.url.replace(/^\/moved\/[a-z]+/, "")}` }).end();
            return true;
        };
        const p = policy([host(git)]);
        await rejects(
            fetchGit(`${git.url}/moved/meta`, "main", p),
            /169\.254\.169\.254\/latest.*: refused, plain http:\/\//,
        );
        await rejects(
            fetchGit(`${git.url}/moved/loop`, "main", p),
            new RegExp(`127\\.0\\.0\\.1:${other.port}/x.*: refused`),
        );
        assert.strictEqual(other.seen.length, 0, "the host not listed is never reached");
    });

    it("stops an endless answer at the byte limit and a silent server at the time limit", async () => {
        files.hook = (req, res) => {
            if (req.url === "/endless") {
                res.writeHead(200);
                const chunk = Buffer.alloc(64 * 1024, 120);
                const more = () => {
                    while (res.write(chunk));
                };
                res.on("drain", more);
                more();
                return true;
            }
            if (req.url === "/declared") {
                res.writeHead(200, { "content-length": String(1 << 30) });
                res.write("x");
                return true;
            }
            if (req.url === "/silent") return true; // never answers
            return false;
        };
        const p = policy([host(files)], { maxBytes: 1 << 20, timeoutMs: 2_000 });
        await rejects(fetchSource({ kind: "file", url: `${files.url}/endless` }, p), /larger than the fetch limit/);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/declared` }, p), /larger than the fetch limit/);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/silent` }, p), /no complete answer within/);
    });

    it("says 404, refused credentials and a missing repository in one line", async () => {
        files.hook = (req, res) => {
            if (req.url === "/private") return (res.writeHead(401).end(), true);
            if (req.url === "/forbidden") return (res.writeHead(403).end(), true);
            return false;
        };
        const p = policy([host(files), host(git)]);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/nope.yaml` }, p), /nope\.yaml: not found \(404\)/);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/private` }, p), /asks for credentials/);
        await rejects(fetchSource({ kind: "file", url: `${files.url}/forbidden` }, p), /refused access \(403\)/);
        await rejects(fetchGit(`${git.url}/missing`, "main", p), /missing: .*not found/);
        await rejects(fetchGit(`${git.url}/apps`, "no-such-branch", p), /apps: /);
    });

    it("never takes or echoes credentials in a URL", async () => {
        const p = policy([host(files), host(git)]);
        for (const work of [
            fetchSource({ kind: "file", url: `http://user:s3cr3t-token@127.0.0.1:${files.port}/cm.yaml` }, p),
            fetchGit(`http://user:s3cr3t-token@127.0.0.1:${git.port}/apps`, "main", p),
        ])
            await assert.rejects(work, (e: Error) => {
                assert.match(e.message, /holds credentials/);
                assert.ok(!e.message.includes("s3cr3t"), e.message);
                return true;
            });
        assert.strictEqual(files.seen.length + git.seen.length, 0);
    });

    it("sends Helm's repository credential to its own host only, never across a redirect", async () => {
        const config = path.join(root, "repositories.yaml");
        fs.writeFileSync(
            config,
            `repositories:\n- name: r\n  url: ${files.url}/charts\n  username: robot\n  password: s3cr3t\n`,
        );
        const cred = helmRepoCredential(`${files.url}/charts/`, { HELM_REPOSITORY_CONFIG: config });
        assert.ok(cred);
        files.hook = (req, res) => {
            if (req.url !== "/charts/index.yaml") return false;
            res.writeHead(302, { location: `${other.url}/cm.yaml` }).end();
            return true;
        };
        const p = policy([host(files), host(other)]);
        const a = await policyGet(p, `${files.url}/charts/index.yaml`, {
            budget: new Budget(1 << 20, 10_000),
            auth: authFor(cred),
        });
        assert.strictEqual(a.status, 200);
        assert.strictEqual(files.seen[0].auth, `Basic ${Buffer.from("robot:s3cr3t").toString("base64")}`);
        assert.strictEqual(other.seen.length, 1);
        assert.strictEqual(other.seen[0].auth, undefined, "the credential does not follow the redirect");
    });

    it("refuses a server whose certificate is not trusted", async function () {
        const dir = path.join(root, "tls");
        fs.mkdirSync(dir);
        const r = spawnSync("openssl", [
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            path.join(dir, "key.pem"),
            "-out",
            path.join(dir, "cert.pem"),
        ]);
        if (r.status !== 0) throw new Error("openssl could not make a certificate");
        const server = https.createServer(
            { key: fs.readFileSync(path.join(dir, "key.pem")), cert: fs.readFileSync(path.join(dir, "cert.pem")) },
            (_req, res) => res.end("x"),
        );
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        const port = (server.address() as net.AddressInfo).port;
        try {
            await rejects(
                fetchSource({ kind: "file", url: `https://127.0.0.1:${port}/x.yaml` }, policy([`127.0.0.1:${port}`])),
                /TLS failed: the server's certificate is not trusted/,
            );
        } finally {
            server.close();
        }
    });

    it("refuses a tree over the file limit before checking it out", async () => {
        await rejects(
            fetchGit(`${git.url}/many`, "main", policy([host(git)], { maxFiles: 10 })),
            /30 files, more than the fetch limit \(10\)/,
        );
    });
});
