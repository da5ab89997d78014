/**
 * Kubernetes' YAML decoding, reproduced: what `kubectl`, Argo CD's repo server and the Kubernetes provider get
 * from a manifest stream. They use apimachinery's YAMLOrJSONDecoder (a stream starting with `{` is JSON, else
 * documents split at lines starting with `---`) and sigs.k8s.io/yaml (go-yaml v2), so unlike YAML 1.2: `yes`/`on`/`y`
 * are booleans, integers follow Go (`0x1F`, `017` octal), `<<` merges in go-yaml's order (a merge overwrites keys
 * before it), a repeated key keeps its last value, map keys become strings; the full list is in docs/check.md,
 * "Inputs and decoding". Two paths give the same values: the exact one (./yaml-exact-path.ts, the `yaml` package
 * with node offsets) and the fast one (./yaml-fast-path.ts, js-yaml with go-yaml's resolver), which hands any
 * document it cannot reproduce to the exact one. test/integration/gitops/decode/kube-yaml.spec.ts holds both to
 * the real Go decoder (toolchain/kube-yaml).
 */
import * as jsyaml from "js-yaml";
import * as YAML from "yaml";
import { KubeYamlError } from "./kube-yaml-error";
import { FAST_SCHEMA_OPTIONS, fastDecode } from "./yaml-fast-path";
import { exactDecode, shift } from "./yaml-exact-path";
import { ParseLog, PosNode, fromYamlNode } from "./yaml-positions";
import { extended } from "../../support/shapes";

/** What the decoder throws; its own module, so that both paths throw it too. */
export { KubeYamlError };

export interface KubeDocument {
    /** The decoded value (plain JSON); null for an empty document. */
    value: unknown;
    /** Offset of the document's root node in the stream (of the chunk when the document is empty). */
    readonly start: number;
    /** The document's root node, ranges in stream offsets (undefined for an empty document); parsed on demand. */
    readonly node?: YAML.Node;
    /** Where its fields are (stream offsets; ./yaml-positions.ts), found on demand: what locating a finding reads. */
    readonly positions?: PosNode;
}

/** Set to force the exact path (tests compare both paths with the Go decoder). */
export const decodeOptions = { fastPath: true };

/**
 * apimachinery's YAMLReader: documents are the text between lines that start with `---` (only spaces or a
 * comment may follow the marker on its line). Returns [offset, text] chunks.
 */
function splitDocuments(text: string, from: number): [number, string][] {
    const chunks: [number, string][] = [];
    let start = from;
    let pos = from;
    while (pos < text.length) {
        const nl = text.indexOf("\n", pos);
        const end = nl < 0 ? text.length : nl + 1;
        if (text.startsWith("---", pos)) {
            const rest = text.slice(pos + 3, end).trim();
            if (rest.length > 0 && rest[0] !== "#")
                throw new KubeYamlError(
                    "invalid document separator: only spaces or a comment may follow `---` on its line",
                    pos,
                );
            if (pos > start) chunks.push([start, text.slice(start, pos)]);
            start = end;
        }
        pos = end;
    }
    if (start < text.length) chunks.push([start, text.slice(start)]);
    return chunks;
}

/** The end of the JSON value starting at `i` (a bracket-balanced run, or up to the next space). */
function jsonValueEnd(text: string, i: number): number {
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
        const c = text[i];
        if (inString) {
            if (c === "\\") i++;
            else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === "{" || c === "[") depth++;
        else if (c === "}" || c === "]") {
            depth--;
            if (depth <= 0) return i + 1;
        } else if (depth === 0 && /\s/.test(c)) return i;
    }
    return text.length;
}

/**
 * A stream whose first non-space character is `{`: JSON values, as Go's json.Decoder reads them, until one
 * does not parse. Then, as apimachinery's YAMLOrJSONDecoder does when at most one JSON value was read, the
 * rest (from after the last value and the spaces up to the first line break) is read as a YAML stream.
 */
function decodeJsonStream(text: string): KubeDocument[] {
    const out: KubeDocument[] = [];
    let consumed = 0;
    while (true) {
        let i = consumed;
        while (i < text.length && /\s/.test(text[i])) i++;
        if (i >= text.length) return out;
        const end = jsonValueEnd(text, i);
        let value: unknown;
        try {
            value = JSON.parse(text.slice(i, end));
        } catch (e) {
            if (out.length > 1)
                throw new KubeYamlError(
                    `invalid JSON: ${String((e as Error).message)
                        .split("\n")[0]
                        .replace(/ in JSON at position \d+.*$/, "")}`,
                    i,
                );
            let from = consumed;
            while (from < text.length && /\s/.test(text[from]) && text[from] !== "\n") from++;
            if (text[from] === "\n") from++;
            return [...out, ...decodeYamlStream(text, from)];
        }
        const node =
            YAML.parseDocument(text.slice(i, end), { version: "1.1", schema: "failsafe", uniqueKeys: false })
                .contents ?? undefined;
        if (node) shift(node, i);
        out.push({ value, start: i, node: node ?? undefined, positions: fromYamlNode(node) });
        consumed = end;
    }
}

/**
 * A document the fast path decoded. Positions are needed for some documents (a finding, an error): js-yaml's
 * parse events, recorded while decoding, give them for most documents (built when asked); the exact path's node
 * tree, then parsed, for the others. A class, its accessors on the prototype: an object literal with getters gives
 * each document a hidden class of its own and its properties in a dictionary, kept for the whole run.
 */
class LoggedDocument implements KubeDocument {
    private parsed?: { node?: YAML.Node };
    private found?: { positions?: PosNode };

    constructor(
        readonly value: unknown,
        private readonly chunk: string,
        private readonly offset: number,
        private readonly log: ParseLog,
        private readonly mark: number,
    ) {}

    get start(): number {
        return this.positions?.start ?? this.offset;
    }

    get node(): YAML.Node | undefined {
        return (this.parsed ??= exactDecode(this.chunk, this.offset)).node;
    }

    get positions(): PosNode | undefined {
        return (this.found ??= {
            positions: this.log.positions(this.mark, this.chunk, this.offset) ?? fromYamlNode(this.node),
        }).positions;
    }
}

/** A document the exact path decoded: its node tree is at hand, its positions read from it when asked. */
class ExactDocument implements KubeDocument {
    readonly value: unknown;
    readonly start: number;
    readonly node?: YAML.Node;
    private found?: { positions?: PosNode };

    constructor(exact: { value: unknown; node?: YAML.Node }, offset: number) {
        this.value = exact.value;
        this.start = exact.node?.range?.[0] ?? offset;
        this.node = exact.node;
    }

    get positions(): PosNode | undefined {
        return (this.found ??= { positions: fromYamlNode(this.node) }).positions;
    }
}

function decodeYamlStream(text: string, from: number): KubeDocument[] {
    const out: KubeDocument[] = [];
    const log = new ParseLog();
    const options: jsyaml.LoadOptions = extended(FAST_SCHEMA_OPTIONS, { listener: log.listener });
    for (const [offset, chunk] of splitDocuments(text, from)) {
        const fast = decodeOptions.fastPath ? fastDecode(chunk, log, options) : undefined;
        if (fast) {
            out.push(new LoggedDocument(fast.value, chunk, offset, log, fast.mark));
            continue;
        }
        out.push(new ExactDocument(exactDecode(chunk, offset), offset));
    }
    log.end();
    return out;
}

/**
 * Decodes a manifest stream as Kubernetes does. Every document is returned (an empty one with value null);
 * throws KubeYamlError at the first document that does not decode, as Argo CD and kubectl stop there.
 */
export function decodeKubeYaml(text: string): KubeDocument[] {
    return /^\s*\{/.test(text.slice(0, 4096)) ? decodeJsonStream(text) : decodeYamlStream(text, 0);
}

/**
 * The first document of a text as sigs.k8s.io/yaml's Unmarshal reads it (null when empty), for the files the
 * Kubernetes tools read that way and check reads beside them: Chart.yaml (Helm), kustomization files
 * (kustomize), Argo CD's elementsYaml and git files generator files. `ok: false` when the text does not decode;
 * the tool that reads it then says why.
 */
export function firstKubeYamlValue(text: string): { ok: true; value: unknown } | { ok: false } {
    try {
        const docs = decodeKubeYaml(text);
        return { ok: true, value: docs.length > 0 ? docs[0].value : null };
    } catch {
        return { ok: false };
    }
}
