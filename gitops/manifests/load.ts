/**
 * Reads a run's Kubernetes manifests for `pko-guard check` and the manifest leg: files, folders and standard input,
 * decoded as Kubernetes decodes them (gitops/decode/kube-yaml.ts), Argo CD Applications rendered with the real tools
 * and placed (./placement.ts), each object with its file, position and the identity and URN the Kubernetes provider
 * would give it (./manifest-objects.ts). Bad input is one line a file, never a file's content; what is read, skipped
 * and refused is docs/check.md's "Inputs and decoding" and "Limits and bad input".
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError, BadInputsError } from "../../support/errors";
import { extended } from "../../support/shapes";
import type { RenderContext, RenderedStream } from "../render/render";
import { KUSTOMIZATION_FILES, isChart } from "../render/folders";
import { isApplication, isApplicationSet } from "../argocd/argo-kinds";
import { isFluxApplier } from "../flux/flux-kinds";
import { STDIN_FILE, gitTopLevel, posix, readFile, readStdin, walk } from "./files";
import { LoadOptions, LoadResult, emptyLoad } from "./manifest-objects";
import { scopeObjects } from "./scopes";
import { CONFIG_FILE, walkFilter } from "./exclude";
import { originals, parseSource } from "../decode/manifest-yaml";
import type { ManifestObject } from "./manifest-objects";

/** A jsonnet program, and a jsonnet library (only ever imported). */
const JSONNET = /\.jsonnet$/i;
const JSONNET_LIBRARY = /\.libsonnet$/i;

/**
 * Why a file named on the command line is not read on its own, and what to name instead: a jsonnet library, or a
 * chart's template (Go template text, not YAML: read as a file it is "invalid YAML", which says nothing useful).
 */
function notReadAlone(abs: string, cwd: string): string | undefined {
    if (JSONNET_LIBRARY.test(abs))
        return "a jsonnet library, evaluated only where a .jsonnet file imports it: name that file";
    for (let d = path.dirname(abs); path.dirname(d) !== d; d = path.dirname(d))
        if (path.basename(d) === "templates" && isChart(path.dirname(d))) {
            const chart = path.relative(cwd, path.dirname(d)) || ".";
            return `a template of the Helm chart ${JSON.stringify(chart)}, rendered only with its chart: name the chart`;
        }
    return undefined;
}

/**
 * Loads every object of the given paths; duplicates and bad input throw BadInputError (one line). `knownRoot`:
 * the run's repository root when the caller has found it already (runRepoRoot, same paths and options).
 */
export function loadManifests(
    paths: string[],
    o: LoadOptions = {},
    knownRoot?: string,
): LoadResult & { repoRoot: string } {
    const cwd = o.cwd ?? process.cwd();
    const repoRoot = knownRoot ?? runRepoRoot(paths, o);
    originals.clear();
    const out = emptyLoad();
    const { shownName, repoPathOf, readOne, problems } = fileReader(cwd, repoRoot, o.skipUnreadable === true, out);
    const ctx = renderContext(o, repoRoot, (abs) => repoPathOf(abs) ?? shownName(abs));
    const skip = walkFilter(repoRoot, o.exclude, o.toolConfigs);
    /** Folders that need rendering, found by walking or named directly; and the folders named (absolute). */
    const roots: string[] = [];
    const named = new Set<string>();
    const jsonnetFiles: string[] = [];
    let stdinRead = false;
    for (const p of paths) {
        if (p === "-") {
            if (stdinRead) throw new BadInputError("-: standard input given twice");
            stdinRead = true;
            const text = o.stdin ? o.stdin() : readStdin();
            out.files++;
            parseSource({ file: STDIN_FILE, text }, out, false);
            continue;
        }
        const abs = path.resolve(cwd, p);
        let stat: fs.Stats;
        try {
            stat = fs.statSync(abs);
        } catch {
            problems.push(`${p}: no such file or folder`);
            continue;
        }
        if (stat.isDirectory()) {
            named.add(abs);
            const files: string[] = [];
            const jsonnet: string[] = [];
            try {
                walk(abs, new Set(), files, roots, problems, skip, jsonnet);
            } catch (e) {
                if (!(e instanceof BadInputError)) throw e;
                problems.push(e.message);
            }
            for (const f of files) readOne(f, true);
            out.jsonnetWalked = (out.jsonnetWalked ?? 0) + jsonnet.length;
        } else if (KUSTOMIZATION_FILES.includes(path.basename(abs)) || path.basename(abs) === "Chart.yaml") {
            roots.push(path.dirname(abs));
            named.add(path.dirname(abs));
        } else if (JSONNET.test(abs)) {
            jsonnetFiles.push(abs);
        } else if (notReadAlone(abs, cwd) !== undefined) {
            problems.push(`${p}: ${notReadAlone(abs, cwd)}`);
        } else if (abs !== path.join(repoRoot, CONFIG_FILE) && !(o.toolConfigs ?? []).includes(abs)) {
            // A file named is read (a tool's configuration too, when asked), but for the run's own configuration.
            readOne(abs, false);
        }
    }
    unreadable(problems);
    const parseRendered = (stream: RenderedStream, into: LoadResult) =>
        parseSource(
            {
                file: stream.shown ?? shownName(stream.from),
                text: stream.text,
                repoPath: stream.shown === undefined ? repoPathOf(stream.from) : undefined,
                floating: stream.floating,
                abs: stream.from,
                rendered: true,
            },
            into,
            true,
        );
    try {
        renderAndPlace(out, ctx, { roots, named, jsonnetFiles }, readOne, parseRendered);
    } finally {
        if (ctx.scratch?.dir) fs.rmSync(ctx.scratch.dir, { recursive: true, force: true });
    }
    unreadable(problems);
    // Identities are per cluster; one defined twice in a cluster is a finding on each definition (./scopes.ts).
    out.duplicates = scopeObjects(out.objects);
    if (ctx.fetched!.length > 0) out.fetched = ctx.fetched;
    return extended(out, { repoRoot });
}

/**
 * What the input needs rendered and placed: the .jsonnet files named on the command line evaluated as an Argo CD
 * directory source evaluates them (their folder on the library path; in a folder, one is read only as part of an
 * Application's source), then Argo CD's and Flux's objects placed and unclaimed folders rendered (./placement.ts).
 * The renderers, remote sources and Argo CD's and Flux's code are loaded only for a run whose input needs them: a
 * repository of plain files does not.
 */
function renderAndPlace(
    out: LoadResult,
    ctx: RenderContext,
    found: { roots: string[]; named: Set<string>; jsonnetFiles: string[] },
    readOne: (f: string, fromFolder: boolean, into?: LoadResult) => void,
    parseRendered: (stream: RenderedStream, into: LoadResult) => void,
): void {
    if (found.jsonnetFiles.length > 0) {
        const { renderJsonnet } = require("../render/jsonnet") as typeof import("../render/jsonnet");
        for (const f of found.jsonnetFiles) {
            out.files++;
            for (const stream of renderJsonnet(f, path.dirname(f), ctx)) parseRendered(stream, out);
        }
    }
    if (found.roots.length > 0 || out.objects.some(placed)) {
        const { placeApplications } = require("./placement") as typeof import("./placement");
        placeApplications(out, ctx, found, readOne, parseRendered);
    }
}

/**
 * Whether an object read from the input is one that ./placement.ts acts on: an Argo CD Application or ApplicationSet,
 * or a Flux Kustomization or HelmRelease. Without one (and with no folder to render) placing would change nothing.
 */
function placed(x: ManifestObject): boolean {
    return isApplication(x.object) || isApplicationSet(x.object) || isFluxApplier(x.object);
}

/** A run's render context: its deadline, repository, cluster, fetch policy, and a scratch copy made on first use. */
function renderContext(o: LoadOptions, repoRoot: string, show: (abs: string) => string): RenderContext {
    return {
        deadline: Date.now() + (o.timeoutMs ?? 300_000),
        repoRoot,
        show,
        scratch: {},
        cluster: o.cluster,
        kustomizeHelm: o.kustomizeHelm,
        repository: o.repository,
        fetch: o.fetch,
        fetched: [],
    };
}

/**
 * Fails the run when some file could not be read or decoded: with that file's one line (as ever) when it is the
 * only one, else with a line for each (BadInputsError).
 */
function unreadable(problems: string[]): void {
    if (problems.length === 1) throw new BadInputError(problems[0]);
    if (problems.length > 1) throw new BadInputsError(problems, `${problems.length} files cannot be read as manifests`);
}

/**
 * How files are named (shown, repository-relative) and read into a load, for one run. A file that cannot be read
 * or decoded (bad input) does not stop the reading: its line is kept in `problems`, for the caller to fail with.
 */
function fileReader(cwd: string, repoRoot: string, skipUnreadable: boolean, out: LoadResult) {
    const shownName = (abs: string) => {
        const rel = path.relative(cwd, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? abs : posix(rel);
    };
    const repoPathOf = (abs: string) => {
        const rel = path.relative(repoRoot, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : posix(rel);
    };
    const problems: string[] = [];
    // Each file is read once: a folder an Application syncs is gone through again for it after the walk read the
    // same files, and a file that gave no object (skipped as unreadable, or holding no Kubernetes object) must not
    // be skipped, named and counted a second time. Files with objects are found by their objects (./placement.ts).
    const readFiles = new Set<string>();
    const readOne = (f: string, fromFolder: boolean, into: LoadResult = out) => {
        if (readFiles.has(f)) return;
        readFiles.add(f);
        const shown = shownName(f);
        try {
            const text = readFile(f, shown, fromFolder && skipUnreadable, into);
            if (text === undefined) return;
            into.files++;
            parseSource({ file: shown, text, repoPath: repoPathOf(f), abs: f }, into, fromFolder);
        } catch (e) {
            if (!(e instanceof BadInputError)) throw e;
            problems.push(e.message);
        }
    };
    return { shownName, repoPathOf, readOne, problems };
}

/** The repository root of a run (as loadManifests finds it), or a BadInputError. */
export function runRepoRoot(paths: string[], o: Pick<LoadOptions, "repoRoot" | "cwd">): string {
    const cwd = o.cwd ?? process.cwd();
    const first = paths.find((p) => p !== "-");
    const firstDir = first ? path.resolve(cwd, first) : cwd;
    const startDir = fs.existsSync(firstDir) && fs.statSync(firstDir).isDirectory() ? firstDir : path.dirname(firstDir);
    const repoRoot = path.resolve(cwd, o.repoRoot ?? gitTopLevel(startDir) ?? cwd);
    if (o.repoRoot !== undefined && !(fs.existsSync(repoRoot) && fs.statSync(repoRoot).isDirectory())) {
        throw new BadInputError(`--repo-root ${o.repoRoot}: no such folder`);
    }
    return repoRoot;
}
