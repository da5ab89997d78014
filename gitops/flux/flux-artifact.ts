/**
 * A Flux source's artifact, as source-controller builds it and as kustomize-controller and helm-controller (through
 * a HelmChart) read it: the source's tree filtered by its `.sourceignore` files and `spec.ignore` (Flux's default
 * excludes when neither gives a pattern), regular files only. The filter is Flux's own (fluxcd/pkg/sourceignore,
 * run by the toolchain's flux-build `artifact` request), the one path every Kustomization build and every chart of
 * a GitRepository or OCIRepository takes. The tree is written once a run per source into the run's scratch folder;
 * each of its files maps back to the file it came from (this repository's, or a fetched source's, named
 * `<url>@<resolved>/<path>`), so findings name the files users wrote.
 */
import * as fs from "fs";
import * as path from "path";
import { record, str } from "../../support/records";
import { RenderContext, RenderedStream, runTool } from "../render/render";
import { scratchRoot } from "../render/kustomize";
import { FetchedSource, floatingNote } from "../fetch/fetch";

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
    /** The files the filter left out, where they came from (absolute). */
    ignored: string[];
    /** A render context rooted at the tree, showing every path by where it came from. */
    ctx: RenderContext;
}

/** What an artifact is made of: the source's tree (`dir`, fetched as `got`) and its object. */
export interface ArtifactSource {
    dir: string;
    source: Obj;
    got?: FetchedSource;
}

/** Artifacts already written, by scratch folder and source. */
const made = new WeakMap<object, Map<string, Artifact>>();

/** How a file of a tree rooted at `root` is named when that tree was fetched as `got`. */
function originIn(root: string, got: FetchedSource | undefined): (rel: string) => Origin {
    return (rel) => {
        const from = path.join(root, rel);
        if (!got) return { from };
        const slashed = rel.split(path.sep).join("/");
        return {
            from,
            shown: `${got.url}@${got.resolved}${slashed === "" ? "" : `/${slashed}`}`,
            floating: floatingNote(got),
        };
    };
}

/**
 * The artifact of `src` for a run (`ctx`: the context of the source's own tree, `run`: the run's, whose scratch
 * folder holds it), written on first use.
 */
export function sourceArtifact(src: ArtifactSource, ctx: RenderContext, run: RenderContext): Artifact {
    const scratch = run.scratch ?? ctx.scratch ?? (run.scratch = {});
    const spec = record(src.source.spec) ?? {};
    const ignore = typeof spec.ignore === "string" ? spec.ignore : undefined;
    const key = JSON.stringify([src.dir, ignore ?? null]);
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
    const list = path.join(base, "ignored");
    runTool("flux-build", [], `${str(src.source.kind) ?? "source"} artifact of ${ctx.show(src.dir)}`, ctx, {
        cwd: base,
        input: JSON.stringify({ artifact: { root: src.dir, into: dir, ignore, ignored: list } }),
    });
    const named = originIn(src.dir, src.got);
    const origin = (abs: string): Origin => {
        const rel = path.relative(dir, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? { from: abs } : named(rel);
    };
    const ignored = fs
        .readFileSync(list, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => named(l.split("/").join(path.sep)).from);
    const artifact: Artifact = { dir, origin, ignored, ctx: artifactContext(ctx, dir, origin) };
    byKey.set(key, artifact);
    return artifact;
}

/** A render context for an artifact's tree: confined to it, its paths shown as the files they came from. */
function artifactContext(ctx: RenderContext, dir: string, origin: (abs: string) => Origin): RenderContext {
    return {
        deadline: ctx.deadline,
        repoRoot: dir,
        show: (abs) => {
            const o = origin(abs);
            return o.shown ?? ctx.show(o.from);
        },
        cluster: ctx.cluster,
        repository: ctx.repository,
        fetch: ctx.fetch,
        fetched: ctx.fetched,
        kustomizeHelm: ctx.kustomizeHelm,
    };
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
