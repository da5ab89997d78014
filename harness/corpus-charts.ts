/**
 * Loopback stand-ins for the chart repositories a corpus entry's snapshot names (`served` in corpus.json): the
 * corpus has no network, so each folder of chart sources is packaged by the real helm, indexed by
 * `helm repo index`, and served over HTTP on 127.0.0.1 for as long as one run of `check` lasts. The run reaches it
 * as check reaches any chart repository (under the network policy, the port listed with `--allow-host`).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as path from "path";
import { ToolError } from "../support/errors";
import { findTool } from "../gitops/render/tools";

/** A chart repository an entry names (`url`), stood in for by the chart sources of its folder `charts`. */
export interface CorpusServed {
    url: string;
    charts: string;
}

/** How a run reaches the stand-ins: each upstream URL with its loopback URL, and the `--allow-host` values. */
export interface CorpusNetwork {
    urls: { upstream: string; local: string }[];
    allowHosts: string[];
}

function helm(home: string, ...args: string[]): void {
    const tool = findTool("helm");
    if (!tool)
        throw new ToolError("helm is not installed: run npm run setup (the corpus packages its stand-in charts)");
    const r = spawnSync(tool.path, args, {
        encoding: "utf8",
        env: {
            PATH: process.env.PATH,
            HOME: home,
            HELM_CACHE_HOME: home,
            HELM_CONFIG_HOME: home,
            HELM_DATA_HOME: home,
        },
    });
    if (r.status !== 0) throw new ToolError(`helm ${args[0]}: ${(r.stderr ?? "").split("\n")[0]}`);
}

/** Serves the files of `root` on 127.0.0.1 (GET only; 404 for anything else). */
async function fileServer(root: string): Promise<{ port: number; close(): Promise<void> }> {
    const sockets = new Set<net.Socket>();
    const server = http.createServer((req, res) => {
        const p = path.join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
        const inside = p.startsWith(root + path.sep) && fs.existsSync(p) && fs.statSync(p).isFile();
        if (req.method !== "GET" || !inside) return void res.writeHead(404).end();
        res.writeHead(200).end(fs.readFileSync(p));
    });
    server.on("connection", (s) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        port: (server.address() as net.AddressInfo).port,
        close: () =>
            new Promise<void>((resolve) => {
                for (const s of sockets) s.destroy();
                server.close(() => resolve());
            }),
    };
}

/** Packages and serves the entry's stand-ins under `root` (a folder the caller owns and removes); stop with close. */
export async function serveCorpusCharts(
    entryDir: string,
    served: CorpusServed[],
    root: string,
): Promise<{ network: CorpusNetwork; close(): Promise<void> }> {
    const servers: { port: number; close(): Promise<void> }[] = [];
    const close = async () => void (await Promise.all(servers.map((s) => s.close())));
    try {
        const urls: CorpusNetwork["urls"] = [];
        for (const [i, s] of served.entries()) {
            const charts = path.join(entryDir, s.charts);
            const repo = path.join(root, `charts-${i}`);
            fs.mkdirSync(repo, { recursive: true });
            for (const name of fs.readdirSync(charts).sort())
                helm(path.join(root, "helm-home"), "package", path.join(charts, name), "-d", repo);
            helm(path.join(root, "helm-home"), "repo", "index", repo);
            const server = await fileServer(repo);
            servers.push(server);
            urls.push({ upstream: s.url, local: `http://127.0.0.1:${server.port}` });
        }
        return { network: { urls, allowHosts: servers.map((s) => `127.0.0.1:${s.port}`) }, close };
    } catch (e) {
        await close();
        throw e;
    }
}
