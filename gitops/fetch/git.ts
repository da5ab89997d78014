/**
 * A git repository at a revision, fetched by the real git (as Argo CD's repo server and kustomize fetch), held to the
 * network policy.
 * Git reaches the network only through the policy proxy (./proxy.ts), with `protocol.allow=never` but https (and http
 * to listed hosts), or for an ssh remote through the policy's relay (./ssh-relay.ts), none of the user's
 * configuration but credential settings (and ssh's own), no symlinks, hooks or submodules. The
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
import { FetchPolicy, refusedUrl, shownUrl, sshRemote } from "./network-policy";
import { REPO_ROOT } from "../../support/paths";
import { startPolicyProxy } from "./proxy";
import { isCommit } from "./fetched-source";
import { MAX_TAGS, pickSemverTag, tagsOf } from "./git-semver";

/** The relay every ssh connection of git goes through (tsc's output of ./ssh-relay.ts). */
export const SSH_RELAY = path.join(REPO_ROOT, "bin", "gitops", "fetch", "ssh-relay.js");

/** A word for the shell (git runs GIT_SSH_COMMAND, and ssh a ProxyCommand, through one). */
function shellWord(s: string): string {
    return `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * How git runs ssh for an ssh remote: its connection made by the policy's relay (its ProxyCommand, given first so
 * that no ProxyCommand or ProxyJump of the user's ssh configuration replaces it), never a prompt, a host key checked
 * against the user's known hosts (or the file PKO_GUARD_SSH_KNOWN_HOSTS names), nothing forwarded. The user's keys
 * (their agent, their ssh configuration) authenticate, as git's own ssh would.
 */
function sshEnv(policy: FetchPolicy, refusedFile: string): NodeJS.ProcessEnv {
    const relay = `${shellWord(process.execPath)} ${shellWord(SSH_RELAY)} %h %p`;
    const options = [
        `ProxyCommand=${relay}`,
        "BatchMode=yes",
        "StrictHostKeyChecking=yes",
        "UpdateHostKeys=no",
        "ControlMaster=no",
        "ControlPath=none",
        "ClearAllForwardings=yes",
        "ForwardAgent=no",
        "ForwardX11=no",
        "PermitLocalCommand=no",
    ];
    const knownHosts = process.env.PKO_GUARD_SSH_KNOWN_HOSTS;
    if (knownHosts) options.push(`UserKnownHostsFile=${knownHosts}`);
    const relayPolicy = { allowHosts: policy.allowHosts, limits: policy.limits };
    return {
        GIT_SSH_COMMAND: ["ssh", ...options.flatMap((o) => ["-o", shellWord(o)])].join(" "),
        GIT_SSH_VARIANT: "ssh",
        PKO_GUARD_SSH_POLICY: JSON.stringify(relayPolicy),
        PKO_GUARD_SSH_REFUSED: refusedFile,
    };
}

/** ssh's own reasons, said plainly (its lines can name the user's files); undefined for any other. */
function sshWhy(stderr: string): string | undefined {
    if (/Host key verification failed/i.test(stderr))
        return "ssh does not know the server's host key (add it to your known hosts, ~/.ssh/known_hosts or the file PKO_GUARD_SSH_KNOWN_HOSTS names)";
    if (/Permission denied \(/i.test(stderr))
        return "the server refused your ssh keys (those of your ssh agent and ssh configuration)";
    return undefined;
}

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
    const kept = ["PATH", "HOME", "USER", "LANG", "GIT_ASKPASS", "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO"];
    for (const k of [...kept, "SSH_AUTH_SOCK"]) if (process.env[k] !== undefined) env[k] = process.env[k];
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

const GIT_CONFIG = (proxy: string, ssh: boolean) => [
    "-c",
    "protocol.allow=never",
    ...(ssh ? ["-c", "protocol.ssh.allow=always"] : []),
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
    const ssh = sshRemote(url) !== undefined;
    const refusedFile = path.join(home, "ssh-refused");
    const sshRefused = () => (fs.existsSync(refusedFile) ? fs.readFileSync(refusedFile, "utf8") : undefined);
    try {
        const env = extended(await gitEnv(proxy.url, home), ssh ? sshEnv(policy, refusedFile) : {});
        const git = async (args: string[], what: string): Promise<string> => {
            const left = budget.left();
            if (left <= 0) throw new FetchError(`${shown}: ran out of time (${what})`);
            const r = await exec("git", [...GIT_CONFIG(proxy.url, ssh), `--git-dir=${gitDir}`, ...args], {
                cwd: home,
                env,
                timeoutMs: left,
            });
            if (r.timedOut) throw new FetchError(`${shown}: no answer within the time limit (${what})`);
            if (r.code !== 0) {
                const why =
                    proxy.refused() ??
                    sshRefused() ??
                    (ssh ? sshWhy(r.stderr) : undefined) ??
                    firstErrorLine(r.stderr.replace(/^fatal: /m, "Error: "));
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
            if (!isCommit(want) || proxy.refused() !== undefined || sshRefused() !== undefined) throw e;
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
        [
            ...GIT_CONFIG(proxyUrl, sshRemote(url) !== undefined),
            `--git-dir=${gitDir}`,
            "ls-remote",
            "--tags",
            "--refs",
            url,
        ],
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
