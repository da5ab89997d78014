/**
 * Installed as a registry user installs it: `npm run pack:all`'s tarballs (the package and this machine's platform
 * package, built here for the host only) published to a real npm registry (verdaccio, on loopback, its storage in
 * this spec's temporary folder; packages other than pko-guard's come through it from the npm registry npm
 * itself uses), then `npm install pko-guard` into a project outside the repository on a PATH with no Go, and
 * `npx pko-guard check` over repositories with a kustomization: the verdicts need kustomize, which comes prebuilt
 * from the platform package, checked against its checksum, and a damaged binary is refused.
 */
import * as assert from "assert";
import { ChildProcess, execFileSync, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT } from "../../../support/paths";
import { platformKey } from "../../../support/prebuilt";
import { onPath } from "../../../support/toolchain";

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string })
    .version;
const PLATFORM_PACKAGE = `@pko-guard/${platformKey()}`;

/** PATH without any folder that holds a `go` (and without Go's own folder). */
function pathWithoutGo(): string {
    return ["/usr/bin", "/bin", path.dirname(process.execPath)]
        .filter((d, i, all) => all.indexOf(d) === i && !fs.existsSync(path.join(d, "go")))
        .join(path.delimiter);
}

/** Starts verdaccio on an ephemeral loopback port; resolves with its URL once it listens. */
function startRegistry(root: string): Promise<{ url: string; child: ChildProcess }> {
    const storage = path.join(root, "storage");
    fs.mkdirSync(storage, { recursive: true });
    const upstream = execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim();
    const config = path.join(root, "config.yaml");
    fs.writeFileSync(
        config,
        [
            `storage: ${JSON.stringify(storage)}`,
            `auth: { htpasswd: { file: ${JSON.stringify(path.join(root, "htpasswd"))} } }`,
            `uplinks: { upstream: { url: ${JSON.stringify(upstream)} } }`,
            "packages:",
            "  'pko-guard': { access: $all, publish: $authenticated }",
            "  '@pko-guard/*': { access: $all, publish: $authenticated }",
            "  '**': { access: $all, proxy: upstream }",
            // A platform package holds ~90 MB of binaries (~30 MB packed): above verdaccio's default 10 MB.
            "max_body_size: 200mb",
            "log: { type: stdout, format: json, level: warn }",
            "",
        ].join("\n"),
    );
    const script =
        "const {runServer}=require(process.argv[1]);runServer(process.argv[2]).then((app)=>{" +
        "const s=app.listen(0,'127.0.0.1',()=>process.stdout.write(`listening ${s.address().port}\\n`));});";
    const child = spawn(process.execPath, ["-e", script, require.resolve("verdaccio"), config], {
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
    });
    return new Promise((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (d: Buffer) => {
            out += d.toString();
            const m = /^listening (\d+)$/m.exec(out);
            if (m) resolve({ url: `http://127.0.0.1:${m[1]}/`, child });
        });
        child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
        child.on("exit", (code) => reject(new Error(`verdaccio exited (${code}): ${out}`)));
    });
}

describe("installed from a registry: prebuilt tools, no Go", function () {
    this.timeout(1800000);
    let root: string;
    let registry: { url: string; child: ChildProcess } | undefined;
    let project: string;
    let env: NodeJS.ProcessEnv;
    const run = (cmd: string, args: string[], cwd: string) =>
        spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 16 << 20 });

    before(async () => {
        root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-registry-")));
        const dist = path.join(root, "dist");
        const packed = spawnSync(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", path.join(REPO_ROOT, "release", "pack-all.ts"), "--host"].concat([
                "--out",
                dist,
            ]),
            { cwd: REPO_ROOT, encoding: "utf8" },
        );
        assert.strictEqual(packed.status, 0, packed.stderr);
        const tarballs = fs.readdirSync(dist).filter((f) => f.endsWith(".tgz"));
        assert.deepStrictEqual(tarballs.sort(), [
            `pko-guard-${VERSION}.tgz`,
            `pko-guard-${platformKey()}-${VERSION}.tgz`,
        ]);

        registry = await startRegistry(path.join(root, "registry"));
        const res = await fetch(`${registry.url}-/user/org.couchdb.user:tester`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: "tester", password: "registry-spec-only" }),
        });
        const { token } = (await res.json()) as { token: string };
        const npmrc = path.join(root, "npmrc");
        const host = registry.url.replace(/^http:/, "");
        fs.writeFileSync(npmrc, `registry=${registry.url}\n${host}:_authToken=${token}\nfund=false\naudit=false\n`);

        // The user's side: a PATH with no Go, a cache folder of its own, npm configured for this registry.
        project = path.join(root, "project");
        fs.mkdirSync(project);
        fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "user-project", private: true }));
        env = {
            ...process.env,
            PATH: pathWithoutGo(),
            NPM_CONFIG_USERCONFIG: npmrc,
            PKO_GUARD_CACHE_DIR: path.join(root, "user-cache"),
            NO_COLOR: "1",
        };
        delete env.PKO_GUARD_TOOLCHAIN_BIN;
        assert.strictEqual(onPath("go", env.PATH), undefined, `go on ${env.PATH}`);
        for (const t of tarballs) {
            const r = run("npm", ["publish", "--ignore-scripts", path.join(dist, t)], root);
            assert.strictEqual(r.status, 0, r.stderr);
        }
        const r = run("npm", ["install", "--prefer-offline", "pko-guard"], project);
        assert.strictEqual(r.status, 0, r.stderr);
    });

    after(() => {
        if (registry?.child.pid) process.kill(-registry.child.pid, "SIGKILL");
        if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    it("installs the platform package beside pko-guard, with each tool's licence and notices", () => {
        const pkg = path.join(project, "node_modules", ...PLATFORM_PACKAGE.split("/"));
        for (const tool of ["kustomize", "helm", "jsonnet", "jsonnet-deps", "appset-template"])
            assert.ok(fs.statSync(path.join(pkg, "bin", tool)).mode & 0o111, `${tool} is not executable`);
        const notices = fs.readFileSync(path.join(pkg, "THIRD_PARTY_NOTICES.md"), "utf8");
        assert.match(notices, /^## kustomize v5\.8\.2$/m);
        assert.match(notices, /^- sigs\.k8s\.io\/kustomize\/api v\d/m);
        assert.ok(fs.existsSync(path.join(pkg, "licenses", "helm.sh", "helm", "v3@v3.22.0", "LICENSE")));
        const manifest = JSON.parse(
            fs.readFileSync(path.join(project, "node_modules", "pko-guard", "toolchain", "prebuilt.json"), "utf8"),
        ) as { platforms: Record<string, { tools: Record<string, { sha256: string }> }> };
        assert.match(manifest.platforms[platformKey()].tools.kustomize.sha256, /^[0-9a-f]{64}$/);
    });

    it("npx pko-guard check renders kustomizations with the prebuilt kustomize: a blocking finding, then a pass", () => {
        // The repositories sit in the project, so npx runs the project's pko-guard (never one it would fetch).
        for (const fixture of ["gitops-kustomize-overlay", "gitops-kustomize-overlay-governed"]) {
            const repo = path.join(project, fixture);
            fs.cpSync(path.join(REPO_ROOT, "fixtures", fixture, "manifests"), repo, { recursive: true });
        }
        const check = (repo: string) =>
            run(
                "npx",
                [
                    "pko-guard",
                    "check",
                    "--repo-root",
                    ".",
                    "--repository",
                    "https://github.com/myorg/ledger-manifests.git",
                    ".",
                ],
                path.join(project, repo),
            );
        // The overlay's patch moves the pinned Stack to a branch: only a real kustomize build shows it.
        const bad = check("gitops-kustomize-overlay");
        assert.doesNotMatch(bad.stderr, /npm warn exec/);
        assert.strictEqual(bad.status, 1, bad.stderr);
        assert.match(bad.stdout, /^BLOCKING {2}pko-stack-prod-pinned-commit \[high\]$/m);
        assert.match(bad.stdout, /resource: Stack\/pulumi\/ledger-production/);
        assert.match(bad.stdout, /spec\.branch/);
        const good = check("gitops-kustomize-overlay-governed");
        assert.strictEqual(good.status, 0, good.stdout + good.stderr);
        // Verified once, remembered in the user's cache; nothing built, nothing written into node_modules.
        assert.ok(fs.readdirSync(path.join(root, "user-cache", "verified")).length >= 1);
        assert.ok(!fs.existsSync(path.join(root, "user-cache", "toolchain", "bin", "kustomize")));
        assert.ok(!fs.existsSync(path.join(project, "node_modules", "pko-guard", ".cache")));
    });

    it("a prebuilt tool that no longer matches its checksum is refused in one line, never run", () => {
        const kustomize = path.join(project, "node_modules", ...PLATFORM_PACKAGE.split("/"), "bin", "kustomize");
        fs.appendFileSync(kustomize, "\n");
        const r = run(
            "npx",
            [
                "pko-guard",
                "check",
                "--repo-root",
                ".",
                "--repository",
                "https://github.com/myorg/ledger-manifests.git",
                ".",
            ],
            path.join(project, "gitops-kustomize-overlay"),
        );
        assert.doesNotMatch(r.stderr, /npm warn exec/);
        assert.strictEqual(r.status, 2, r.stdout + r.stderr);
        const lines = r.stderr.trim().split("\n");
        assert.strictEqual(lines.length, 1, r.stderr);
        assert.match(lines[0], /prebuilt kustomize \(.*\) does not match its checksum/);
    });
});
