/**
 * git over ssh, against a git server over ssh on loopback that this spec starts (the toolchain's git-ssh-server,
 * Flux's gittestserver): the connection goes through the policy's relay, so loopback is refused until listed; the
 * client authenticates with a key of its own ssh agent (started here) and checks the server's host key against the
 * known hosts PKO_GUARD_SSH_KNOWN_HOSTS names; an unknown host key is one line; a kustomization's remote base over
 * ssh is fetched the same way.
 */
import * as assert from "assert";
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FetchError, fetchGit } from "../../../../gitops/fetch/fetch";
import { fetchPolicy } from "../../../../gitops/fetch/network-policy";
import { loadManifests } from "../../../../gitops/manifests/load";
import { git, makeRepository, sshGitServer } from "../../../support/source-servers";

const CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform, namespace: apps}\n";

describe("gitops/fetch git over ssh from a server on loopback", function () {
    this.timeout(120_000);
    let root: string;
    let server: { port: number; knownHost: string; child: ChildProcess };
    let agent: ChildProcess;
    let commit: string;
    let n = 0;
    const saved = { sock: process.env.SSH_AUTH_SOCK, known: process.env.PKO_GUARD_SSH_KNOWN_HOSTS };
    const policy = (allow: boolean) =>
        fetchPolicy({
            allowHosts: allow ? [`127.0.0.1:${server.port}`] : [],
            cacheDir: path.join(root, `cache-${n++}`),
            limits: { timeoutMs: 60_000 },
        });
    const url = () => `ssh://git@127.0.0.1:${server.port}/platform.git`;

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-ssh-spec-"));
        commit = makeRepository(root, "platform-src", {
            "prod/kustomization.yaml": "resources: [cm.yaml]\n",
            "prod/cm.yaml": CM,
        });
        fs.mkdirSync(path.join(root, "repos"));
        git(root, "clone", "-q", "--bare", path.join(root, "platform-src"), path.join(root, "repos", "platform.git"));
        server = await sshGitServer(path.join(root, "repos"), path.join(root, "keys"));
        fs.writeFileSync(path.join(root, "known_hosts"), server.knownHost);
        // The client's key, in an ssh agent of the spec's own (as a CI job loads its deploy key).
        const key = path.join(root, "id");
        assert.strictEqual(spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]).status, 0);
        const sock = path.join(root, "agent.sock");
        agent = spawn("ssh-agent", ["-D", "-a", sock], { stdio: "ignore" });
        while (!fs.existsSync(sock)) await new Promise((r) => setImmediate(r));
        const added = spawnSync("ssh-add", ["-q", key], { env: { ...process.env, SSH_AUTH_SOCK: sock } });
        assert.strictEqual(added.status, 0, String(added.stderr));
        process.env.SSH_AUTH_SOCK = sock;
        process.env.PKO_GUARD_SSH_KNOWN_HOSTS = path.join(root, "known_hosts");
    });
    after(() => {
        for (const [k, v] of [
            ["SSH_AUTH_SOCK", saved.sock],
            ["PKO_GUARD_SSH_KNOWN_HOSTS", saved.known],
        ] as const)
            if (v === undefined) delete process.env[k];
            else process.env[k] = v;
        server?.child.kill("SIGKILL");
        agent?.kill("SIGKILL");
        fs.rmSync(root, { recursive: true, force: true });
    });

    const rejects = (work: Promise<unknown>, message: string) =>
        assert.rejects(work, (e: Error) => {
            assert.ok(e instanceof FetchError, `a FetchError, not ${e}`);
            assert.strictEqual(e.message, message);
            return true;
        });

    it("fetches a branch through the policy's relay when the host is listed, the URL shown without its user", async () => {
        const got = await fetchGit(url(), "main", policy(true));
        assert.strictEqual(got.resolved, commit);
        assert.strictEqual(got.url, `ssh://127.0.0.1:${server.port}/platform.git`);
        assert.strictEqual(fs.readFileSync(path.join(got.path, "prod", "cm.yaml"), "utf8"), CM);
    });

    it("refuses loopback without --allow-host, in one line, before ssh says anything", async () => {
        await rejects(
            fetchGit(url(), "main", policy(false)),
            `ssh://127.0.0.1:${server.port}/platform.git: 127.0.0.1: refused, a loopback address; list the host with --allow-host 127.0.0.1:${server.port} to fetch from it`,
        );
    });

    it("says an unknown host key in one line, never connecting past it", async () => {
        fs.writeFileSync(path.join(root, "none"), "");
        process.env.PKO_GUARD_SSH_KNOWN_HOSTS = path.join(root, "none");
        try {
            await rejects(
                fetchGit(url(), "main", policy(true)),
                `ssh://127.0.0.1:${server.port}/platform.git: ssh does not know the server's host key (add it to your known hosts, ~/.ssh/known_hosts or the file PKO_GUARD_SSH_KNOWN_HOSTS names)`,
            );
        } finally {
            process.env.PKO_GUARD_SSH_KNOWN_HOSTS = path.join(root, "known_hosts");
        }
    });

    it("builds a kustomization whose remote base is an ssh remote, fetched the same way", () => {
        const repo = path.join(root, "work");
        fs.mkdirSync(path.join(repo, "app"), { recursive: true });
        fs.writeFileSync(
            path.join(repo, "app", "kustomization.yaml"),
            `resources:\n  - ssh://git@127.0.0.1:${server.port}/platform.git//prod?ref=main\n`,
        );
        const load = loadManifests(["."], { repoRoot: repo, cwd: repo, fetch: policy(true) });
        const cm = load.objects.find((o) => o.kind === "ConfigMap")!;
        assert.strictEqual(cm.file, `ssh://127.0.0.1:${server.port}/platform.git@${commit}/prod/cm.yaml`);
        assert.deepStrictEqual(
            load.fetched?.map((x) => [x.kind, x.url, x.resolved]),
            [["git", `ssh://127.0.0.1:${server.port}/platform.git`, commit]],
        );
    });
});
