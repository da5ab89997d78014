/**
 * Servers on loopback that the fetch specs start and stop themselves: a git server over HTTP (git's own
 * `git http-backend` behind a small CGI bridge) and a Helm chart repository (a folder served as it is: charts
 * packaged by the real helm, the index by `helm repo index`), each with hooks a spec uses to answer as a hostile or
 * broken server would (slow, endless, redirecting, asking for credentials).
 */
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as path from "path";
import * as zlib from "zlib";
import { findTool } from "../../gitops/render/tools";
import { locateTool } from "../../support/toolchain";

/** A hook that answers a request itself (returns true) or lets the server answer it (false). */
export type Hook = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export interface TestServer {
    port: number;
    url: string;
    /** Requests received, as `METHOD path` (with the Authorization header's presence). */
    seen: { method: string; path: string; auth?: string }[];
    hook?: Hook;
    close(): Promise<void>;
}

async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<TestServer> {
    const sockets = new Set<net.Socket>();
    const t = { seen: [] } as unknown as TestServer;
    const server = http.createServer((req, res) => {
        t.seen.push({ method: req.method ?? "", path: req.url ?? "", auth: req.headers.authorization });
        if (t.hook && t.hook(req, res)) return;
        handler(req, res);
    });
    server.on("connection", (s) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.port = (server.address() as net.AddressInfo).port;
    t.url = `http://127.0.0.1:${t.port}`;
    t.close = () =>
        new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(() => resolve());
        });
    return t;
}

/** Serves the files of `root` (GET only; 404 for anything else). */
export function fileServer(root: string): Promise<TestServer> {
    return listen((req, res) => {
        const p = path.join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
        if (!p.startsWith(root) || !fs.existsSync(p) || !fs.statSync(p).isFile()) return void res.writeHead(404).end();
        res.writeHead(200).end(fs.readFileSync(p));
    });
}

/** Serves the git repositories under `root` (each `<name>.git` or a working tree) by `git http-backend`. */
export function gitServer(root: string): Promise<TestServer> {
    return listen((req, res) => {
        const u = new URL(req.url ?? "/", "http://x");
        const child = spawn("git", ["http-backend"], {
            env: {
                PATH: process.env.PATH,
                GIT_PROJECT_ROOT: root,
                GIT_HTTP_EXPORT_ALL: "1",
                GIT_CONFIG_NOSYSTEM: "1",
                GIT_CONFIG_GLOBAL: "/dev/null",
                PATH_INFO: decodeURIComponent(u.pathname),
                QUERY_STRING: u.search.replace(/^\?/, ""),
                REQUEST_METHOD: req.method ?? "GET",
                CONTENT_TYPE: req.headers["content-type"] ?? "",
                HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
                HTTP_GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
                REMOTE_ADDR: "127.0.0.1",
            },
        });
        req.pipe(child.stdin);
        let head = Buffer.alloc(0);
        let started = false;
        child.stdout.on("data", (c: Buffer) => {
            if (started) return void res.write(c);
            head = Buffer.concat([head, c]);
            const end = head.indexOf("\r\n\r\n");
            if (end < 0) return;
            started = true;
            let status = 200;
            const headers: Record<string, string> = {};
            for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
                const i = line.indexOf(":");
                const [k, v] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
                if (k.toLowerCase() === "status") status = Number(v.split(" ")[0]);
                else headers[k] = v;
            }
            res.writeHead(status, headers);
            res.write(head.subarray(end + 4));
        });
        child.on("close", () => {
            if (!started) res.writeHead(500);
            res.end();
        });
        child.on("error", () => res.destroy());
    });
}

/** Runs git in `cwd` with a fixed identity; throws with its output when it fails. */
export function git(cwd: string, ...args: string[]): string {
    const r = spawnSync("git", args, {
        cwd,
        encoding: "utf8",
        env: {
            ...process.env,
            GIT_AUTHOR_NAME: "t",
            GIT_AUTHOR_EMAIL: "t@example.com",
            GIT_COMMITTER_NAME: "t",
            GIT_COMMITTER_EMAIL: "t@example.com",
            GIT_CONFIG_NOSYSTEM: "1",
            GIT_CONFIG_GLOBAL: "/dev/null",
        },
    });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
}

/** Writes `files` (relative path -> text) under `dir`, making their folders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
    for (const [rel, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
    }
}

/** A repository `name` under `root` holding `files` (relative path -> text), committed on `main`; its commit. */
export function makeRepository(root: string, name: string, files: Record<string, string>): string {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    git(dir, "init", "-q", "-b", "main");
    writeFiles(dir, files);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "content");
    git(dir, "config", "uploadpack.allowAnySHA1InWant", "true");
    return git(dir, "rev-parse", "HEAD");
}

/** A tar entry of `tarGz`: a regular file (`body`) or a symbolic link (`link`), at any path, even one that climbs out of the archive. */
export interface TarEntry {
    name: string;
    body?: string;
    link?: string;
}

/** A gzipped ustar archive of `entries`, written byte by byte, so a spec can make archives no tool would. */
export function tarGz(entries: TarEntry[]): Buffer {
    const blocks: Buffer[] = [];
    for (const e of entries) {
        const body = Buffer.from(e.body ?? "");
        const h = Buffer.alloc(512);
        h.write(e.name, 0, 100, "utf8");
        h.write("0000644\0", 100);
        h.write("0000000\0", 108);
        h.write("0000000\0", 116);
        h.write(`${(e.link ? 0 : body.length).toString(8).padStart(11, "0")}\0`, 124);
        h.write("00000000000\0", 136);
        h.write("        ", 148);
        h.write(e.link ? "2" : "0", 156);
        if (e.link) h.write(e.link, 157, 100, "utf8");
        h.write("ustar\0" + "00", 257);
        let sum = 0;
        for (const b of h) sum += b;
        h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
        blocks.push(h);
        if (!e.link) {
            blocks.push(body);
            blocks.push(Buffer.alloc((512 - (body.length % 512)) % 512));
        }
    }
    blocks.push(Buffer.alloc(1024));
    return zlib.gzipSync(Buffer.concat(blocks));
}

/**
 * A server of this module in a process of its own (for code under test that blocks its own event loop while it
 * waits for a fetch: check's rendering is synchronous): started by `node`, ready when it prints its port.
 */
export async function serverProcess(kind: "git" | "files", root: string): Promise<TestServer> {
    const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", __filename, kind, root], {
        stdio: ["ignore", "pipe", "inherit"],
    });
    // The process prints its port, then `METHOD path` for each request it receives (into `seen`, in order).
    const seen: TestServer["seen"] = [];
    const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        let started = false;
        child.stdout.on("data", (c: Buffer) => {
            out += c.toString();
            let nl: number;
            while ((nl = out.indexOf("\n")) >= 0) {
                const line = out.slice(0, nl);
                out = out.slice(nl + 1);
                if (!started && /^\d+$/.test(line)) {
                    started = true;
                    resolve(Number(line));
                } else if (started) {
                    const [method, ...rest] = line.split(" ");
                    seen.push({ method, path: rest.join(" ") });
                }
            }
        });
        child.on("exit", () => reject(new Error(`the ${kind} server process exited`)));
    });
    return {
        port,
        url: `http://127.0.0.1:${port}`,
        seen,
        close: () =>
            new Promise<void>((resolve) => {
                child.removeAllListeners("exit");
                child.on("exit", () => resolve());
                child.kill("SIGKILL");
            }),
    };
}

/** Runs the toolchain's helm; throws with its output when it fails. */
export function helm(cwd: string, ...args: string[]): string {
    const tool = findTool("helm");
    if (!tool) throw new Error("helm is not installed: run npm run setup");
    const home = path.join(cwd, ".helm-home");
    const r = spawnSync(tool.path, args, {
        cwd,
        encoding: "utf8",
        env: {
            PATH: process.env.PATH,
            HOME: home,
            HELM_CACHE_HOME: home,
            HELM_CONFIG_HOME: home,
            HELM_DATA_HOME: home,
        },
    });
    if (r.status !== 0) throw new Error(`helm ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
}

/** A chart folder `name` at `version` whose one template is a Stack. */
export function writeChart(dir: string, name: string, version: string, stackName = "ledger"): string {
    const chart = path.join(dir, `${name}-src-${version}`, name);
    fs.mkdirSync(path.join(chart, "templates"), { recursive: true });
    fs.writeFileSync(path.join(chart, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
    fs.writeFileSync(
        path.join(chart, "templates", "stack.yaml"),
        `apiVersion: pulumi.com/v1\nkind: Stack\nmetadata:\n  name: ${stackName}\nspec:\n  stack: org/${stackName}/prod\n  projectRepo: https://github.com/org/${stackName}\n  branch: main\n`,
    );
    return chart;
}

/** A registry process (its port), with REGISTRY_USER/REGISTRY_PASSWORD when `user` is given. */
export async function registry(user?: {
    name: string;
    password: string;
}): Promise<{ port: number; child: ChildProcess }> {
    const bin = locateTool("oci-registry")?.path;
    if (!bin) throw new Error("oci-registry is not built: bash toolchain/install.sh oci-registry");
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
    if (user) Object.assign(env, { REGISTRY_USER: user.name, REGISTRY_PASSWORD: user.password });
    const child = spawn(bin, [], { env, stdio: ["ignore", "pipe", "ignore"] });
    const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (c: Buffer) => {
            out += c.toString();
            const m = /^(\d+)\n/.exec(out);
            if (m) resolve(Number(m[1]));
        });
        child.on("exit", () => reject(new Error("the registry exited")));
    });
    return { port, child };
}

/**
 * A git server over ssh on loopback (the toolchain's git-ssh-server: Flux's gittestserver) serving the repositories
 * under `repos`, its host key kept in `keys`: its port, a known_hosts line for it, and the process.
 */
export async function sshGitServer(
    repos: string,
    keys: string,
): Promise<{ port: number; knownHost: string; child: ChildProcess }> {
    const bin = locateTool("git-ssh-server")?.path;
    if (!bin) throw new Error("git-ssh-server is not built: bash toolchain/install.sh git-ssh-server");
    fs.mkdirSync(keys, { recursive: true });
    const child = spawn(bin, [repos, keys], { env: { PATH: process.env.PATH }, stdio: ["ignore", "pipe", "ignore"] });
    const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (c: Buffer) => {
            out += c.toString();
            const m = /^ssh:\/\/git@127\.0\.0\.1:(\d+)\n/.exec(out);
            if (m) resolve(Number(m[1]));
        });
        child.on("exit", () => reject(new Error("the ssh git server exited")));
    });
    const [type, key] = fs.readFileSync(path.join(keys, "gitkit.rsa.pub"), "utf8").trim().split(/\s+/);
    return { port, knownHost: `[127.0.0.1]:${port} ${type} ${key}\n`, child };
}

if (require.main === module) {
    const [kind, root] = process.argv.slice(2);
    (kind === "git" ? gitServer(root) : fileServer(root)).then(
        (s) => {
            s.hook = (req) => (process.stdout.write(`${req.method ?? ""} ${req.url ?? ""}\n`), false);
            process.stdout.write(`${s.port}\n`);
        },
        () => process.exit(1),
    );
}
