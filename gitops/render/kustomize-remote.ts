/**
 * Remote bases, components and resources of a kustomization, fetched under the network policy (gitops/fetch/)
 * before `kustomize build` runs, instead of by kustomize itself (which would clone with git, or GET a file,
 * outside any policy): each remote entry is fetched into the run's scratch copy (at most MAX_DEPTH deep) and
 * rewritten to it, so kustomize reads local files only.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import {
    FetchError,
    FetchRequest,
    FetchedSource,
    fetchForRun,
    fetchedFileName,
    floatingNote,
    fromCache,
} from "../fetch/fetch";
import { RenderContext, SourceNotFetched, mappingOf } from "./render";
import { withinDeadline } from "../fetch/network-policy";

/** How deep remote bases may name remote bases. */
const MAX_DEPTH = 5;
const FIELDS = ["resources", "bases", "components"];
const KFILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/** A fetched tree (or file) in the scratch copy, and the source it came from. */
export interface LocalCopy {
    local: string;
    source: FetchedSource;
}

/** What kustomize would fetch for a remote entry (./kustomize.ts isRemoteEntry), as its repospec reads it. */
export function remoteRequest(entry: string): { req: FetchRequest; subdir: string } | { refused: string } {
    let text = entry.trim().replace(/^git::/i, "");
    if (/^git:\/\//i.test(text)) return { refused: "a git:// remote, which is not fetched (use its https:// URL)" };
    let ref = "";
    const q = text.indexOf("?");
    if (q >= 0) {
        const params = new URLSearchParams(text.slice(q + 1));
        ref = params.get("ref") ?? params.get("version") ?? "";
        text = text.slice(0, q);
    }
    // The scp form `git@host:owner/repo[.git][//dir]`: the repository is what comes before `//` (or after `.git`),
    // named as written (a path of the login's home on most servers), fetched over ssh (gitops/fetch/git.ts).
    const scp = /^([^@/:\s]+@[^@/:\s]+):(?!\/\/)(.+)$/.exec(text);
    if (scp) {
        const [, login, rest] = scp;
        const dbl = rest.indexOf("//");
        const dotGit = /^(.*?\.git)(\/.*)?$/.exec(rest);
        const [repoPath, subdir] =
            dbl >= 0 ? [rest.slice(0, dbl), rest.slice(dbl + 2)] : dotGit ? [dotGit[1], dotGit[2] ?? ""] : [rest, ""];
        return {
            req: { kind: "git", url: `${login}:${repoPath}`, ref: ref || "HEAD" },
            subdir: subdir.replace(/^\/+|\/+$/g, ""),
        };
    }
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `https://${text}`;
    let u: URL;
    try {
        u = new URL(text);
    } catch {
        return { refused: "not a URL kustomize fetches" };
    }
    // User information is kept, so that the policy refuses the URL (credentials never come from a URL).
    const user = u.username === "" ? "" : `${u.username}${u.password === "" ? "" : `:${u.password}`}@`;
    const origin = `${u.protocol}//${user}${u.host}`;
    const p = u.pathname;
    const split = (repoPath: string, subdir: string) => ({
        req: { kind: "git" as const, url: `${origin}${repoPath}`, ref: ref || "HEAD" },
        subdir: subdir.replace(/^\/+|\/+$/g, ""),
    });
    const dbl = p.indexOf("//");
    if (dbl >= 0) return split(p.slice(0, dbl), p.slice(dbl + 2));
    const dotGit = /^(.*?\.git)(\/.*)?$/.exec(p);
    if (dotGit) return split(dotGit[1], dotGit[2] ?? "");
    const m = /^(\/[^/]+\/[^/]+)(\/.*)?$/.exec(p);
    if (/^(github\.com|gitlab\.com|bitbucket\.org)$/i.test(u.hostname) && m) return split(m[1], m[2] ?? "");
    if (u.protocol === "ssh:") return split(p, "");
    return { req: { kind: "file", url: `${origin}${p}` }, subdir: "" };
}

function kustomizationIn(dir: string): string | undefined {
    for (const f of KFILES) if (fs.existsSync(path.join(dir, f))) return path.join(dir, f);
    return undefined;
}

/** Whether every remote entry of a kustomization can be had under the run's policy (offline: from the cache). */
export function remoteEntriesFetchable(entries: string[], ctx: RenderContext): boolean {
    if (!ctx.fetch) return false;
    if (!ctx.fetch.offline) return true;
    return entries.every((e) => {
        const r = remoteRequest(e);
        return "req" in r && fromCache(r.req, ctx.fetch!) !== undefined;
    });
}

/** The run's localizer: fetches remote entries into `scratch/remote/`, keeping what it made for attribution. */
export class Localizer {
    private n = 0;
    readonly copies: LocalCopy[] = [];
    private readonly seen = new Set<string>();

    constructor(
        private readonly scratch: string,
        private readonly ctx: RenderContext,
        private readonly what: string,
        private readonly isRemote: (entry: string) => boolean,
    ) {}

    private fetch(req: FetchRequest): FetchedSource {
        try {
            return fetchForRun(req, withinDeadline(this.ctx.fetch!, this.ctx.deadline), (this.ctx.fetched ??= []));
        } catch (e) {
            if (!(e instanceof FetchError)) throw e;
            throw new SourceNotFetched(`${this.what}: a remote base: ${e.message}`);
        }
    }

    /** The local entry that stands for a remote one, in the kustomization of `kdir`. */
    private local(entry: string, kdir: string, depth: number): string {
        const r = remoteRequest(entry);
        if ("refused" in r) throw new BadInputError(`${this.what}: a remote base is ${r.refused}`);
        const got = this.fetch(r.req);
        const n = this.n++;
        if (r.req.kind === "file") {
            // A file must be inside the kustomization's folder for kustomize to load it.
            const [file] = fs.readdirSync(got.path);
            const name = `.pko-guard-remote-${n}-${file}`;
            fs.copyFileSync(path.join(got.path, file), path.join(kdir, name));
            this.copies.push({ local: path.join(kdir, name), source: got });
            return name;
        }
        const copy = path.join(this.scratch, "remote", String(n));
        fs.cpSync(got.path, copy, { recursive: true, dereference: false });
        this.copies.push({ local: copy, source: got });
        const target = path.resolve(copy, r.subdir);
        const rel = path.relative(copy, target);
        if (rel.startsWith("..") || path.isAbsolute(rel) || !fs.existsSync(target))
            throw new BadInputError(
                `${this.what}: a remote base names ${JSON.stringify(r.subdir)}, which ${got.url}@${got.resolved} does not hold`,
            );
        this.walk(target, depth + 1);
        // kustomize takes a base by a relative path only.
        return path.relative(kdir, target);
    }

    /** Rewrites the remote entries of `k` (a kustomization in `kdir`, decoded), following its local bases. */
    rewrite(k: Record<string, unknown>, kdir: string, depth = 0): boolean {
        if (depth > MAX_DEPTH)
            throw new BadInputError(`${this.what}: remote bases name remote bases more than ${MAX_DEPTH} deep`);
        let changed = false;
        for (const field of FIELDS) {
            const list = k[field];
            if (!Array.isArray(list)) continue;
            list.forEach((e, i) => {
                if (typeof e !== "string") return;
                if (this.isRemote(e)) {
                    list[i] = this.local(e, kdir, depth);
                    changed = true;
                } else {
                    const dir = path.resolve(kdir, e);
                    if (fs.existsSync(dir) && fs.statSync(dir).isDirectory()) this.walk(dir, depth);
                }
            });
        }
        return changed;
    }

    /** Rewrites the kustomization in `dir` (a base in the scratch copy) on disk, when it names remote entries. */
    private walk(dir: string, depth: number): void {
        const real = fs.realpathSync(dir);
        if (this.seen.has(real)) return;
        this.seen.add(real);
        const kfile = kustomizationIn(dir);
        if (!kfile) return;
        const k = mappingOf(fs.readFileSync(kfile, "utf8"));
        if (this.rewrite(k, dir, depth)) fs.writeFileSync(kfile, `${JSON.stringify(k, null, 2)}\n`);
    }

    /** How a file of a fetched copy is named in findings (`<url>@<resolved>/<path>`), and where it is cached. */
    named(abs: string): { from: string; shown: string; floating?: string } | undefined {
        for (const c of this.copies) {
            const rel = path.relative(c.local, abs);
            if (rel.startsWith("..") || path.isAbsolute(rel)) continue;
            const inTree = rel === "" ? fs.readdirSync(c.source.path)[0] : rel;
            const from = c.source.kind === "file" ? path.join(c.source.path, inTree) : path.join(c.source.path, rel);
            const shown = c.source.kind === "file" ? c.source.url : fetchedFileName(c.source, rel);
            return { from, shown, floating: floatingNote(c.source) };
        }
        return undefined;
    }
}
