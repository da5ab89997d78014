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
 * (file:line:column and a fixed reason, never the parser's text, which can quote the document), a document
 * that is not a mapping, an unreadable path (exit 2).
 *
 * Reads are bounded by the bytes actually read, never by what `stat` says: a file, and standard input, may
 * hold at most MAX_FILE_BYTES; only regular files are opened (a device such as /dev/zero, a FIFO or a socket
 * is refused without being read, so nothing blocks or grows). Text is decoded as kubectl decodes it: a UTF-8
 * byte-order mark is dropped, UTF-16 with a byte-order mark (little or big endian) is decoded; anything else
 * must be valid UTF-8 without NUL bytes. A file that is oversized, undecodable (binary, Latin-1, ...) or not
 * regular fails the run, inside a folder too, unless `skipUnreadable` (`--skip-unreadable`) is set: then a
 * folder's such files are skipped with a line each. Documents that are not Kubernetes objects (no
 * apiVersion/kind, e.g. a CI workflow) are skipped and counted; hidden folders (`.git`, `.github`) and
 * `node_modules` are not walked. Alias expansion is bounded per run (MAX_ALIAS_EXPANSION over all documents).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as jsyaml from "js-yaml";
import * as YAML from "yaml";
import { BadInputError } from "../errors";
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
    /** The file's absolute path (undefined for standard input). */
    path?: string;
    /** Finds the line and column of a field path (`spec.branch`, `subjects[0]`), or of its nearest parent. */
    locate(field: string): { line: number; column: number };
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
    /** What aliases have added so far in this run (bounded by MAX_ALIAS_EXPANSION). */
    budget: { aliasNodes: number };
}

export interface LoadOptions {
    /** Repository root for source paths (default: the git top level of the first path, else its folder). */
    repoRoot?: string;
    /** Standard input's text, when "-" is given (read by the caller). */
    stdin?: () => string;
    /** Base folder for shown file names (default: the current directory). */
    cwd?: string;
    /** Skip a folder's oversized, undecodable and non-regular files (a line each) instead of failing the run. */
    skipUnreadable?: boolean;
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

/** Why a file's bytes are not a manifest's text (undecodable), or its text as kubectl decodes it. */
export function decodeText(buf: Buffer): { text: string } | { problem: string } {
    let text: string;
    if (buf[0] === 0xff && buf[1] === 0xfe) {
        text = new TextDecoder("utf-16le").decode(buf.subarray(2));
    } else if (buf[0] === 0xfe && buf[1] === 0xff) {
        text = new TextDecoder("utf-16be").decode(buf.subarray(2));
    } else {
        if (buf.includes(0)) return { problem: "binary file, not a manifest" };
        try {
            text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buf);
        } catch {
            return { problem: "not UTF-8 text (nor UTF-16 with a byte-order mark)" };
        }
        return { text };
    }
    if (text.includes("\u0000")) return { problem: "binary file, not a manifest" };
    return { text };
}

/**
 * Reads at most `max` bytes from an open descriptor, chunk by chunk; more is an error (`oversized`). The
 * count is of bytes read, so a device or a pipe that never ends is bounded like a file.
 */
function readBounded(fd: number, max: number): { buf: Buffer } | { oversized: true } {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
        const chunk = Buffer.allocUnsafe(Math.min(1 << 20, max + 1 - total));
        let n: number;
        try {
            n = fs.readSync(fd, chunk, 0, chunk.length, null);
        } catch (e) {
            // Standard input may be a non-blocking pipe: wait for data instead of failing.
            if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
                Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
                continue;
            }
            throw e;
        }
        if (n === 0) break;
        chunks.push(chunk.subarray(0, n));
        total += n;
        if (total > max) return { oversized: true };
    }
    return { buf: Buffer.concat(chunks, total) };
}

/** Standard input, bounded by MAX_FILE_BYTES of bytes read, decoded as files are. */
export function readStdin(fd = 0): string {
    let r: ReturnType<typeof readBounded>;
    try {
        r = readBounded(fd, MAX_FILE_BYTES);
    } catch {
        throw new BadInputError("<stdin>: cannot read standard input");
    }
    if ("oversized" in r) throw new BadInputError(`<stdin>: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; not read`);
    const d = decodeText(r.buf);
    if ("problem" in d) throw new BadInputError(`<stdin>: ${d.problem}`);
    return d.text;
}

/** Files under a folder, sorted, following no folder twice. */
function walk(dir: string, seen: Set<string>, out: string[]): void {
    let real: string;
    try {
        real = fs.realpathSync(dir);
    } catch {
        throw new BadInputError(`${dir}: cannot read folder`);
    }
    if (seen.has(real)) return;
    seen.add(real);
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
            if (!e.name.startsWith(".") && e.name !== "node_modules") walk(p, seen, out);
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

/** Each mapping's scalar keys split at dots (keys may contain dots: annotation keys), computed once a mapping. */
const splitKeys = new WeakMap<YAML.YAMLMap, { parts: string[]; pair: YAML.Pair }[]>();

function keysOf(map: YAML.YAMLMap<unknown, unknown>): { parts: string[]; pair: YAML.Pair }[] {
    let keys = splitKeys.get(map);
    if (!keys) {
        keys = [];
        for (const pair of map.items) if (YAML.isScalar(pair.key)) keys.push({ parts: String(pair.key.value).split("."), pair: pair as YAML.Pair });
        splitKeys.set(map, keys);
    }
    return keys;
}

/**
 * Walks a YAML node along a field path; keys may themselves contain dots (annotation keys), so at each
 * mapping the key that names the longest run of segments wins. Linear: each mapping on the way compares
 * each of its keys once, part by part, against the segments from the current one (never joining or
 * slicing the rest of the path), so the cost is bounded by the size of the keys on the path, whatever the
 * number of segments. Returns the deepest node reached.
 */
function findNode(root: YAML.Node | null | undefined, segments: (string | number)[]): YAML.Node | YAML.Pair | undefined {
    let node: unknown = root;
    let found: YAML.Node | YAML.Pair | undefined = root ?? undefined;
    let i = 0;
    while (i < segments.length) {
        if (YAML.isMap(node)) {
            let best: { length: number; pair: YAML.Pair } | undefined;
            for (const k of keysOf(node as YAML.YAMLMap<unknown, unknown>)) {
                if (k.parts.length > segments.length - i || (best && k.parts.length <= best.length)) continue;
                let match = true;
                for (let j = 0; j < k.parts.length && match; j++) match = String(segments[i + j]) === k.parts[j];
                if (match) best = { length: k.parts.length, pair: k.pair };
            }
            if (!best) break;
            found = best.pair;
            node = best.pair.value;
            i += best.length;
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
    /** Absolute path (none for standard input). */
    path?: string;
}

/**
 * YAML 1.2's core schema (what the `yaml` package reads by default: no timestamps, no merge keys), where a
 * tag the schema does not know (`!Ref`, `!!binary`, a full `!<tag:...>`) reads as its plain value, as it
 * does there, instead of failing the file.
 */
const SCHEMA = jsyaml.CORE_SCHEMA.extend(
    (["scalar", "sequence", "mapping"] as const).flatMap((kind) => ["!", "tag:"].map((prefix) => new jsyaml.Type(prefix, { kind, multi: true, construct: (data: unknown) => data }))),
);

/** The most nodes a document may expand to through aliases (a "billion laughs" document is bad input). */
const MAX_EXPANDED_NODES = 1_000_000;
/** The most nodes aliases may add over a whole run (all files and documents): many small bombs are one big one. */
export const MAX_ALIAS_EXPANSION = 1_000_000;

/**
 * Positions in one file, found on demand. The fast parser (js-yaml) reports where each document's root node
 * starts; a document is parsed a second time, alone, by the `yaml` package's position-keeping parser only when
 * something needs a line in it (a finding, a bad-input message), so a repository that passes pays nothing.
 */
class FileLocator {
    private lineCounter?: YAML.LineCounter;
    private readonly parsed = new Map<number, YAML.Node | undefined>();

    /** `starts[i]`: the offset where js-yaml began document i's root node. */
    constructor(
        private readonly text: string,
        private readonly starts: number[],
    ) {}

    /** Line and column (1-based) of an offset in the file. */
    pos(offset: number | undefined): { line: number; column: number } {
        if (!this.lineCounter) {
            // The `yaml` package's own line index, fed the file's line starts (its parser was not run on the file).
            this.lineCounter = new YAML.LineCounter();
            this.lineCounter.addNewLine(0);
            for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) this.lineCounter.addNewLine(i + 1);
        }
        const p = this.lineCounter.linePos(Math.max(0, Math.min(offset ?? 0, this.text.length)));
        return { line: p.line, column: p.col };
    }

    /** The root node of document i, parsed alone from the start of its root's line; offsets are the file's. */
    document(i: number): YAML.Node | undefined {
        if (this.parsed.has(i)) return this.parsed.get(i);
        const lineStart = (offset: number) => this.text.lastIndexOf("\n", offset - 1) + 1;
        const from = lineStart(this.starts[i] ?? 0);
        const to = i + 1 < this.starts.length ? Math.max(from, lineStart(this.starts[i + 1])) : this.text.length;
        const docs = YAML.parseAllDocuments(this.text.slice(from, to), { uniqueKeys: false, prettyErrors: false });
        const list = Array.isArray(docs) ? docs : [docs];
        const node = list.map((d) => d.contents).find((c): c is YAML.ParsedNode => c !== null && !isEmptyScalar(c));
        if (node) shift(node, from);
        this.parsed.set(i, node ?? undefined);
        return node ?? undefined;
    }
}

/** Moves every range of a node tree by `by` (a document parsed from a slice of its file). */
function shift(root: YAML.Node, by: number): void {
    if (by === 0) return;
    // visit() reaches the root, every collection, scalar and alias, and the keys of pairs.
    YAML.visit(root, {
        Node(_key, n) {
            if (n.range) n.range = [n.range[0] + by, n.range[1] + by, n.range[2] + by];
        },
    });
}

function isEmptyScalar(n: YAML.Node): boolean {
    return YAML.isScalar(n) && (n.value === null || n.value === "");
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
 * Rejects a document whose aliases expand past MAX_EXPANDED_NODES, or refer to themselves, and a run whose
 * aliases together add more than MAX_ALIAS_EXPANSION nodes (`budget`, shared by every document of the run):
 * the fast parser shares aliased nodes, and everything downstream (the SDK's Struct, the rules) would expand
 * them.
 */
function checkExpansion(doc: unknown, where: () => string, budget: { aliasNodes: number }): void {
    const sizes = new Map<object, number>();
    const active = new Set<object>();
    // Nodes as written (each object once, with its scalar children): the expansion beyond them is the aliases'.
    let written = 0;
    const size = (v: unknown): number => {
        if (v === null || typeof v !== "object") return 1;
        const known = sizes.get(v);
        if (known !== undefined) return known;
        if (active.has(v)) throw new BadInputError(`${where()}: invalid YAML: an alias refers to a node that contains it`);
        active.add(v);
        let n = 1;
        written++;
        for (const child of Array.isArray(v) ? v : Object.values(v)) {
            if (child === null || typeof child !== "object") written++;
            n += size(child);
            if (n > MAX_EXPANDED_NODES) throw new BadInputError(`${where()}: invalid YAML: aliases expand to more than ${MAX_EXPANDED_NODES.toLocaleString("en")} nodes`);
        }
        active.delete(v);
        sizes.set(v, n);
        return n;
    };
    const total = size(doc);
    budget.aliasNodes += Math.max(0, total - Math.max(written, 1));
    if (budget.aliasNodes > MAX_ALIAS_EXPANSION) {
        throw new BadInputError(`${where()}: invalid YAML: aliases in this run expand to more than ${MAX_ALIAS_EXPANSION.toLocaleString("en")} extra nodes`);
    }
}

/**
 * A fixed reason for a parse error, by kind: js-yaml's reasons can quote the document (an alias's or a tag's
 * name, a key), and a Secret's value can be what it quotes. Never the parser's text.
 */
export function yamlReason(reason: string): string {
    const kinds: [RegExp, string][] = [
        [/maxDepth|nesting/i, "mappings and sequences nested too deeply (js-yaml's limit: 100 levels)"],
        [/unidentified alias/i, "an alias refers to an anchor that is not defined"],
        [/duplicated mapping key/i, "a mapping key appears twice"],
        [/tag/i, "a tag that cannot be resolved"],
        [/alias|anchor/i, "an invalid anchor or alias"],
        [/indent/i, "bad indentation"],
        [/directive|%YAML|%TAG/i, "an invalid directive"],
        [/end of the stream|unexpected end/i, "the document ends too early"],
        [/escape|quoted|scalar|character/i, "an invalid scalar or character"],
        [/flow|collection|mapping|sequence|block|key/i, "an invalid mapping or sequence"],
        [/document/i, "an invalid document separator"],
    ];
    return kinds.find(([re]) => re.test(reason))?.[1] ?? "cannot parse";
}

/**
 * Parses one file's documents into objects (js-yaml, with SCHEMA); throws BadInputError (one line) on
 * invalid YAML.
 */
function parseSource(src: Source, out: LoadResult, fromFolder: boolean): void {
    const docs: unknown[] = [];
    const starts: number[] = [];
    let depth = 0;
    // The listener sees every node open and close; a node opened at depth 0 is a document's root.
    const listener = (event: "open" | "close", state: { position: number }) => {
        if (event === "open") {
            if (depth === 0) starts.push(state.position);
            depth++;
        } else {
            depth--;
        }
    };
    const locator = new FileLocator(src.text, starts);
    try {
        jsyaml.loadAll(src.text, (d) => docs.push(d), { schema: SCHEMA, listener });
    } catch (e) {
        if (!(e instanceof jsyaml.YAMLException)) throw e;
        // Position and a fixed reason: js-yaml's message and reason can quote the document.
        const at = e.mark ? `:${e.mark.line + 1}:${e.mark.column + 1}` : "";
        throw new BadInputError(`${src.file}${at}: invalid YAML: ${yamlReason(String(e.reason ?? ""))}`);
    }
    docs.forEach((value, doc) => {
        out.documents++;
        if (value === null || value === undefined || value === "") return; // empty document
        const place: Place = { locator, doc };
        const where = () => {
            const p = placeStart(place);
            return `${src.file}:${p.line}:${p.column}`;
        };
        checkExpansion(value, where, out.budget);
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
        path: src.path,
        locate: (field: string) => {
            const begin = startOf(findNode(placeNode(place), fieldSegments(field)));
            return begin === undefined ? at() : place.locator.pos(begin);
        },
    };
}

/**
 * Reads one file, bounded (see the module comment). A problem with a named file is bad input; with a file
 * found in a folder too, unless `skip` (then it is recorded as skipped and undefined is returned).
 */
function readFile(file: string, shown: string, skip: boolean, out: LoadResult): string | undefined {
    const refuse = (reason: string): undefined => {
        if (!skip) throw new BadInputError(`${shown}: ${reason}`);
        out.skipped.push({ file: shown, reason });
        return undefined;
    };
    let fd: number;
    try {
        // Non-blocking: opening a FIFO must not wait for a writer. Only regular files are read.
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
    } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new BadInputError(`${shown}: no such file or folder`);
        if (code === "ENXIO") return refuse("not a regular file (a socket or FIFO); not read");
        return refuse("cannot read file");
    }
    try {
        const stat = fs.fstatSync(fd);
        if (!stat.isFile()) return refuse("not a regular file (a device, FIFO or socket); not read");
        let r: ReturnType<typeof readBounded>;
        try {
            r = readBounded(fd, MAX_FILE_BYTES);
        } catch {
            return refuse("cannot read file");
        }
        if ("oversized" in r) return refuse(`larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; not read`);
        const d = decodeText(r.buf);
        if ("problem" in d) return refuse(d.problem);
        return d.text;
    } finally {
        fs.closeSync(fd);
    }
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
    const out: LoadResult = { objects: [], files: 0, documents: 0, skipped: [], budget: { aliasNodes: 0 } };
    const shownName = (abs: string) => {
        const rel = path.relative(cwd, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? abs : posix(rel);
    };
    const repoPathOf = (abs: string) => {
        const rel = path.relative(repoRoot, abs);
        return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : posix(rel);
    };
    let stdinRead = false;
    for (const p of paths) {
        if (p === "-") {
            if (stdinRead) throw new BadInputError("-: standard input given twice");
            stdinRead = true;
            const text = o.stdin ? o.stdin() : readStdin();
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
            walk(abs, new Set(), files);
            for (const f of files) {
                const shown = shownName(f);
                const text = readFile(f, shown, o.skipUnreadable === true, out);
                if (text === undefined) continue;
                out.files++;
                parseSource({ file: shown, text, repoPath: repoPathOf(f), path: f }, out, true);
            }
        } else {
            const text = readFile(abs, p, false, out);
            out.files++;
            parseSource({ file: shownName(abs), text: text ?? "", repoPath: repoPathOf(abs), path: abs }, out, false);
        }
    }
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

/** The resources the evaluator gets: every named object, as the provider would register it. */
export function evalResources(objects: ManifestObject[]): EvalResource[] {
    return objects.filter((o) => o.named).map((o) => ({ type: o.type, name: o.identity, urn: o.urn, props: o.object }));
}
