/**
 * A chart from a Helm chart repository (HTTP), pulled by the real helm (`helm pull --repo ... --version ... --untar`,
 * Helm's own version resolution, as Argo CD's repo server runs it).
 * Helm can reach only a loopback server of ours (its proxy variables point at a closed port) that serves `index.yaml`
 * with chart URLs rewritten to itself and each archive fetched under the network policy and checked against the index's
 * digest, so every byte helm reads came through the policy. Credentials are sent by our server to the repository's host
 * only, never given to helm.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as path from "path";
import { isMap, isScalar, isSeq, parseDocument, visit } from "yaml";
import { exec } from "../../support/process";
import { extended } from "../../support/shapes";
import { DEAD_PROXIES, findTool } from "../render/tools";
import { firstErrorLine } from "../render/tool-errors";
import { authFor, helmRepoCredential } from "./source-credentials";
import { Budget, FetchError, policyGet } from "./http-client";
import { FetchPolicy, shownUrl } from "./network-policy";

interface Served {
    url: string;
    digest?: string;
    version: string;
}

/** The index with each chart URL rewritten to `base/charts/<n>.tgz`; `table[n]` is what it stands for. */
function rewriteIndex(text: string, repoUrl: string, base: string, table: Served[]): string {
    const doc = parseDocument(text, { uniqueKeys: false });
    if (doc.errors.length > 0) throw new FetchError(`${shownUrl(repoUrl)}: index.yaml is not valid YAML`);
    const entries = isMap(doc.contents) ? doc.contents.get("entries", true) : undefined;
    if (!isMap(entries)) throw new FetchError(`${shownUrl(repoUrl)}: index.yaml has no entries`);
    visit(entries, {
        Map(_, entry) {
            const urls = entry.get("urls", true);
            if (!isSeq(urls)) return;
            const version = String(entry.get("version") ?? "");
            const digest = entry.get("digest");
            urls.items.forEach((item, i) => {
                const raw = isScalar(item) ? String(item.value) : "";
                let abs: string;
                try {
                    abs = new URL(raw, `${repoUrl.replace(/\/+$/, "")}/`).href;
                } catch {
                    return;
                }
                // A digest of digits alone reads as a number: its text is still the digest.
                const text = typeof digest === "string" || typeof digest === "number" ? String(digest) : undefined;
                table.push({ url: abs, version, digest: text });
                urls.items[i] = doc.createNode(`${base}/charts/${table.length - 1}.tgz`);
            });
            return visit.SKIP;
        },
    });
    return doc.toString();
}

/** The loopback server helm pulls from; what it served and the first thing that went wrong. */
async function serveRepository(policy: FetchPolicy, repoUrl: string, budget: Budget) {
    const table: Served[] = [];
    const state: { error?: string; served?: { version: string; digest: string } } = {};
    const auth = authFor(helmRepoCredential(repoUrl));
    const server = http.createServer((req, res) => {
        const fail = (e: unknown) => {
            state.error ??= e instanceof FetchError ? e.message : `${shownUrl(repoUrl)}: the fetch failed`;
            res.writeHead(502).end();
        };
        const u = req.url ?? "";
        if (u === "/index.yaml") {
            policyGet(policy, `${repoUrl.replace(/\/+$/, "")}/index.yaml`, { budget, auth })
                .then((a) => res.writeHead(200).end(rewriteIndex(a.body.toString("utf8"), repoUrl, base, table)))
                .catch(fail);
            return;
        }
        const m = /^\/charts\/(\d+)\.tgz$/.exec(u);
        const entry = m ? table[Number(m[1])] : undefined;
        if (!entry) return void res.writeHead(404).end();
        policyGet(policy, entry.url, { budget, auth })
            .then((a) => {
                const digest = crypto.createHash("sha256").update(a.body).digest("hex");
                if (entry.digest && entry.digest.toLowerCase() !== digest)
                    throw new FetchError(
                        `${shownUrl(entry.url)}: digest mismatch (the index says sha256:${entry.digest.slice(0, 64)}, the archive is sha256:${digest})`,
                    );
                state.served = { version: entry.version, digest: `sha256:${digest}` };
                res.writeHead(200, { "content-type": "application/gzip" }).end(a.body);
            })
            .catch(fail);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    return {
        base,
        state,
        close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
    };
}

/** A helm that reaches nothing but our server: every proxy at a closed port, its homes empty temporary folders. */
export function helmEnv(home: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const k of ["PATH", "HOME", "LANG"]) if (process.env[k] !== undefined) env[k] = process.env[k];
    return extended(extended(env, DEAD_PROXIES), {
        HELM_CACHE_HOME: path.join(home, "cache"),
        HELM_CONFIG_HOME: path.join(home, "config"),
        HELM_DATA_HOME: path.join(home, "data"),
        HELM_REGISTRY_CONFIG: path.join(home, "registry.json"),
        HELM_REPOSITORY_CONFIG: path.join(home, "repositories.yaml"),
        HELM_REPOSITORY_CACHE: path.join(home, "cache", "repository"),
    });
}

/**
 * Pulls `chart` at `version` (an exact version, a constraint, or empty for the newest stable one) from the chart
 * repository `repoUrl` into `into/<chart>` by the real helm; the version it resolved to and the archive's digest.
 */
export async function helmPull(
    policy: FetchPolicy,
    repoUrl: string,
    chart: string,
    version: string,
    into: string,
): Promise<{ version: string; digest: string; dir: string }> {
    const shown = shownUrl(repoUrl);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(chart)) throw new FetchError(`${shown}: not a chart name`);
    const helm = findTool("helm");
    if (!helm) throw new FetchError(`${shown}: pulling chart ${chart} needs helm, which is not installed`);
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const repo = await serveRepository(policy, repoUrl, budget);
    const home = path.join(into, ".helm");
    fs.mkdirSync(home, { recursive: true });
    try {
        const args = ["pull", chart, "--repo", repo.base, "--destination", into, "--untar", "--untardir", "tree"];
        if (version !== "") args.push("--version", version);
        const r = await exec(helm.path, args, {
            cwd: into,
            env: helmEnv(home),
            timeoutMs: Math.max(1, budget.left()),
        });
        if (repo.state.error) throw new FetchError(repo.state.error);
        if (r.timedOut) throw new FetchError(`${shown}: chart ${chart}: no answer within the time limit`);
        if (r.code !== 0 || !repo.state.served)
            throw new FetchError(
                `${shown}: chart ${chart}${version ? ` version ${JSON.stringify(version)}` : ""}: helm pull failed: ${firstErrorLine(r.stderr.split(repo.base).join(shown))}`,
            );
        return extended(repo.state.served, { dir: path.join(into, "tree", chart) });
    } finally {
        await repo.close();
        fs.rmSync(home, { recursive: true, force: true });
    }
}
