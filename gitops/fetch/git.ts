/**
 * A git repository at a revision, fetched by the real git (as Argo CD's repo server and kustomize fetch), held to the
 * network policy.
 * Git reaches the network only through the policy proxy (./proxy.ts), with `protocol.allow=never` but https (and http
 * to listed hosts), none of the user's configuration but credential settings, no symlinks, hooks or submodules. The
 * tree is bounded in files before checkout, and in bytes and time by the fetch's budget.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { exec } from "../../support/process";
import { extended } from "../../support/shapes";
import { onPath } from "../../support/toolchain";
import { firstErrorLine } from "../render/tool-errors";
import { Budget, FetchError } from "./http-client";
import { FetchPolicy, refusedUrl, shownUrl } from "./network-policy";
import { startPolicyProxy } from "./proxy";
import { isCommit } from "./fetched-source";
import { MAX_TAGS, pickSemverTag, tagsOf } from "./git-semver";

/** What git runs with: the proxy everywhere, nothing of the user's configuration but their credential settings. */
async function gitEnv(proxy: string, home: string): Promise<NodeJS.ProcessEnv> {
    // The user's credential settings (helpers, username), read from their configuration, are all that is kept of it.
    const creds = await exec("git", ["config", "--get-regexp", "^credential\\."], {
        cwd: os.tmpdir(),
        env: process.env,
        timeoutMs: 10_000,
    });
    const lines = creds.code === 0 ? creds.stdout.split("\n").filter((l) => l.trim() !== "") : [];
    const global = path.join(home, "gitconfig");
    fs.writeFileSync(global, "");
    for (const l of lines) {
        const sp = l.indexOf(" ");
        if (sp < 0) continue;
        await exec("git", ["config", "--file", global, "--add", l.slice(0, sp), l.slice(sp + 1)], {
            cwd: home,
            env: process.env,
            timeoutMs: 10_000,
        });
    }
    const env: NodeJS.ProcessEnv = {};
    for (const k of ["PATH", "HOME", "USER", "LANG", "GIT_ASKPASS", "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO"])
        if (process.env[k] !== undefined) env[k] = process.env[k];
    return extended(env, {
        GIT_CONFIG_GLOBAL: global,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_TERMINAL_PROMPT: "0",
        GIT_PROTOCOL_FROM_USER: "0",
        http_proxy: proxy,
        https_proxy: proxy,
        HTTPS_PROXY: proxy,
        HTTP_PROXY: proxy,
        ALL_PROXY: proxy,
        all_proxy: proxy,
        NO_PROXY: "",
        no_proxy: "",
    });
}

const GIT_CONFIG = (proxy: string) => [
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.https.allow=always",
    "-c",
    "protocol.http.allow=always",
    "-c",
    `http.proxy=${proxy}`,
    "-c",
    "http.sslVerify=true",
    "-c",
    "http.followRedirects=initial",
    "-c",
    "core.symlinks=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "fetch.recurseSubmodules=false",
    "-c",
    "advice.detachedHead=false",
];

/**
 * Fetches `ref` (a branch, a tag, a full commit hash, or `HEAD`/empty for the default branch; with `semver`, a
 * range of tags, ./git-semver.ts) of `url` into `into` (a new folder), checked out without `.git`; the commit it
 * resolved to and its tree's id.
 */
export async function gitCheckout(
    policy: FetchPolicy,
    url: string,
    ref: string,
    into: string,
    semver = false,
): Promise<{ commit: string; tree: string }> {
    const shown = shownUrl(url);
    const refused = refusedUrl(policy, url);
    if (refused !== undefined) throw new FetchError(`${shown}: refused, ${refused}`);
    if (!onPath("git")) throw new FetchError(`${shown}: fetching a git repository needs git, which is not installed`);
    const budget = new Budget(policy.limits.maxBytes, policy.limits.timeoutMs);
    const proxy = await startPolicyProxy(policy, budget);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-git-"));
    const gitDir = path.join(home, "repo.git");
    try {
        const env = await gitEnv(proxy.url, home);
        const git = async (args: string[], what: string): Promise<string> => {
            const left = budget.left();
            if (left <= 0) throw new FetchError(`${shown}: ran out of time (${what})`);
            const r = await exec("git", [...GIT_CONFIG(proxy.url), `--git-dir=${gitDir}`, ...args], {
                cwd: home,
                env,
                timeoutMs: left,
            });
            if (r.timedOut) throw new FetchError(`${shown}: no answer within the time limit (${what})`);
            if (r.code !== 0) {
                const why = proxy.refused() ?? firstErrorLine(r.stderr.replace(/^fatal: /m, "Error: "));
                throw new FetchError(`${shown}: ${why.startsWith(shown) ? why.slice(shown.length + 2) : why}`);
            }
            return r.stdout.trim();
        };
        await git(["init", "--bare", "-q"], "init");
        const want = semver
            ? await semverTag(ref, shown, budget, env, proxy.url, gitDir, home, url, git)
            : ref === "" || ref === "HEAD"
              ? "HEAD"
              : ref;
        try {
            await git(["fetch", "--depth=1", "--no-tags", "-q", url, want], `fetch ${want}`);
        } catch (e) {
            // A commit the server does not let one ask for directly: every branch and tag, then the commit.
            if (!isCommit(want) || proxy.refused() !== undefined) throw e;
            await git(["fetch", "--no-tags", "-q", url, "+refs/heads/*:refs/h/*", "+refs/tags/*:refs/t/*"], "fetch");
        }
        const commit = await git(
            ["rev-parse", "--verify", `${isCommit(want) ? want : "FETCH_HEAD"}^{commit}`],
            "resolve",
        );
        const tree = await git(["rev-parse", `${commit}^{tree}`], "resolve");
        const files = (await git(["ls-tree", "-r", "--name-only", "-z", commit], "list"))
            .split("\0")
            .filter((f) => f !== "").length;
        if (files > policy.limits.maxFiles)
            throw new FetchError(`${shown}: ${files} files, more than the fetch limit (${policy.limits.maxFiles})`);
        fs.mkdirSync(into, { recursive: true });
        await git([`--work-tree=${into}`, "checkout", "-q", "-f", commit, "--", "."], "checkout");
        return { commit: commit.toLowerCase(), tree };
    } finally {
        await proxy.close();
        fs.rmSync(home, { recursive: true, force: true });
    }
}

/**
 * The tag ref (`refs/tags/<tag>`) a semver `range` checks out: the remote's tags listed (at most MAX_TAGS, read
 * whole), the highest matching one chosen by flux-build; of tags tied on version, the newest commit's, each fetched
 * to read its committer date (equal dates: which one Flux takes is not defined, so it fails).
 */
async function semverTag(
    range: string,
    shown: string,
    budget: Budget,
    env: NodeJS.ProcessEnv,
    proxyUrl: string,
    gitDir: string,
    home: string,
    url: string,
    git: (args: string[], what: string) => Promise<string>,
): Promise<string> {
    let listing = "";
    let over = false;
    const r = await exec(
        "git",
        [...GIT_CONFIG(proxyUrl), `--git-dir=${gitDir}`, "ls-remote", "--tags", "--refs", url],
        {
            cwd: home,
            env,
            timeoutMs: Math.max(1, budget.left()),
            keepStdout: false,
            onStdout: (d) => {
                if (listing.length > MAX_TAGS * 200) over = true;
                else listing += d.toString();
            },
        },
    );
    if (r.timedOut) throw new FetchError(`${shown}: no answer within the time limit (list tags)`);
    if (r.code !== 0) throw new FetchError(`${shown}: ${firstErrorLine(r.stderr.replace(/^fatal: /m, "Error: "))}`);
    const tags = tagsOf(listing);
    if (over || tags.length > MAX_TAGS)
        throw new FetchError(`${shown}: more than ${MAX_TAGS} tags, which check does not read`);
    const picked = await pickSemverTag(shown, range, tags, budget.left());
    if (picked.tied.length <= 1) return `refs/tags/${picked.tag}`;
    let newest: { tag: string; time: number; tie: boolean } | undefined;
    for (const tag of picked.tied) {
        await git(["fetch", "--depth=1", "--no-tags", "-q", url, `refs/tags/${tag}`], `fetch ${tag}`);
        const time = Number(await git(["show", "-s", "--format=%ct", "FETCH_HEAD^{commit}"], "resolve"));
        if (!newest || time > newest.time) newest = { tag, time, tie: false };
        else if (time === newest.time) newest.tie = true;
    }
    if (!newest || newest.tie)
        throw new FetchError(
            `${shown}: semver ${JSON.stringify(range)}: tags ${picked.tied.map((t) => JSON.stringify(t)).join(", ")} are the same version and commit date, so which one Flux checks out is not known`,
        );
    return `refs/tags/${newest.tag}`;
}
