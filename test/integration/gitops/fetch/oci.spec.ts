/**
 * Charts from a real OCI registry on loopback that this spec starts (distribution's registry, built by
 * `bash toolchain/install.sh oci-registry`), pushed by the real helm: tags resolved as helm resolves them, the
 * manifest's digest recorded, loopback refused without --allow-host, credentials from Docker's config sent to the
 * registry's own host, and missing or refused ones one line.
 */
import * as assert from "assert";
import { ChildProcess } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FetchError, fetchOci } from "../../../../gitops/fetch/fetch";
import { fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { TestServer, fileServer, helm, registry, writeChart } from "../../../support/source-servers";

describe("gitops/fetch charts from an OCI registry on loopback", function () {
    this.timeout(120_000);
    let root: string;
    let open: { port: number; child: ChildProcess };
    let locked: { port: number; child: ChildProcess };
    const saved = process.env.DOCKER_CONFIG;
    let n = 0;
    const policy = (ports: number[]) =>
        fetchPolicy({ allowHosts: ports.map((p) => `127.0.0.1:${p}`), cacheDir: path.join(root, `cache-${n++}`) });
    const rejects = (work: Promise<unknown>, message: RegExp) =>
        assert.rejects(work, (e: Error) => {
            assert.ok(e instanceof FetchError, `a FetchError, not ${e}`);
            assert.match(e.message, message);
            assert.ok(!e.message.includes("\n") && !e.message.includes("s3cr3t"), e.message);
            return true;
        });

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-oci-spec-"));
        open = await registry();
        locked = await registry({ name: "robot", password: "s3cr3t" });
        for (const v of ["1.0.0", "1.2.0", "2.0.0"]) {
            helm(root, "package", writeChart(root, "ledger", v), "-d", root);
            helm(
                root,
                "push",
                path.join(root, `ledger-${v}.tgz`),
                `oci://127.0.0.1:${open.port}/charts`,
                "--plain-http",
            );
        }
        helm(
            root,
            "registry",
            "login",
            `127.0.0.1:${locked.port}`,
            "--username",
            "robot",
            "--password",
            "s3cr3t",
            "--insecure",
        );
        helm(
            root,
            "push",
            path.join(root, "ledger-1.0.0.tgz"),
            `oci://127.0.0.1:${locked.port}/charts`,
            "--plain-http",
        );
        process.env.DOCKER_CONFIG = path.join(root, "docker");
        fs.mkdirSync(process.env.DOCKER_CONFIG);
    });

    after(() => {
        if (saved === undefined) delete process.env.DOCKER_CONFIG;
        else process.env.DOCKER_CONFIG = saved;
        open?.child.kill("SIGKILL");
        locked?.child.kill("SIGKILL");
        fs.rmSync(root, { recursive: true, force: true });
    });

    const dockerAuth = (port: number, user: string, password: string) =>
        fs.writeFileSync(
            path.join(process.env.DOCKER_CONFIG!, "config.json"),
            JSON.stringify({
                auths: { [`127.0.0.1:${port}`]: { auth: Buffer.from(`${user}:${password}`).toString("base64") } },
            }),
        );

    it("pulls an exact version and resolves a constraint as helm does, recording the manifest's digest", async () => {
        const p = policy([open.port]);
        const exact = await fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "1.0.0", p);
        assert.strictEqual(exact.resolved, "1.0.0");
        assert.match(exact.digest, /^sha256:[0-9a-f]{64}$/);
        assert.ok(fs.readFileSync(path.join(exact.path, "templates", "stack.yaml"), "utf8").includes("kind: Stack"));
        assert.strictEqual(
            (await fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "^1.0.0", p)).resolved,
            "1.2.0",
        );
        assert.strictEqual((await fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "", p)).resolved, "2.0.0");
    });

    it("refuses loopback without --allow-host and says a missing version or chart in one line", async () => {
        await rejects(
            fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "1.0.0", policy([])),
            /refused, a loopback address/,
        );
        const p = policy([open.port]);
        await rejects(fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "9.9.9", p), /ledger/);
        await rejects(fetchOci(`oci://127.0.0.1:${open.port}/charts/nothing`, "1.0.0", p), /nothing/);
    });

    it("a registry that fails is asked once: helm is told the failure is final, and does not retry it", async () => {
        const broken = await fileServer(root);
        broken.hook = (req, res) => (req.url === "/v2/" ? false : (res.writeHead(500).end(), true));
        try {
            await rejects(
                fetchOci(`oci://127.0.0.1:${broken.port}/charts/ledger`, "1.0.0", policy([broken.port])),
                /127\.0\.0\.1/,
            );
            const asked = broken.seen.filter((r) => r.path.startsWith("/v2/charts/ledger/"));
            assert.deepStrictEqual(
                asked.map((r) => r.path),
                ["/v2/charts/ledger/manifests/1.0.0"],
            );
        } finally {
            await broken.close();
        }
    });

    it("sends Docker's credential to the registry's own host, and says when it is missing or refused", async () => {
        const url = `oci://127.0.0.1:${locked.port}/charts/ledger`;
        fs.rmSync(path.join(process.env.DOCKER_CONFIG!, "config.json"), { force: true });
        await rejects(fetchOci(url, "1.0.0", policy([locked.port])), /asks for credentials/);
        dockerAuth(locked.port, "robot", "wrong");
        await rejects(fetchOci(url, "1.0.0", policy([locked.port])), /refused the credentials/);
        dockerAuth(locked.port, "robot", "s3cr3t");
        assert.strictEqual((await fetchOci(url, "1.0.0", policy([locked.port]))).resolved, "1.0.0");
    });

    /** Docker's config.json in the spec's DOCKER_CONFIG. */
    const dockerConfig = (config: object) =>
        fs.writeFileSync(path.join(process.env.DOCKER_CONFIG!, "config.json"), JSON.stringify(config));

    it("runs Docker's credential helpers (credHelpers, credsStore) for the registry's host only", async () => {
        // A helper as Docker runs it: `docker-credential-<name> get`, the server on stdin; it logs what it is asked.
        const bin = path.join(root, "helpers");
        const asked = path.join(root, "asked.log");
        fs.mkdirSync(bin, { recursive: true });
        fs.writeFileSync(
            path.join(bin, "docker-credential-pkotest"),
            `#!/bin/sh\nread key\necho "$1 $key" >> "${asked}"\nif [ "$key" = "127.0.0.1:${locked.port}" ]; then echo '{"ServerURL":"'$key'","Username":"robot","Secret":"s3cr3t"}'; else echo "credentials not found in native keychain"; exit 1; fi\n`,
            { mode: 0o755 },
        );
        const savedPath = process.env.PATH;
        process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
        try {
            const url = `oci://127.0.0.1:${locked.port}/charts/ledger`;
            dockerConfig({ credHelpers: { [`127.0.0.1:${locked.port}`]: "pkotest", "other.example": "pkotest" } });
            assert.strictEqual((await fetchOci(url, "1.0.0", policy([locked.port]))).resolved, "1.0.0");
            dockerConfig({ credsStore: "pkotest", auths: { [`127.0.0.1:${locked.port}`]: {} } });
            assert.strictEqual((await fetchOci(url, "1.0.0", policy([locked.port]))).resolved, "1.0.0");
            // The open registry's host is asked of the store too; the helper has nothing for it, so none is sent.
            dockerConfig({ credsStore: "pkotest" });
            assert.strictEqual(
                (await fetchOci(`oci://127.0.0.1:${open.port}/charts/ledger`, "1.0.0", policy([open.port]))).resolved,
                "1.0.0",
            );
            assert.ok(!open.child.killed);
            // A helper named by a path is never run.
            dockerConfig({ credHelpers: { [`127.0.0.1:${locked.port}`]: "../helpers/docker-credential-pkotest" } });
            await rejects(fetchOci(url, "1.0.0", policy([locked.port])), /asks for credentials/);
            assert.deepStrictEqual(fs.readFileSync(asked, "utf8").split("\n").filter(Boolean), [
                `get 127.0.0.1:${locked.port}`,
                `get 127.0.0.1:${locked.port}`,
                `get 127.0.0.1:${open.port}`,
            ]);
        } finally {
            process.env.PATH = savedPath;
        }
    });

    it("sends the credential to a token service on another host only when Docker would trust it", async () => {
        // A registry whose challenge names a token service on another host (another port of loopback here): the
        // registry gets its credential, the token service is asked without it.
        let tokens: TestServer | undefined;
        let reg: TestServer | undefined;
        try {
            tokens = await fileServer(root);
            tokens.hook = (req, res) => (res.writeHead(200).end(JSON.stringify({ token: "t0ken" })), true);
            reg = await fileServer(root);
            const realm = `${tokens.url}/token`;
            reg.hook = (req, res) => {
                if (req.headers.authorization === "Bearer t0ken") res.writeHead(404).end();
                else
                    res.writeHead(401, {
                        "www-authenticate": `Bearer realm="${realm}",service="reg",scope="repository:charts/ledger:pull"`,
                    }).end();
                return true;
            };
            dockerConfig({
                auths: { [`127.0.0.1:${reg.port}`]: { auth: Buffer.from("robot:s3cr3t").toString("base64") } },
            });
            await rejects(
                fetchOci(`oci://127.0.0.1:${reg.port}/charts/ledger`, "1.0.0", policy([reg.port, tokens.port])),
                /./,
            );
            assert.ok(tokens.seen.length > 0, "the token service was asked");
            assert.deepStrictEqual(
                tokens.seen.map((r) => r.auth),
                tokens.seen.map(() => undefined),
            );
            assert.ok(reg.seen.some((r) => r.auth?.startsWith("Basic ")));
        } finally {
            await Promise.all([tokens?.close(), reg?.close()]);
        }
    });
});
