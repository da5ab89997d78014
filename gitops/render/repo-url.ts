/**
 * Which repository a GitOps source reads (an Argo CD Application's `repoURL`, a Flux GitRepository's `spec.url`):
 * `check` reads a source from the checked repository only when its URL is this repository (the `origin` remote, or
 * a URL the user declares as the same repository); otherwise it is fetched or fails closed. `targetRevision` is not read: the working tree is what CI checked out. URLs are
 * compared beyond Argo CD's `NormalizeGitURL`, across schemes (HTTPS and SSH reach one repository): host in lower
 * case without user or default port, path without trailing `/` or `.git`, its case kept (a server may tell `Repo`
 * from `repo`).
 */

const DEFAULT_PORTS: Record<string, string> = { "https:": "443", "http:": "80", "ssh:": "22", "git:": "9418" };

/** `host/path` of a git repository URL (the comparison key), or undefined when it is not one. */
export function normalizeRepoUrl(raw: string): string | undefined {
    let text = raw.trim();
    if (text === "") return undefined;
    // The scp form `[user@]host:path` (no scheme; a colon before any slash), as git reads it.
    const scp = /^(?:[^@/:]+@)?([^@/:]+):(?!\/\/)(.+)$/.exec(text);
    if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `ssh://${scp[1]}/${scp[2].replace(/^\/+/, "")}`;
    let url: URL;
    try {
        url = new URL(text.replace(/^git\+ssh:/i, "ssh:").replace(/^ssh\+git:/i, "ssh:"));
    } catch {
        return undefined;
    }
    if (!["https:", "http:", "ssh:", "git:", "file:"].includes(url.protocol)) return undefined;
    const host = url.hostname.toLowerCase();
    const port = url.port !== "" && url.port !== DEFAULT_PORTS[url.protocol] ? `:${url.port}` : "";
    let repoPath = decodeURIComponent(url.pathname).replace(/\/+$/, "");
    if (repoPath.toLowerCase().endsWith(".git")) repoPath = repoPath.slice(0, -".git".length);
    repoPath = repoPath.replace(/\/+$/, "").replace(/^\/+/, "");
    if (url.protocol !== "file:" && (host === "" || repoPath === "")) return undefined;
    return `${url.protocol === "file:" ? "file://" : ""}${host}${port}/${repoPath}`;
}

/** The repository `check` judges: the URLs that name it (normalized), and where each came from. */
export interface CheckedRepository {
    /** Each URL that names this repository, as given, with where it came from (`origin remote`, a file, a flag). */
    urls: { url: string; from: string }[];
    /** The HEAD commit of the working tree, when it is in a git repository with one (Argo CD's ARGOCD_APP_REVISION). */
    revision?: string;
}

/** Whether `repoURL` names the checked repository. */
export function isThisRepository(repo: CheckedRepository, repoURL: string): boolean {
    const key = normalizeRepoUrl(repoURL);
    return key !== undefined && repo.urls.some((u) => normalizeRepoUrl(u.url) === key);
}

/** A URL as shown to users: without user information (a remote's URL can hold a token). */
export function shownUrl(url: string): string {
    return url.trim().replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1");
}

/**
 * Why a `repoURL` (at `field`: an Application source's, an ApplicationSet git generator's) is not read from the
 * checked repository, naming the field; undefined when it names this repository, or when the caller knows no
 * repository (the harness's fixtures are folders of this repository, not repositories of their own).
 */
export function otherRepository(
    repoURL: unknown,
    field: string,
    repository: CheckedRepository | undefined,
): string | undefined {
    if (!repository) return undefined;
    if (typeof repoURL !== "string" || repoURL.trim() === "") return `${field}.repoURL is not set`;
    if (isThisRepository(repository, repoURL)) return undefined;
    const known =
        repository.urls.length === 0 ? "; this repository's URL is not known (no origin remote, none declared)" : "";
    return `${field}.repoURL ${JSON.stringify(repoURL)} is another repository than the one checked${known}`;
}
