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
import { helm, registry, writeChart } from "../../../support/source-servers";

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

    it("sends Docker's credential to the registry's own host, and says when it is missing or refused", async () => {
        const url = `oci://127.0.0.1:${locked.port}/charts/ledger`;
        fs.rmSync(path.join(process.env.DOCKER_CONFIG!, "config.json"), { force: true });
        await rejects(fetchOci(url, "1.0.0", policy([locked.port])), /asks for credentials/);
        dockerAuth(locked.port, "robot", "wrong");
        await rejects(fetchOci(url, "1.0.0", policy([locked.port])), /refused the credentials/);
        dockerAuth(locked.port, "robot", "s3cr3t");
        assert.strictEqual((await fetchOci(url, "1.0.0", policy([locked.port]))).resolved, "1.0.0");
    });
});
