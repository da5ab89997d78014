/**
 * Reads Kubernetes manifests for `pko-guard check` and the manifest leg: files and folders (recursive
 * `.yaml`/`.yml`/`.json`), multi-document YAML, `kind: List`, and `-` for standard input. Values are read by
 * js-yaml (fast); every object knows its file, and finds its line and column, and a field's, on demand: its
 * document is then parsed alone by the `yaml` package, which keeps positions (FileLocator).
 *
 * Each object becomes the resource the Kubernetes provider would register for it:
 * - type: `kubernetes:<group>/<version>:<Kind>`, the core group as `core` (`kubernetes:core/v1:Secret`);
 * - name (identity): `Kind/namespace/name`, or `Kind/name` when the object sets no namespace (cluster-scoped
 *   objects, and namespaced objects whose namespace is chosen when applied: Argo CD's destination, `-n`);
 * - urn: `urn:pulumi:check::manifests::<type>::<identity>` (synthesized; no Pulumi stack exists).
 * Two objects with one identity are bad input (exit 2) naming both files.
 *
 * Bad input is one line each, never the content of a file (a Secret's values never appear): invalid YAML
 * (file:line:column), a document that is not a mapping, an unreadable path, a named file that is binary or
 * larger than MAX_FILE_BYTES (exit 2). Inside a folder, binary and oversized files, and documents that are
 * not Kubernetes objects (no apiVersion/kind, e.g. a CI workflow), are skipped and counted; hidden folders
 * (`.git`, `.github`) and `node_modules` are not walked.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError } from "../errors";
import { KubeYamlError, decodeKubeYaml } from "../../core/kube-yaml";
import { CLUSTER_SCOPED, applicationOutput, expandApplicationSet, isApplication, isApplicationSet } from "../../core/render/argocd";
import { KUSTOMIZATION_FILES, RenderContext, RenderedStream, isChart, kustomizationFile, renderHelm, renderKustomize } from "../../core/render/render";
import { EvalResource } from "./evaluate";
import { MANIFEST_URN_PREFIX, SOURCE_PATH } from "../../policies/model/manifests";

export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** Kinds some pko-guard rule reads (by API group); other objects are counted, never reported. */
const KINDS_RULES_READ: Record<string, string[]> = {
    "pulumi.com": ["Stack"],
    core: ["Secret", "ServiceAccount"],
    "rbac.authorization.k8s.io": ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
    "argoproj.io": ["Application"],
};

export interface Location {
    /** The file as shown to users and in reports ("-" is standard input, shown as `<stdin>`). */
    file: string;
    line: number;
    column: number;
}

export interface ManifestObject extends Location {
    identity: string;
    type: string;
    urn: string;
    kind: string;
    /** The object as parsed (plain JSON), with the source-path annotation added when known. */
    object: Record<string, unknown>;
    /** Whether some rule reads objects of this kind. */
    read: boolean;
    /** Whether it has a metadata.name (unnamed objects of kinds no rule reads are only counted). */
    named: boolean;
    /** The file's path relative to the repository root (posix), when the file is inside it. */
    repoPath?: string;
    /** Finds the line and column of a field path (`spec.branch`, `subjects[0]`), or of its nearest parent. */
    locate(field: string): { line: number; column: number };
    /** The Argo CD Application that syncs it (`namespace/name`), when one does. */
    application?: string;
    /** The file it was read from (absolute), for matching directory sources. */
    abs?: string;
}

export interface Skip {
    file: string;
    reason: string;
}

export interface LoadResult {
    objects: ManifestObject[];
    files: number;
    documents: number;
    skipped: Skip[];
    /** Folders rendered (kustomize, Helm) or .jsonnet files evaluated. */
    rendered: number;
    /** Sources and generators that could not be rendered or expanded here, one line each (stderr, summary). */
    notRendered: string[];
}

export interface LoadOptions {
    /** Repository root for source paths (default: the git top level of the first path, else its folder). */
    repoRoot?: string;
    /** Standard input's text, when "-" is given (read by the caller). */
    stdin?: () => string;
    /** Base folder for shown file names (default: the current directory). */
    cwd?: string;
    /** Time allowed for rendering (kustomize, Helm, jsonnet) in the whole run; default 300 s. */
    timeoutMs?: number;
}

/** The git top level containing `dir`, or undefined outside a work tree (or without git). */
export function gitTopLevel(dir: string): string | undefined {
    try {
        return execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: dir, stdio: ["ignore", "pipe", "ignore"], encoding: "utf8" }).trim() || undefined;
    } catch {
        return undefined;
    }
}

function posix(p: string): string {
    return p.split(path.sep).join("/");
}

function isBinary(buf: Buffer): boolean {
    const n = Math.min(buf.length, 8000);
    for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
    return false;
}

/**
 * Files under a folder, sorted, following no folder twice. A folder that needs rendering (a kustomization,
 * a Helm chart) is never read as raw files: it goes to `roots` instead.
 */
function walk(dir: string, seen: Set<string>, out: string[], roots: string[]): void {
    let real: string;
    try {
        real = fs.realpathSync(dir);
    } catch {
        throw new BadInputError(`${dir}: cannot read folder`);
    }
    if (seen.has(real)) return;
    seen.add(real);
    if (kustomizationFile(dir) || isChart(dir)) {
        roots.push(dir);
        return;
    }
    let entries: fs.Dirent[];
    try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
        throw new BadInputError(`${dir}: cannot read folder`);
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const p = path.join(dir, e.name);
        let isDir = e.isDirectory();
        if (e.isSymbolicLink()) {
            try {
                isDir = fs.statSync(p).isDirectory();
            } catch {
                throw new BadInputError(`${p}: broken symbolic link`);
            }
        }
        if (isDir) {
            if (!e.name.startsWith(".") && e.name !== "node_modules") walk(p, seen, out, roots);
        } else if (EXTENSIONS.has(path.extname(e.name).toLowerCase())) {
            out.push(p);
        }
    }
}

function gvk(apiVersion: string, kind: string): { group: string; version: string } {
    const slash = apiVersion.lastIndexOf("/");
    return slash < 0 ? { group: "core", version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Parses a field path: dotted segments, `[n]` indexes (`spec.envRefs.PULUMI_ACCESS_TOKEN`, `subjects[0]`). */
function fieldSegments(field: string): (string | number)[] {
    const out: (string | number)[] = [];
    for (const part of field.split(".")) {
        const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
        if (!m) {
            out.push(part);
            continue;
        }
        if (m[1] !== "") out.push(m[1]);
        for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
    }
    return out;
}

/**
 * Walks a YAML node along a field path; keys may themselves contain dots (annotation keys), so at each
 * mapping the longest run of segments that names a key wins. Returns the deepest node reached.
 */
function findNode(root: YAML.Node | null | undefined, segments: (string | number)[]): YAML.Node | YAML.Pair | undefined {
    let node: unknown = root;
    let found: YAML.Node | YAML.Pair | undefined = root ?? undefined;
    let i = 0;
    while (i < segments.length) {
        if (YAML.isMap(node)) {
            const map = node as YAML.YAMLMap<unknown, unknown>;
            let matched = false;
            for (let j = segments.length; j > i && !matched; j--) {
                const key = segments.slice(i, j).join(".");
                const pair = map.items.find((p) => YAML.isScalar(p.key) && String(p.key.value) === key);
                if (pair) {
                    found = pair as YAML.Pair;
                    node = pair.value;
                    i = j;
                    matched = true;
                }
            }
            if (!matched) {
                // A field merged in with `<<:` is shown at its merge key.
                const mergePair = map.items.find((p) => YAML.isScalar(p.key) && String(p.key.value) === "<<");
                if (mergePair) found = mergePair as YAML.Pair;
                break;
            }
        } else if (YAML.isSeq(node) && typeof segments[i] === "number") {
            const item = node.items[segments[i] as number];
            if (!YAML.isNode(item)) break;
            found = item;
            node = item;
            i++;
        } else {
            break;
        }
    }
    return found;
}

function startOf(n: YAML.Node | YAML.Pair | undefined): number | undefined {
    if (!n) return undefined;
    if (YAML.isPair(n)) return YAML.isNode(n.key) ? n.key.range?.[0] : startOf(n.value as YAML.Node);
    return n.range?.[0];
}

interface Source {
    /** Shown name. */
    file: string;
    text: string;
    repoPath?: string;
    abs?: string;
    /** Rendered output: positions are looked up in the file it came from (`abs`), not in this text. */
    rendered?: boolean;
}

/** The most nodes a document may expand to through aliases (a "billion laughs" document is bad input). */
const MAX_EXPANDED_NODES = 1_000_000;

/**
 * Positions in one file. The decoder (core/kube-yaml.ts) keeps each document's node tree with the file's
 * offsets; lines and columns are computed only when something needs one (a finding, a bad-input message).
 */
class FileLocator {
    private lineCounter?: YAML.LineCounter;

    constructor(
        private readonly text: string,
        private readonly roots: (YAML.Node | undefined)[],
    ) {}

    /** Line and column (1-based) of an offset in the file. */
    pos(offset: number | undefined): { line: number; column: number } {
        if (!this.lineCounter) {
            this.lineCounter = new YAML.LineCounter();
            this.lineCounter.addNewLine(0);
            for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) this.lineCounter.addNewLine(i + 1);
        }
        const p = this.lineCounter.linePos(Math.max(0, Math.min(offset ?? 0, this.text.length)));
        return { line: p.line, column: p.col };
    }

    /** The root node of document i (offsets are the file's). */
    document(i: number): YAML.Node | undefined {
        return this.roots[i];
    }
}

/** Where an object is: its file's locator and the path to its node (document, then List item). */
interface Place {
    locator: FileLocator;
    /** The document's index in the file (empty documents counted). */
    doc: number;
    item?: number;
}

function placeNode(p: Place): YAML.Node | undefined {
    const root = p.locator.document(p.doc);
    if (p.item === undefined) return root;
    const items = YAML.isMap(root) ? root.get("items", true) : undefined;
    const item = YAML.isSeq(items) ? items.items[p.item] : undefined;
    return YAML.isNode(item) ? item : root;
}

function placeStart(p: Place): { line: number; column: number } {
    return p.locator.pos(placeNode(p)?.range?.[0]);
}

/**
 * Rejects a document whose aliases expand past MAX_EXPANDED_NODES, or refer to themselves: the fast parser
 * shares aliased nodes, and everything downstream (the SDK's Struct, the rules) would expand them.
 */
function checkExpansion(doc: unknown, where: () => string): void {
    const sizes = new Map<object, number>();
    const active = new Set<object>();
    const size = (v: unknown): number => {
        if (v === null || typeof v !== "object") return 1;
        const known = sizes.get(v);
        if (known !== undefined) return known;
        if (active.has(v)) throw new BadInputError(`${where()}: invalid YAML: an alias refers to a node that contains it`);
        active.add(v);
        let n = 1;
        for (const child of Array.isArray(v) ? v : Object.values(v)) {
            n += size(child);
            if (n > MAX_EXPANDED_NODES) throw new BadInputError(`${where()}: invalid YAML: aliases expand to more than ${MAX_EXPANDED_NODES.toLocaleString("en")} nodes`);
        }
        active.delete(v);
        sizes.set(v, n);
        return n;
    };
    size(doc);
}

/**
 * Parses one file's documents into objects, decoded as Kubernetes decodes them (core/kube-yaml.ts: YAML 1.1
 * booleans, merge keys, go-yaml's numbers); throws BadInputError (one line) on a document that does not decode.
 */
function parseSource(src: Source, out: LoadResult, fromFolder: boolean): void {
    let decoded: ReturnType<typeof decodeKubeYaml>;
    try {
        decoded = decodeKubeYaml(src.text);
    } catch (e) {
        if (!(e instanceof KubeYamlError)) throw e;
        const p = new FileLocator(src.text, []).pos(e.offset);
        throw new BadInputError(`${src.file}:${p.line}:${p.column}: invalid YAML: ${e.reason.split("\n")[0]}`);
    }
    const locator = new FileLocator(
        src.text,
        decoded.map((d) => d.node),
    );
    decoded.forEach(({ value }, doc) => {
        out.documents++;
        if (value === null || value === undefined || value === "") return; // empty document
        const place: Place = src.rendered ? originalPlace(src.abs, value) : { locator, doc };
        const where = () => {
            const p = placeStart(place);
            return `${src.file}:${p.line}:${p.column}`;
        };
        checkExpansion(value, where);
        if (typeof value !== "object" || Array.isArray(value)) {
            const what = Array.isArray(value) ? "a list" : typeof value === "string" ? "a string" : `a ${typeof value}`;
            if (fromFolder) {
                out.skipped.push({ file: `${src.file}:${placeStart(place).line}`, reason: `not a Kubernetes object (${what})` });
                return;
            }
            throw new BadInputError(`${where()}: the document is ${what}, not a Kubernetes object (a mapping with apiVersion and kind)`);
        }
        addObject(src, value as Record<string, unknown>, place, out, fromFolder);
    });
}

/** Decoded source files, for placing rendered objects at their base file's lines (one load at a time). */
const originals = new Map<string, { locator: FileLocator; values: unknown[] } | undefined>();

/**
 * Where a rendered object is in the file it came from: the document of the same kind whose name the rendered
 * name contains (kustomize adds prefixes and suffixes); else line 1 of that file (a chart template, a folder).
 */
function originalPlace(abs: string | undefined, value: unknown): Place {
    const fallback: Place = { locator: new FileLocator("", []), doc: 0 };
    if (!abs || !/\.(ya?ml|json)$/i.test(abs)) return fallback;
    if (!originals.has(abs)) {
        try {
            const text = fs.readFileSync(abs, "utf8");
            const docs = decodeKubeYaml(text);
            originals.set(abs, { locator: new FileLocator(text, docs.map((d) => d.node)), values: docs.map((d) => d.value) });
        } catch {
            originals.set(abs, undefined);
        }
    }
    const orig = originals.get(abs);
    if (!orig) return fallback;
    const o = (value ?? {}) as Record<string, unknown>;
    const name = String(((o.metadata ?? {}) as Record<string, unknown>).name ?? "");
    const doc = orig.values.findIndex((v) => {
        const x = (v ?? {}) as Record<string, unknown>;
        const n = ((x.metadata ?? {}) as Record<string, unknown>).name;
        return x.kind === o.kind && typeof n === "string" && n !== "" && name.includes(n);
    });
    return { locator: orig.locator, doc: doc < 0 ? orig.values.findIndex((v) => v !== null) : doc };
}

function addObject(src: Source, obj: Record<string, unknown>, place: Place, out: LoadResult, fromFolder: boolean): void {
    const where = () => placeStart(place);
    const { apiVersion, kind } = obj;
    if (typeof apiVersion !== "string" || typeof kind !== "string" || apiVersion === "" || kind === "") {
        const reason = "not a Kubernetes object (no apiVersion and kind)";
        if (fromFolder) {
            out.skipped.push({ file: `${src.file}:${where().line}`, reason });
            return;
        }
        throw new BadInputError(`${src.file}:${where().line}:${where().column}: ${reason}`);
    }
    // `kind: List` (and the typed lists kubectl prints) hold their objects in `items`.
    if (kind === "List" || (kind.endsWith("List") && Array.isArray(obj.items))) {
        const items = Array.isArray(obj.items) ? obj.items : [];
        items.forEach((item, i) => {
            const itemPlace: Place = { ...place, item: i };
            if (item === null || typeof item !== "object" || Array.isArray(item)) {
                const p = placeStart(itemPlace);
                throw new BadInputError(`${src.file}:${p.line}:${p.column}: items[${i}] of the List is not a Kubernetes object`);
            }
            addObject(src, item as Record<string, unknown>, itemPlace, out, fromFolder);
        });
        return;
    }
    const { group, version } = gvk(apiVersion, kind);
    const read = (KINDS_RULES_READ[group === "core" ? "core" : group] ?? []).includes(kind);
    const metadata = (obj.metadata !== null && typeof obj.metadata === "object" && !Array.isArray(obj.metadata) ? obj.metadata : {}) as Record<string, unknown>;
    const name = metadata.name;
    const namespace = metadata.namespace;
    if (typeof name !== "string" || name === "") {
        if (!read) {
            // e.g. a kustomization.yaml: nothing to govern, nothing to name.
            out.objects.push(makeObject(src, obj, kind, `${kind} at ${src.file}:${where().line}`, group, version, place));
            return;
        }
        throw new BadInputError(`${src.file}:${where().line}:${where().column}: ${kind} has no metadata.name`);
    }
    if (namespace !== undefined && typeof namespace !== "string") {
        throw new BadInputError(`${src.file}:${where().line}:${where().column}: ${kind} ${JSON.stringify(name)}: metadata.namespace is not a string`);
    }
    const identity = namespace ? `${kind}/${namespace}/${name}` : `${kind}/${name}`;
    const o = makeObject(src, obj, kind, identity, group, version, place);
    o.read = read;
    o.named = true;
    if (src.repoPath !== undefined) {
        const annotations = (metadata.annotations !== null && typeof metadata.annotations === "object" && !Array.isArray(metadata.annotations) ? metadata.annotations : {}) as Record<string, unknown>;
        if (annotations[SOURCE_PATH] === undefined) {
            o.object = { ...obj, metadata: { ...metadata, annotations: { ...annotations, [SOURCE_PATH]: src.repoPath } } };
        }
    }
    out.objects.push(o);
}

function makeObject(src: Source, obj: Record<string, unknown>, kind: string, identity: string, group: string, version: string, place: Place): ManifestObject {
    const type = `kubernetes:${group}/${version}:${kind}`;
    let start: { line: number; column: number } | undefined;
    const at = () => (start ??= placeStart(place));
    return {
        file: src.file,
        // Lines are found on demand (FileLocator): most objects never need one.
        get line() {
            return at().line;
        },
        get column() {
            return at().column;
        },
        identity,
        type,
        urn: `${MANIFEST_URN_PREFIX}${type}::${identity}`,
        kind,
        object: obj,
        read: false,
        named: false,
        repoPath: src.repoPath,
        abs: src.abs,
        locate: (field: string) => {
            const begin = startOf(findNode(placeNode(place), fieldSegments(field)));
            return begin === undefined ? at() : place.locator.pos(begin);
        },
    };
}

function readFile(file: string, shown: string, fromFolder: boolean, out: LoadResult): string | undefined {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(file);
    } catch {
        throw new BadInputError(`${shown}: no such file or folder`);
    }
    if (stat.size > MAX_FILE_BYTES) {
        const reason = `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`;
        if (fromFolder) {
            out.skipped.push({ file: shown, reason });
            return undefined;
        }
        throw new BadInputError(`${shown}: ${reason}; not read`);
    }
    let buf: Buffer;
    try {
        buf = fs.readFileSync(file);
    } catch {
        throw new BadInputError(`${shown}: cannot read file`);
    }
    if (isBinary(buf)) {
        if (fromFolder) {
            out.skipped.push({ file: shown, reason: "binary file" });
            return undefined;
        }
        throw new BadInputError(`${shown}: binary file, not a manifest`);
    }
    return buf.toString("utf8");
}

/** Loads every object of the given paths; duplicates and bad input throw BadInputError (one line). */
export function loadManifests(paths: string[], o: LoadOptions = {}): LoadResult & { repoRoot: string } {
    const cwd = o.cwd ?? process.cwd();
    const first = paths.find((p) => p !== "-");
    const firstDir = first ? path.resolve(cwd, first) : cwd;
    const startDir = fs.existsSync(firstDir) && fs.statSync(firstDir).isDirectory() ? firstDir : path.dirname(firstDir);
    const repoRoot = path.resolve(cwd, o.repoRoot ?? gitTopLevel(startDir) ?? cwd);
    if (o.repoRoot !== undefined && !(fs.existsSync(repoRoot) && fs.statSync(repoRoot).isDirectory())) {
        throw new BadInputError(`--repo-root ${o.repoRoot}: no such folder`);
    }
    originals.clear();
    const out: LoadResult = { objects: [], files: 0, documents: 0, skipped: [], rendered: 0, notRendered: [] };
    const shownName = (abs: string) => {
        const rel = path.relative(cwd, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? abs : posix(rel);
    };
    const repoPathOf = (abs: string) => {
        const rel = path.relative(repoRoot, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : posix(rel);
    };
    const ctx: RenderContext = { deadline: Date.now() + (o.timeoutMs ?? 300_000), repoRoot, show: (abs) => repoPathOf(abs) ?? shownName(abs) };
    /** Folders that need rendering, found by walking or named directly. */
    const roots: string[] = [];
    const readPaths = new Set<string>();
    const readOne = (f: string, fromFolder: boolean, into: LoadResult = out) => {
        const shown = shownName(f);
        const text = readFile(f, shown, fromFolder, into);
        if (text === undefined) return;
        into.files++;
        readPaths.add(f);
        parseSource({ file: shown, text, repoPath: repoPathOf(f), abs: f }, into, fromFolder);
    };
    let stdinRead = false;
    for (const p of paths) {
        if (p === "-") {
            if (stdinRead) throw new BadInputError("-: standard input given twice");
            stdinRead = true;
            const text = o.stdin ? o.stdin() : fs.readFileSync(0, "utf8");
            if (text.includes("\u0000")) throw new BadInputError("<stdin>: binary input, not a manifest");
            out.files++;
            parseSource({ file: "<stdin>", text }, out, false);
            continue;
        }
        const abs = path.resolve(cwd, p);
        let stat: fs.Stats;
        try {
            stat = fs.statSync(abs);
        } catch {
            throw new BadInputError(`${p}: no such file or folder`);
        }
        if (stat.isDirectory()) {
            const files: string[] = [];
            walk(abs, new Set(), files, roots);
            for (const f of files) readOne(f, true);
        } else if (KUSTOMIZATION_FILES.includes(path.basename(abs)) || path.basename(abs) === "Chart.yaml") {
            roots.push(path.dirname(abs));
        } else {
            readOne(abs, false);
        }
    }
    placeApplications(out, ctx, roots, readOne, (stream, into) => {
        into.files++;
        parseSource({ file: shownName(stream.from), text: stream.text, repoPath: repoPathOf(stream.from), abs: stream.from, rendered: true }, into, true);
    });
    const seen = new Map<string, ManifestObject>();
    for (const obj of out.objects) {
        if (!obj.named) continue;
        const prev = seen.get(obj.identity);
        if (prev) {
            throw new BadInputError(`${obj.identity} is defined twice: ${prev.file}:${prev.line} and ${obj.file}:${obj.line} (an object's identity is Kind/namespace/name)`);
        }
        seen.set(obj.identity, obj);
    }
    return { ...out, repoRoot };
}

/** The object as it lands: in `namespace` when it is namespaced and names none; attributed to `app`. */
function land(o: ManifestObject, namespace: string | undefined, app: string): void {
    o.application = app;
    if (!namespace || !o.named || CLUSTER_SCOPED.has(o.kind)) return;
    const meta = (o.object.metadata ?? {}) as Record<string, unknown>;
    if (typeof meta.namespace === "string" && meta.namespace !== "") return;
    o.object = { ...o.object, metadata: { ...meta, namespace } };
    const name = String(meta.name);
    o.identity = `${o.kind}/${namespace}/${name}`;
    o.urn = `${o.urn.slice(0, o.urn.lastIndexOf("::") + 2)}${o.identity}`;
}

/**
 * Argo CD's part: ApplicationSets expanded into Applications; each Application's sources rendered (or its
 * directory files read) and their objects placed in its destination namespace; folders that need rendering
 * and no Application renders are rendered with defaults (a kustomization no other kustomization uses as a
 * base, a chart that is not another chart's subchart).
 */
function placeApplications(
    out: LoadResult,
    ctx: RenderContext,
    roots: string[],
    readOne: (f: string, fromFolder: boolean, into?: LoadResult) => void,
    readStream: (s: RenderedStream, into: LoadResult) => void,
): void {
    const fresh = (): LoadResult => ({ objects: [], files: 0, documents: 0, skipped: [], rendered: 0, notRendered: [] });
    const merge = (from: LoadResult) => {
        out.objects.push(...from.objects);
        out.files += from.files;
        out.documents += from.documents;
        out.skipped.push(...from.skipped);
    };
    // ApplicationSets: the Applications they create are objects of the repository too.
    for (const set of out.objects.filter((x) => x.named && isApplicationSet(x.object))) {
        const expansion = expandApplicationSet(set.object, ctx.repoRoot);
        out.notRendered.push(...expansion.notExpanded);
        expansion.applications.forEach((app) => {
            const meta = (app.metadata ?? {}) as Record<string, unknown>;
            if (typeof meta.name !== "string" || meta.name === "") return;
            const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined;
            const identity = ns ? `Application/${ns}/${meta.name}` : `Application/${meta.name}`;
            const type = "kubernetes:argoproj.io/v1alpha1:Application";
            out.objects.push({ ...set, identity, type, urn: `${MANIFEST_URN_PREFIX}${type}::${identity}`, kind: "Application", object: app, read: true, named: true, application: `ApplicationSet ${set.identity}` });
        });
    }
    const rendered = new Set<string>();
    for (const app of out.objects.filter((x) => x.named && isApplication(x.object))) {
        const meta = (app.object.metadata ?? {}) as Record<string, unknown>;
        const appName = `${typeof meta.namespace === "string" ? meta.namespace + "/" : ""}${String(meta.name)}`;
        const result = applicationOutput(app.object, ctx);
        out.notRendered.push(...result.notes);
        result.rendered.forEach((d) => rendered.add(d));
        const files = new Set(result.files);
        for (const f of result.files) {
            if (!out.objects.some((x) => x.abs === f)) {
                const extra = fresh();
                readOne(f, true, extra);
                merge(extra);
            }
        }
        for (const x of out.objects) if (x.abs !== undefined && files.has(x.abs) && x !== app) land(x, result.namespace, appName);
        for (const s of result.streams) {
            const extra = fresh();
            readStream(s, extra);
            out.rendered++;
            for (const x of extra.objects) land(x, result.namespace, appName);
            merge(extra);
        }
    }
    // Folders nobody renders: leaves only (bases and subcharts are rendered through what uses them).
    const unique = [...new Set(roots.map((r) => path.resolve(r)))].filter((r) => !rendered.has(r));
    const used = new Set<string>();
    for (const r of [...new Set([...roots.map((x) => path.resolve(x)), ...rendered])]) {
        const k = kustomizationFile(r);
        if (k) {
            let doc: Record<string, unknown> = {};
            try {
                doc = (YAML.parse(fs.readFileSync(k, "utf8")) ?? {}) as Record<string, unknown>;
            } catch {
                doc = {};
            }
            for (const field of ["resources", "bases", "components"]) {
                for (const e of Array.isArray(doc[field]) ? (doc[field] as unknown[]) : []) if (typeof e === "string") used.add(path.resolve(r, e));
            }
        }
    }
    for (const r of unique) {
        if (used.has(r) || [...rendered].some((d) => d === r)) continue;
        if (path.basename(path.dirname(r)) === "charts" && isChart(path.dirname(path.dirname(r)))) continue;
        const streams = kustomizationFile(r) ? renderKustomize(r, ctx) : renderHelm(r, ctx, { releaseName: path.basename(r) });
        for (const s of streams) {
            const extra = fresh();
            readStream(s, extra);
            out.rendered++;
            merge(extra);
        }
    }
}

/** The resources the evaluator gets: every named object, as the provider would register it. */
export function evalResources(objects: ManifestObject[]): EvalResource[] {
    return objects.filter((o) => o.named).map((o) => ({ type: o.type, name: o.identity, urn: o.urn, props: o.object }));
}
