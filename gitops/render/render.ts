/**
 * Rendering what Argo CD's repo server renders, with the same tools (gitops/render/tools.ts): `kustomize build`,
 * `helm template`, and the jsonnet CLI. Each run is bounded by the caller's deadline, has no network (a
 * dead proxy in its environment; remote bases, chart dependencies from a repository and remote imports fail
 * with a line that says so), and reports failure as one line: the tool's first error line with quoted text
 * removed (a values file can hold secrets, so no value is ever echoed).
 *
 * A render returns streams of manifests, each attributed to the file it came from where that can be known
 * (kustomize's origin annotations, Helm's `# Source:` comments), else to the rendered folder.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { KubeYamlError, decodeKubeYaml, firstKubeYamlValue } from "../decode/kube-yaml";
import { yamlReason } from "../decode/manifest-yaml";
import { ClusterCapabilities, DEFAULT_CAPABILITIES } from "./capabilities";
import { INSTALL_HINT, ToolName, findTool } from "./tools";
import { extended } from "../../support/shapes";
import { record } from "../../support/records";

/** A rendered manifest stream and the file (absolute path) its objects came from. */
export interface RenderedStream {
    text: string;
    /** The source file (a base manifest, a chart template, a .jsonnet file), else the rendered folder. */
    from: string;
}

export interface RenderContext {
    /** Absolute deadline (ms since the epoch) for all rendering of one run. */
    deadline: number;
    /** Repository root (absolute): rendering reads nothing outside it. */
    repoRoot: string;
    /** How a folder is shown in messages (repository-relative). */
    show: (abs: string) => string;
    /**
     * One copy of the repository per run, made on first use, where kustomizations are edited (and restored)
     * before each build; the caller removes `dir` when done.
     */
    scratch?: { dir?: string };
    /** The repository's one walk (repoTree), made on first use: a run walks it once. */
    tree?: RepoTree;
    /** The destination cluster's version and APIs, as Argo CD tells Helm (default: a cluster serving PKO and Argo CD). */
    cluster?: ClusterCapabilities;
}

export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

export function kustomizationFile(dir: string): string | undefined {
    for (const f of KUSTOMIZATION_FILES) if (fs.existsSync(path.join(dir, f))) return path.join(dir, f);
    return undefined;
}

export function isChart(dir: string): boolean {
    return fs.existsSync(path.join(dir, "Chart.yaml"));
}

/** No network for rendering tools: every proxy points at a closed port, and git never prompts. */
function offlineEnv(): NodeJS.ProcessEnv {
    const dead = "http://127.0.0.1:9";
    return extended(process.env, {
        HTTP_PROXY: dead,
        HTTPS_PROXY: dead,
        http_proxy: dead,
        https_proxy: dead,
        ALL_PROXY: dead,
        NO_PROXY: "",
        no_proxy: "",
        GIT_TERMINAL_PROMPT: "0",
        GIT_ALLOW_PROTOCOL: "file",
        // jsonnet searches JSONNET_PATH too: only the library folders check passes (-J) may be searched.
        JSONNET_PATH: "",
        HELM_CACHE_HOME: path.join(os.tmpdir(), "pko-guard-helm-cache"),
        HELM_CONFIG_HOME: path.join(os.tmpdir(), "pko-guard-helm-config"),
        HELM_DATA_HOME: path.join(os.tmpdir(), "pko-guard-helm-data"),
    });
}

/** One line from a tool's error output: its first non-empty line, quoted text removed, bounded. */
export function firstErrorLine(stderr: string): string {
    // The error, not the warnings before it (deprecated flags, Helm's notes): `Error:` lines first. A quoted
    // block over several lines (kustomize quotes a generator's whole config between backquotes, its reason
    // after them) is elided first, so that the line keeps the reason and never the config.
    const lines = stderr
        // A URL's user information (a token in `https://x:TOKEN@host/...`), wherever the quotes around it are.
        .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1…@")
        .replace(/`[^`]*`/g, "`…`")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "");
    const line =
        lines.find((l) => l.startsWith("Error:")) ??
        lines.find((l) => !/^(Flag --|WARNING|walk\.go)/.test(l)) ??
        lines[0] ??
        "no error output";
    const cleaned = line
        .replace(/^Error: /, "")
        .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
        .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
        .replace(/`[^`]*`/g, "`…`")
        .replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
    return cleaned.length > 200 ? cleaned.slice(0, 200) + "…" : cleaned;
}

/** At most this many entries are walked (a repository larger than that is refused). */
const MAX_WALK = 1_000_000;

/** What the one bounded walk of the repository found: what confineLinks and repoFolders each need. */
export interface RepoTree {
    /** Repository-relative folders (`/`-separated, sorted); hidden folders, node_modules and what they hold are not listed. */
    folders: string[];
    /** Repository-relative regular files (`/`-separated, sorted), hidden folders' too (git lists them), not those of node_modules or a `.git`. */
    files: string[];
    /** The first symbolic link found that is absolute or steps outside the repository (absolute path). */
    escapingLink?: string;
    /** Set when the repository holds more than MAX_WALK entries (the walk stopped there). */
    tooLarge?: boolean;
}

/**
 * The repository walked once per run (`.git` at its root aside; links are not followed, unreadable folders not
 * read) and at most MAX_WALK entries: its folders, and its first symbolic link that leaves it.
 */
export function repoTree(ctx: RenderContext): RepoTree {
    if (ctx.tree) return ctx.tree;
    const root = path.resolve(ctx.repoRoot);
    const tree: RepoTree = { folders: [], files: [] };
    let seen = 0;
    const escapes = (link: string) => {
        const target = fs.readlinkSync(link);
        let cur = path.dirname(link);
        return (
            path.isAbsolute(target) ||
            target.split(/[\\/]/).some((part) => {
                cur = path.join(cur, part);
                const rel = path.relative(root, cur);
                return rel.startsWith("..") || path.isAbsolute(rel);
            })
        );
    };
    /**
     * Walks `dir`; `listed`: its folders are listed (it is not inside a hidden or node_modules folder); `filed`:
     * its files are listed (it is not inside node_modules). False once the bound is reached.
     */
    const walk = (dir: string, listed: boolean, filed = true): boolean => {
        let entries: fs.Dirent[];
        try {
            entries = fs.readdirSync(dir, { withFileTypes: true });
        } catch {
            return true; // unreadable folders are not read by the tools either
        }
        for (const e of entries) {
            if (++seen > MAX_WALK) return false;
            const p = path.join(dir, e.name);
            if (e.isSymbolicLink()) {
                if (!tree.escapingLink && escapes(p)) tree.escapingLink = p;
            } else if (e.isDirectory() && !(dir === root && e.name === ".git")) {
                // Argo CD's repo server skips hidden folders (walkDirectoryTree, v3.6.1; its default); node_modules is skipped as
                // what a working tree installs rather than what the repository holds.
                const inside = listed && !e.name.startsWith(".") && e.name !== "node_modules";
                if (inside) tree.folders.push(path.relative(root, p).split(path.sep).join("/"));
                if (!walk(p, inside, filed && e.name !== "node_modules" && e.name !== ".git")) return false;
            } else if (filed && e.isFile()) tree.files.push(path.relative(root, p).split(path.sep).join("/"));
        }
        return true;
    };
    tree.tooLarge = !walk(root, true);
    tree.folders.sort();
    tree.files.sort();
    ctx.tree = tree;
    return tree;
}

function tooLarge(ctx: RenderContext, why: string): BadInputError {
    return new BadInputError(
        `${ctx.show(path.resolve(ctx.repoRoot))}: more than ${MAX_WALK.toLocaleString("en")} files and folders; ${why}`,
    );
}

/**
 * Argo CD's repo server refuses to render from a repository holding a symbolic link that is absolute or whose
 * target steps outside the repository at any point (`.git` aside), since a tool following it would read the
 * machine's files (a chart's `.Files.Get`, a value file, a jsonnet import). check refuses the same before the
 * first render.
 */
export function confineLinks(ctx: RenderContext): void {
    const tree = repoTree(ctx);
    if (tree.escapingLink)
        throw new BadInputError(
            `${ctx.show(tree.escapingLink)}: a symbolic link that points outside the repository (Argo CD refuses to render a repository holding one)`,
        );
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for links");
}

/** The repository's folders as a git directories generator lists them (repository-relative, sorted). */
export function repoFolders(ctx: RenderContext): string[] {
    const tree = repoTree(ctx);
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for folders");
    return tree.folders;
}

/** The repository's files as a git files generator reads them (repository-relative, sorted). */
export function repoFiles(ctx: RenderContext): string[] {
    const tree = repoTree(ctx);
    if (tree.tooLarge) throw tooLarge(ctx, "not walked for files");
    return tree.files;
}

/** Runs a rendering tool; exit 2 (BadInputError) with one line when it is missing, fails or runs out of time. */
export function runTool(
    name: ToolName,
    args: string[],
    what: string,
    ctx: RenderContext,
    opts: { cwd: string; input?: string },
): string {
    const tool = findTool(name);
    if (!tool) throw new BadInputError(`${what} needs ${name}, which is not installed: ${INSTALL_HINT[name]}`);
    const left = ctx.deadline - Date.now();
    if (left <= 0) throw new BadInputError(`${what}: rendering ran out of time (--timeout)`);
    const r = spawnSync(tool.path, args, {
        cwd: opts.cwd,
        env: offlineEnv(),
        input: opts.input,
        encoding: "utf8",
        timeout: left,
        maxBuffer: 256 * 1024 * 1024,
        killSignal: "SIGKILL",
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
        throw new BadInputError(`${what}: ${name} ran out of time (--timeout)`);
    if (r.error)
        throw new BadInputError(`${what}: cannot run ${name} (${(r.error as NodeJS.ErrnoException).code ?? "error"})`);
    if (r.status !== 0) {
        let line = firstErrorLine(r.stderr ?? "");
        // A chart's own messages (`fail`, `required`) and template errors can quote values: the location only.
        const at = /^(.*?(?:execution error at \([^)]*\)|template: [^\s:]+:\d+(?::\d+)?))/.exec(line);
        if (name === "helm" && at) line = `${at[1]}: (the message is not shown: it can quote values)`;
        const network =
            /127\.0\.0\.1:9|proxyconnect|dial tcp|no such host|could not resolve|git clone|fetching|repository.*not found/i.test(
                r.stderr ?? "",
            );
        throw new BadInputError(
            `${what}: ${name} failed: ${line}${network ? " (it needs the network, which check does not use)" : ""}`,
        );
    }
    return r.stdout;
}

/**
 * A Chart.yaml's or a kustomization's top-level mapping as Helm and kustomize read it (sigs.k8s.io/yaml: YAML
 * 1.1, merge keys, a repeated key's last value); empty when the text does not decode to a mapping (the tool then
 * fails on its own and check reports that).
 */
export function mappingOf(text: string): Record<string, unknown> {
    const doc = firstKubeYamlValue(text);
    return (doc.ok ? record(doc.value) : undefined) ?? {};
}

/**
 * A kustomization entry kustomize fetches rather than reads from the repository: a URL (`https://`, `ssh://`,
 * `file://`), go-getter's forced getter (`git::https://...`), scp-like `git@host:`, a hosting site's path, or a
 * path with `//` and a query (`repo//base?ref=v1`).
 */
export function isRemoteEntry(entry: string): boolean {
    return /^(?:[a-z][a-z0-9+.-]*::|git@|github\.com\/|gitlab\.com\/|bitbucket\.org\/)|:\/\/|\?ref=|\/\/.*\?/i.test(
        entry,
    );
}

/** Entries of a kustomization that point outside the repository (remote bases), refused before running. */
function remoteEntries(kfile: string): string[] {
    const k = mappingOf(fs.readFileSync(kfile, "utf8"));
    const out: string[] = [];
    for (const field of ["resources", "bases", "components"]) {
        const list = k[field];
        if (Array.isArray(list)) for (const e of list) if (typeof e === "string" && isRemoteEntry(e)) out.push(field);
    }
    return out;
}

/** The Application's own kustomize options (spec.source.kustomize), as Argo CD applies them before building. */
export interface KustomizeOptions {
    namePrefix?: string;
    nameSuffix?: string;
    namespace?: string;
    images?: string[];
    commonLabels?: Record<string, string>;
    commonAnnotations?: Record<string, string>;
    patches?: unknown[];
    components?: string[];
    replicas?: unknown[];
}

function copyTree(from: string, to: string): void {
    fs.cpSync(from, to, {
        recursive: true,
        dereference: false,
        filter: (src) => {
            const base = path.basename(src);
            return base !== ".git" && base !== "node_modules";
        },
    });
}

/** `kustomize edit set image` semantics for one `name[=newName][:tag][@digest]` entry. */
function imageEntry(spec: string): Record<string, string> {
    const [left, digest] = spec.split("@");
    const eq = left.indexOf("=");
    const name = eq >= 0 ? left.slice(0, eq) : left;
    let rest = eq >= 0 ? left.slice(eq + 1) : "";
    let newName = "";
    let newTag = "";
    const target = eq >= 0 ? rest : left;
    const colon = target.lastIndexOf(":");
    const slash = target.lastIndexOf("/");
    if (colon > slash) {
        newTag = target.slice(colon + 1);
        rest = target.slice(0, colon);
    } else rest = target;
    const imageName = eq >= 0 ? name : rest;
    if (eq >= 0 && rest !== "") newName = rest;
    const e: Record<string, string> = { name: imageName };
    if (newName) e.newName = newName;
    if (newTag) e.newTag = newTag;
    if (digest) e.digest = digest;
    return e;
}

/**
 * `kustomize build` of a folder, with the Application's kustomize options written into a copy of its
 * kustomization (as Argo CD does with `kustomize edit`), in a copy of the repository (bases are relative).
 * Origin annotations are turned on to attribute every object to its base file, and removed again.
 */
export function renderKustomize(dir: string, ctx: RenderContext, opts: KustomizeOptions = {}): RenderedStream[] {
    const what = `${ctx.show(dir)} (kustomize)`;
    confineLinks(ctx);
    const kfile = kustomizationFile(dir);
    if (!kfile) throw new BadInputError(`${what}: no kustomization.yaml`);
    if (remoteEntries(kfile).length > 0)
        throw new BadInputError(
            `${what}: a remote base needs the network, which check does not use; vendor it into the repository`,
        );
    const scratch = ctx.scratch ?? {};
    const owned = ctx.scratch === undefined;
    if (!scratch.dir) {
        scratch.dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-kustomize-"));
        copyTree(ctx.repoRoot, path.join(scratch.dir, "repo"));
    }
    const copy = path.join(scratch.dir, "repo");
    const rel = path.relative(ctx.repoRoot, dir);
    const appDir = path.join(copy, rel);
    const kcopy = path.join(appDir, path.basename(kfile));
    const original = fs.readFileSync(kcopy, "utf8");
    try {
        // Read as kustomize reads it (sigs.k8s.io/yaml: YAML 1.1, so a plain `on` is true) and written back as
        // JSON, which every YAML reader takes as it is: a YAML 1.2 round trip wrote a quoted "on" or "y" plain,
        // and kustomize then read a boolean where the kustomization has a string.
        let decoded: unknown;
        try {
            decoded = decodeKubeYaml(original).find((d) => d.value !== null)?.value;
        } catch (e) {
            if (!(e instanceof KubeYamlError)) throw e;
            throw new BadInputError(`${what}: ${ctx.show(kfile)} is not valid YAML (${yamlReason(e.reason)})`);
        }
        if (decoded !== undefined && (typeof decoded !== "object" || Array.isArray(decoded)))
            throw new BadInputError(`${what}: ${ctx.show(kfile)} is not a mapping`);
        const k = (decoded ?? {}) as Record<string, unknown>;
        if (opts.namePrefix) k.namePrefix = opts.namePrefix;
        if (opts.nameSuffix) k.nameSuffix = opts.nameSuffix;
        if (opts.namespace) k.namespace = opts.namespace;
        if (opts.commonLabels) k.commonLabels = extended((k.commonLabels as object) ?? {}, opts.commonLabels);
        if (opts.commonAnnotations)
            k.commonAnnotations = extended((k.commonAnnotations as object) ?? {}, opts.commonAnnotations);
        if (opts.images && opts.images.length > 0) {
            const images = Array.isArray(k.images) ? (k.images as Record<string, string>[]) : [];
            for (const spec of opts.images) {
                const e = imageEntry(spec);
                const i = images.findIndex((x) => x && x.name === e.name);
                if (i >= 0) images[i] = e;
                else images.push(e);
            }
            k.images = images;
        }
        if (opts.patches && opts.patches.length > 0)
            k.patches = [...(Array.isArray(k.patches) ? k.patches : []), ...opts.patches];
        if (opts.components && opts.components.length > 0)
            k.components = [...(Array.isArray(k.components) ? k.components : []), ...opts.components];
        if (opts.replicas && opts.replicas.length > 0)
            k.replicas = [...(Array.isArray(k.replicas) ? k.replicas : []), ...opts.replicas];
        const meta = Array.isArray(k.buildMetadata) ? (k.buildMetadata as string[]) : [];
        if (!meta.includes("originAnnotations")) k.buildMetadata = [...meta, "originAnnotations"];
        fs.writeFileSync(kcopy, `${JSON.stringify(k, null, 2)}\n`);
        const out = runTool("kustomize", ["build", "."], what, ctx, { cwd: appDir });
        return splitByOrigin(out, appDir, dir);
    } finally {
        fs.writeFileSync(kcopy, original);
        if (owned) fs.rmSync(scratch.dir, { recursive: true, force: true });
    }
}

const ORIGIN = "config.kubernetes.io/origin";

/** Splits kustomize's output by each object's origin annotation (removed from the object). */
function splitByOrigin(out: string, appCopy: string, appDir: string): RenderedStream[] {
    const streams: RenderedStream[] = [];
    for (const chunk of out.split(/^---$/m)) {
        if (chunk.trim() === "") continue;
        let from = appDir;
        let text = chunk;
        const m = new RegExp(`^(\\s*)${ORIGIN.replace(/[./]/g, "\\$&")}: \\|\\n((?:\\1  .*\\n)+)`, "m").exec(chunk);
        if (m) {
            const origin = mappingOf(m[2].replace(new RegExp(`^${m[1]}  `, "gm"), ""));
            if (typeof origin.path === "string" && !origin.repo) from = path.resolve(appDir, origin.path);
            text = chunk.slice(0, m.index) + chunk.slice(m.index + m[0].length);
            // An annotations map left empty: kustomize would not have written one.
            text = text.replace(/^(\s*)annotations:\s*\n(?!\1\s)/m, "");
        }
        streams.push({ text: text.replace(/^\n+/, ""), from });
    }
    void appCopy;
    return streams;
}

/** Helm options of an Application source (spec.source.helm), value files already resolved to absolute paths. */
export interface HelmOptions {
    releaseName: string;
    namespace?: string;
    valueFiles?: string[];
    /** `values` (YAML text) and `valuesObject`, written to a file passed after the value files. */
    values?: string;
    parameters?: { name: string; value: string; forceString?: boolean }[];
    fileParameters?: { name: string; path: string }[];
    ignoreMissingValueFiles?: boolean;
    skipCrds?: boolean;
    /** The Application's own `helm.kubeVersion` / `helm.apiVersions`: they replace the cluster's (as in Argo CD). */
    kubeVersion?: string;
    apiVersions?: string[];
}

/** `helm template` of a local chart; objects attributed to their template through `# Source:` comments. */
export function renderHelm(dir: string, ctx: RenderContext, opts: HelmOptions): RenderedStream[] {
    const what = `${ctx.show(dir)} (helm chart)`;
    confineLinks(ctx);
    // A Chart.yaml that does not decode is left to helm, which says why.
    const chart = mappingOf(fs.readFileSync(path.join(dir, "Chart.yaml"), "utf8"));
    const deps: unknown[] = Array.isArray(chart.dependencies) ? chart.dependencies : [];
    for (const entry of deps) {
        // An entry that is not a mapping is helm's to refuse.
        const d = (entry !== null && typeof entry === "object" ? entry : {}) as Record<string, unknown>;
        const repo = typeof d.repository === "string" ? d.repository : "";
        const local = repo === "" || repo.startsWith("file://");
        const vendored =
            fs.existsSync(path.join(dir, "charts")) &&
            fs.readdirSync(path.join(dir, "charts")).some((f) => f.startsWith(String(d.name)));
        if (!local && !vendored)
            throw new BadInputError(
                `${what}: dependency ${JSON.stringify(String(d.name))} comes from a chart repository (helm dependency build needs the network, which check does not use); vendor it into charts/`,
            );
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-helm-"));
    try {
        const args = ["template", opts.releaseName, dir];
        if (opts.namespace) args.push("--namespace", opts.namespace);
        if (!opts.skipCrds) args.push("--include-crds");
        const cluster = ctx.cluster ?? DEFAULT_CAPABILITIES;
        const kubeVersion = opts.kubeVersion || cluster.kubeVersion;
        if (kubeVersion) args.push("--kube-version", kubeVersion);
        for (const v of opts.apiVersions?.length ? opts.apiVersions : cluster.apiVersions)
            args.push("--api-versions", v);
        for (const f of opts.valueFiles ?? []) {
            if (!fs.existsSync(f)) {
                if (opts.ignoreMissingValueFiles) continue;
                throw new BadInputError(`${what}: value file ${ctx.show(f)} does not exist`);
            }
            args.push("--values", f);
        }
        if (opts.values !== undefined && opts.values.trim() !== "") {
            const vf = path.join(tmp, "values.yaml");
            fs.writeFileSync(vf, opts.values);
            args.push("--values", vf);
        }
        for (const p of opts.parameters ?? [])
            args.push(p.forceString ? "--set-string" : "--set", `${p.name}=${p.value}`);
        for (const p of opts.fileParameters ?? []) args.push("--set-file", `${p.name}=${p.path}`);
        const out = runTool("helm", args, what, ctx, { cwd: dir });
        const chartName = typeof chart.name === "string" ? chart.name : path.basename(dir);
        const streams: RenderedStream[] = [];
        for (const chunk of out.split(/^---\s*$/m)) {
            if (chunk.trim() === "") continue;
            const m = /^# Source: (.+)$/m.exec(chunk);
            let from = dir;
            if (m) {
                // `<chart>/templates/x.yaml`, or `<chart>/charts/<sub>/templates/x.yaml`
                const rel = m[1].trim().split("/").slice(1).join("/");
                const candidate = path.join(dir, rel);
                if (m[1].startsWith(chartName + "/") && fs.existsSync(candidate)) from = candidate;
            }
            streams.push({ text: chunk, from });
        }
        return streams;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

export interface JsonnetOptions {
    /** Library folders (-J), absolute. The file's folder comes first, as Argo CD's VM does. */
    libs?: string[];
    extVars?: { name: string; value: string; code?: boolean }[];
    tlas?: { name: string; value: string; code?: boolean }[];
}

/**
 * Argo CD confines jsonnet to the repository, and check uses no network; a file an import reads outside it
 * could also put a CI machine's files (`/proc/self/environ`) into an object and so into a finding. So every
 * file the evaluation would read (the file, and all it imports transitively with `import`, `importstr` or
 * `importbin`, as jsonnet's own parser finds them: the toolchain's `jsonnet-deps`, links resolved) must be
 * inside the repository, checked before evaluating. A remote import cannot be resolved, so it is refused too.
 */
function confineJsonnet(file: string, jpath: string[], what: string, ctx: RenderContext): void {
    const root = fs.realpathSync(ctx.repoRoot);
    const inside = (p: string) => {
        const rel = path.relative(root, p);
        return rel === "" || !(rel.startsWith("..") || path.isAbsolute(rel));
    };
    let deps: string[];
    try {
        deps = runTool("jsonnet-deps", [...jpath, file], what, ctx, { cwd: path.dirname(file) })
            .split("\n")
            .filter((l) => l !== "");
    } catch (e) {
        if (e instanceof BadInputError && /couldn't open import/.test(e.message)) {
            throw new BadInputError(
                `${what}: an import cannot be opened in the repository (a remote import needs the network, which check does not use: vendor it)`,
            );
        }
        throw e;
    }
    for (const p of [fs.realpathSync(file), ...deps]) {
        if (!inside(p))
            throw new BadInputError(`${what}: an import reaches outside the repository (Argo CD refuses it)`);
    }
}

/** Evaluates one .jsonnet file; its JSON (an object or a list of objects) as one stream. */
export function renderJsonnet(
    file: string,
    appDir: string,
    ctx: RenderContext,
    opts: JsonnetOptions = {},
): RenderedStream[] {
    const what = `${ctx.show(file)} (jsonnet)`;
    confineLinks(ctx);
    const jpath: string[] = ["-J", appDir];
    for (const l of opts.libs ?? []) jpath.push("-J", l);
    confineJsonnet(file, jpath, what, ctx);
    const args = [...jpath];
    for (const v of opts.extVars ?? []) args.push(v.code ? "--ext-code" : "--ext-str", `${v.name}=${v.value}`);
    for (const v of opts.tlas ?? []) args.push(v.code ? "--tla-code" : "--tla-str", `${v.name}=${v.value}`);
    args.push(file);
    const out = runTool("jsonnet", args, what, ctx, { cwd: path.dirname(file) });
    let value: unknown;
    try {
        value = JSON.parse(out);
    } catch {
        throw new BadInputError(`${what}: the jsonnet output is not JSON`);
    }
    const items = Array.isArray(value) ? value : [value];
    // A YAML stream of JSON documents (JSON is valid flow YAML; the leading marker keeps it from being read as
    // a JSON stream, which allows no separators).
    return [{ text: items.map((i) => "---\n" + JSON.stringify(i)).join("\n") + "\n", from: file }];
}
