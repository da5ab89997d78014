/**
 * A Flux source's artifact, as source-controller builds it and as kustomize-controller and helm-controller (through
 * a HelmChart) read it: the source's tree, with what `spec.include` copies into it, filtered by its `.sourceignore`
 * files and `spec.ignore` (Flux's default excludes when neither gives a pattern), regular files only. The filter is Flux's own (fluxcd/pkg/sourceignore,
 * run by the toolchain's flux-build `artifact` request), the one path every Kustomization build and every chart of
 * a GitRepository or OCIRepository takes. The tree is written once a run per source into the run's scratch folder;
 * each of its files maps back to the file it came from (this repository's, or a fetched source's, named
 * `<url>@<resolved>/<path>`), so findings name the files users wrote.
 */
import * as fs from "fs";
import * as path from "path";
import { record, str } from "../../support/records";
import { RenderContext, RenderedStream, runTool, treeContext } from "../render/render";
import { scratchRoot } from "../render/kustomize";
import { FetchedSource, fetchedFileName, floatingNote } from "../fetch/fetch";

type Obj = Record<string, unknown>;

/** Where a file of an artifact came from: its file (absolute) and, for a fetched source, how it is named. */
export interface Origin {
    from: string;
    shown?: string;
    floating?: string;
}

/** A source's files as the artifact holds them. */
export interface Artifact {
    /** The artifact's tree (the run's scratch folder): build and render here, never in the checkout. */
    dir: string;
    /** Where a path of the tree (absolute) came from. */
    origin: (abs: string) => Origin;
    /** The files the filter left out (absolute paths in the tree, which are not there: map them with `origin`). */
    ignored: string[];
    /** A render context rooted at the tree, showing every path by where it came from. */
    ctx: RenderContext;
}

/** What an artifact is made of: the source's tree (`dir`, fetched as `got`), its object and its render context. */
export interface ArtifactSource {
    dir: string;
    source: Obj;
    got?: FetchedSource;
    ctx: RenderContext;
}

/**
 * The GitRepository a `spec.include` entry names (by name, in the including source's namespace: a local reference),
 * resolved as any source (this repository's checkout, or fetched), or why it is not read.
 */
export type IncludeResolver = (name: string, namespace: string, field: string) => ArtifactSource | { reason: string };

/** Folders of a working tree that a checkout of it does not hold (git's own, what a package manager installs). */
const WORK_TREE = [".git", "node_modules"];

/** At most this many GitRepositories deep through `spec.include` (a deeper one fails closed). */
const MAX_INCLUDE_DEPTH = 10;

/** Artifacts already written, by scratch folder and source. */
const made = new WeakMap<object, Map<string, Artifact>>();

/** How a file of a tree rooted at `root` is named when that tree was fetched as `got`. */
function originIn(root: string, got: FetchedSource | undefined): (rel: string) => Origin {
    return (rel) => {
        const from = path.join(root, rel);
        if (!got) return { from };
        return { from, shown: fetchedFileName(got, rel), floating: floatingNote(got) };
    };
}

/**
 * The artifact of `src` for a run (`run`: the run's context, whose scratch folder holds it), written on first use;
 * `named`: how messages name the source (`GitRepository "ns/name"`). Why not, when an include cannot be had.
 */
export function sourceArtifact(
    src: ArtifactSource,
    run: RenderContext,
    named: string,
    include: IncludeResolver,
    within: string[] = [],
): Artifact | { reason: string } {
    const scratch = run.scratch ?? (run.scratch = {});
    const spec = record(src.source.spec) ?? {};
    const ignore = typeof spec.ignore === "string" ? spec.ignore : undefined;
    const included = includedArtifacts(src, run, named, include, within);
    if ("reason" in included) return included;
    const key = JSON.stringify([src.dir, ignore ?? null, included.map((i) => [i.art.dir, i.from, i.to])]);
    let byKey = made.get(scratch);
    if (!byKey) {
        byKey = new Map<string, Artifact>();
        made.set(scratch, byKey);
    }
    const known = byKey.get(key);
    if (known) return known;
    const base = fs.mkdtempSync(path.join(scratchRoot(scratch), "flux-artifact-"));
    const dir = path.join(base, "artifact");
    fs.mkdirSync(dir);
    const own = originIn(src.dir, src.got);
    let root = src.dir;
    if (included.length > 0) {
        // source-controller copies each include into its checkout, in order, before it archives the whole.
        root = path.join(base, "checkout");
        fs.cpSync(src.dir, root, {
            recursive: true,
            verbatimSymlinks: true,
            filter: (p) => src.got !== undefined || !WORK_TREE.includes(path.basename(p)),
        });
        for (const [i, inc] of included.entries()) {
            const failed = copyInclude(inc, root, path.join(base, `include-${i}`));
            if (failed)
                return {
                    reason: `${named} has spec.include[${i}] (GitRepository ${JSON.stringify(inc.name)}), which source-controller cannot copy from ${JSON.stringify(inc.from || "/")} to ${JSON.stringify(inc.to)}: ${failed}, so the source has no artifact`,
                };
        }
    }
    const list = path.join(base, "ignored");
    runTool("flux-build", [], `${named} (its artifact)`, src.ctx, {
        cwd: base,
        // A working tree's .git and node_modules are not what a checkout holds (a fetched tree has neither; the
        // composed checkout was copied without them).
        input: JSON.stringify({
            artifact: { root, into: dir, ignore, ignored: list, skip: root === src.dir && !src.got ? WORK_TREE : [] },
        }),
    });
    if (root !== src.dir) fs.rmSync(root, { recursive: true, force: true });
    // A path below an include's folder came from the included artifact (the deepest include wins: a later one
    // can only land inside an earlier one's folder), any other from the source's own tree.
    const mounts = included
        .map((inc) => ({ at: path.join(dir, inc.to), from: path.join(inc.art.dir, inc.from), art: inc.art }))
        .sort((a, b) => b.at.length - a.at.length);
    const origin = (abs: string): Origin => {
        for (const m of mounts) {
            const inside = path.relative(m.at, abs);
            if (!inside.startsWith("..") && !path.isAbsolute(inside)) return m.art.origin(path.join(m.from, inside));
        }
        const rel = path.relative(dir, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? { from: abs } : own(rel);
    };
    const ignored = fs
        .readFileSync(list, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => path.join(dir, ...l.split("/")));
    // What an included source's own filter left out below the folder copied in is not in this artifact either.
    for (const m of mounts)
        for (const f of m.art.ignored) {
            const inside = path.relative(m.from, f);
            if (inside === "" || (!inside.startsWith("..") && !path.isAbsolute(inside)))
                ignored.push(path.join(m.at, inside));
        }
    const artifact: Artifact = { dir, origin, ignored, ctx: artifactContext(src.ctx, dir, origin) };
    byKey.set(key, artifact);
    return artifact;
}

/** One `spec.include` entry with its GitRepository's artifact: `from` and `to` relative, confined, `/`-free. */
interface Included {
    name: string;
    art: Artifact;
    from: string;
    to: string;
}

/**
 * The artifacts of the GitRepositories `src` includes, in order (each its own artifact: its own ignore rules and
 * includes), or why one cannot be had.
 */
function includedArtifacts(
    src: ArtifactSource,
    run: RenderContext,
    named: string,
    include: IncludeResolver,
    within: string[],
): Included[] | { reason: string } {
    const entries = Array.isArray(record(src.source.spec)?.include)
        ? (record(src.source.spec)!.include as unknown[])
        : [];
    const namespace = str(record(src.source.metadata)?.namespace) || "default";
    const out: Included[] = [];
    for (const [i, entry] of entries.entries()) {
        const field = `spec.include[${i}]`;
        const e = record(entry) ?? {};
        const name = str(record(e.repository)?.name) ?? "";
        if (name === "") return { reason: `${named} has ${field}, which names no GitRepository (repository.name)` };
        const shown = `GitRepository ${JSON.stringify(`${namespace}/${name}`)}`;
        const chain = [...within, identity(src.source)];
        if (chain.includes(`${namespace}/${name}`))
            return {
                reason: `${named} has ${field} naming ${shown}, which includes it in turn, so neither has an artifact check can know`,
            };
        if (chain.length > MAX_INCLUDE_DEPTH)
            return {
                reason: `${named} has ${field}: more than ${MAX_INCLUDE_DEPTH} GitRepositories deep through spec.include, which check does not follow`,
            };
        const inc = include(name, namespace, `${named} ${field}`);
        if ("reason" in inc) return inc;
        const art = sourceArtifact(inc, run, `${named} ${field} (${shown})`, include, chain);
        if ("reason" in art) return art;
        // securejoin.SecureJoin, as source-controller joins both paths: `..` never leaves the folder.
        const from = confined(str(e.fromPath) ?? "");
        const to = confined(str(e.toPath) || name);
        out.push({ name, art, from, to });
    }
    return out;
}

/** `namespace/name` of a source object. */
function identity(o: Obj): string {
    const meta = record(o.metadata) ?? {};
    return `${str(meta.namespace) || "default"}/${str(meta.name) ?? ""}`;
}

/** A path joined under a root as securejoin joins it (lexically: `..` stops at the root), relative, OS-separated. */
export function confined(p: string): string {
    return path.relative(path.sep, path.join(path.sep, p));
}

/**
 * Copies one include into the checkout as source-controller's Storage.CopyToPath does: the included artifact is
 * unpacked into a folder of its own, the folders above `to` made, and `from` moved onto `to` with rename(2)
 * (a folder onto an empty folder replaces it; onto anything else, or a missing `from`, fails). Why it failed, else
 * undefined.
 */
function copyInclude(inc: Included, checkout: string, unpack: string): string | undefined {
    fs.cpSync(inc.art.dir, unpack, { recursive: true });
    const from = path.join(unpack, inc.from);
    const to = path.join(checkout, inc.to);
    try {
        if (inc.to === "") return "the include's folder is the root of the source, which already exists";
        for (let d = path.dirname(to); d !== checkout; d = path.dirname(d))
            if (fs.existsSync(d) && fs.lstatSync(d).isSymbolicLink())
                return `${JSON.stringify(path.relative(checkout, d))} is a symbolic link, which check does not follow`;
        if (!fs.existsSync(from)) return `${JSON.stringify(inc.from)} is not in its artifact`;
        fs.mkdirSync(path.dirname(to), { recursive: true });
        fs.renameSync(from, to);
        return undefined;
    } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const why: Record<string, string> = {
            ENOTEMPTY: "the folder is already in the source and not empty",
            EEXIST: "the folder is already in the source and not empty",
            ENOTDIR: "a file is where a folder goes",
            EISDIR: "a folder is where the file goes",
        };
        return why[code ?? ""] ?? `the copy failed (${code ?? "error"})`;
    } finally {
        fs.rmSync(unpack, { recursive: true, force: true });
    }
}

/** A render context for an artifact's tree: confined to it, its paths shown as the files they came from. */
function artifactContext(ctx: RenderContext, dir: string, origin: (abs: string) => Origin): RenderContext {
    const show = (abs: string) => {
        const o = origin(abs);
        return o.shown ?? ctx.show(o.from);
    };
    return treeContext(ctx, dir, show, ctx.repository);
}

/** Streams rendered in an artifact's tree, attributed to the files they came from. */
export function fromArtifact(streams: RenderedStream[], art: Artifact): RenderedStream[] {
    return streams.map((s) => {
        if (s.shown !== undefined) return s;
        const o = art.origin(s.from);
        const out: RenderedStream = { text: s.text, from: o.from };
        if (o.shown !== undefined) out.shown = o.shown;
        if (o.floating !== undefined) out.floating = o.floating;
        return out;
    });
}
