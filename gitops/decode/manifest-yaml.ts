/**
 * Reading a manifest file's YAML as Kubernetes decodes it (gitops/decode/kube-yaml.ts: sigs.k8s.io/yaml semantics,
 * YAML 1.1 booleans, merge keys), every document's node tree kept for positions, alias expansion bounded;
 * each document becomes objects (../manifests/manifest-objects.ts). Bad input is one line, never the parser's quote of the file.
 */
import * as fs from "fs";
import { BadInputError } from "../../support/errors";
import { KubeYamlError, decodeKubeYaml } from "./kube-yaml";
import { unclosedAt, unclosedReason } from "./unclosed";
import { LoadResult, Source, addObject } from "../manifests/manifest-objects";
import { FileLocator, Place, placeStart } from "./field-positions";

/** The most nodes a document may expand to through aliases (a "billion laughs" document is bad input). */
const MAX_EXPANDED_NODES = 1_000_000;
/** The most nodes aliases may add over a whole run (all files and documents): many small bombs are one big one. */
export const MAX_ALIAS_EXPANSION = 1_000_000;

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
        if (active.has(v))
            throw new BadInputError(`${where()}: invalid YAML: an alias refers to a node that contains it`);
        active.add(v);
        let n = 1;
        written++;
        for (const child of Array.isArray(v) ? v : Object.values(v)) {
            if (child === null || typeof child !== "object") written++;
            n += size(child);
            if (n > MAX_EXPANDED_NODES)
                throw new BadInputError(
                    `${where()}: invalid YAML: aliases expand to more than ${MAX_EXPANDED_NODES.toLocaleString("en")} nodes`,
                );
        }
        active.delete(v);
        sizes.set(v, n);
        return n;
    };
    const total = size(doc);
    budget.aliasNodes += Math.max(0, total - Math.max(written, 1));
    if (budget.aliasNodes > MAX_ALIAS_EXPANSION) {
        throw new BadInputError(
            `${where()}: invalid YAML: aliases in this run expand to more than ${MAX_ALIAS_EXPANSION.toLocaleString("en")} extra nodes`,
        );
    }
}

/**
 * A fixed reason for a parse error, by kind: js-yaml's reasons can quote the document (an alias's or a tag's
 * name, a key), and a Secret's value can be what it quotes. Never the parser's text.
 */
export function yamlReason(reason: string): string {
    const kinds: [RegExp, string][] = [
        [/maxDepth|nesting|nests|too deeply|call stack/i, "mappings, sequences or aliases nested too deeply"],
        [/^invalid JSON/i, "invalid JSON"],
        [/refers to a node that contains it/i, "an alias refers to a node that contains it"],
        [
            /unidentified alias|unresolved alias|unknown anchor|anchor not defined/i,
            "an alias refers to an anchor that is not defined",
        ],
        [/unique|duplicat/i, "a mapping key appears twice"],
        [/duplicated mapping key/i, "a mapping key appears twice"],
        [/tag/i, "a tag that cannot be resolved"],
        [/alias|anchor/i, "an invalid anchor or alias"],
        [/indent/i, "bad indentation"],
        [/directive|%YAML|%TAG/i, "an invalid directive"],
        [/end of the stream|unexpected end/i, "the document ends too early"],
        [/escape/i, "an invalid escape sequence"],
        [/quoted|scalar|character/i, "an invalid scalar or character"],
        [/flow|collection|mapping|sequence|block|key/i, "an invalid mapping or sequence"],
        [/document/i, "an invalid document start or separator"],
    ];
    return kinds.find(([re]) => re.test(reason))?.[1] ?? "cannot parse";
}

/**
 * Parses one file's documents into objects, decoded as Kubernetes decodes them (gitops/decode/kube-yaml.ts: YAML 1.1
 * booleans, merge keys, go-yaml's numbers); throws BadInputError (one line) on a document that does not decode.
 */
export function parseSource(src: Source, out: LoadResult, fromFolder: boolean): void {
    let decoded: ReturnType<typeof decodeKubeYaml>;
    try {
        decoded = decodeKubeYaml(src.text);
    } catch (e) {
        if (!(e instanceof KubeYamlError)) throw e;
        const locator = new FileLocator(src.text, []);
        // An unclosed "{", "[" or quote is the mistake, at its opening token, not where the parser gave up.
        const open = unclosedAt(src.text, e.offset);
        if (open && locator.pos(open.offset).line < locator.pos(e.offset).line) {
            const at = locator.pos(open.offset);
            throw new BadInputError(`${src.file}:${at.line}:${at.column}: invalid YAML: ${unclosedReason(open.what)}`);
        }
        const p = locator.pos(e.offset);
        // Position and a fixed reason: a parser's text can quote the document (an alias's name, a value).
        throw new BadInputError(`${src.file}:${p.line}:${p.column}: invalid YAML: ${yamlReason(e.reason)}`);
    }
    const locator = new FileLocator(src.text, decoded);
    // Only an alias (`*name`) makes a node appear twice: a text without a `*` expands to nothing more than it holds.
    const mayAlias = src.text.includes("*");
    decoded.forEach(({ value }, doc) => {
        out.documents++;
        if (value === null || value === undefined || value === "") return; // empty document
        const place: Place = src.rendered ? originalPlace(src.abs, value) : { locator, doc };
        const where = () => {
            const p = placeStart(place);
            return `${src.file}:${p.line}:${p.column}`;
        };
        if (mayAlias) checkExpansion(value, where, out.budget);
        if (typeof value !== "object" || Array.isArray(value)) {
            const what = Array.isArray(value) ? "a list" : typeof value === "string" ? "a string" : `a ${typeof value}`;
            if (fromFolder) {
                out.skipped.push({
                    file: `${src.file}:${placeStart(place).line}`,
                    reason: `not a Kubernetes object (${what})`,
                });
                return;
            }
            throw new BadInputError(
                `${where()}: the document is ${what}, not a Kubernetes object (a mapping with apiVersion and kind)`,
            );
        }
        addObject(src, value as Record<string, unknown>, place, out, fromFolder);
    });
}

/** Decoded source files, for placing rendered objects at their base file's lines (one load at a time). */
export const originals = new Map<string, { locator: FileLocator; values: unknown[] } | undefined>();

/**
 * Where a rendered object is in the file it came from: the document of the same kind whose name the rendered
 * name contains (kustomize adds prefixes and suffixes), the longest such name (`flagger-grafana` is not the
 * `flagger` written above it), in the same namespace when two are; else line 1 of that file (a chart template,
 * a folder).
 */
function originalPlace(abs: string | undefined, value: unknown): Place {
    const fallback: Place = { locator: new FileLocator("", []), doc: 0 };
    if (!abs || !/\.(ya?ml|json)$/i.test(abs)) return fallback;
    if (!originals.has(abs)) {
        try {
            const text = fs.readFileSync(abs, "utf8");
            const docs = decodeKubeYaml(text);
            originals.set(abs, { locator: new FileLocator(text, docs), values: docs.map((d) => d.value) });
        } catch {
            originals.set(abs, undefined);
        }
    }
    const orig = originals.get(abs);
    if (!orig) return fallback;
    const o = (value ?? {}) as Record<string, unknown>;
    const meta = (o.metadata ?? {}) as Record<string, unknown>;
    const name = String(meta.name ?? "");
    let doc = -1;
    let best = { length: 0, sameNamespace: false };
    orig.values.forEach((v, i) => {
        const x = (v ?? {}) as Record<string, unknown>;
        const m = (x.metadata ?? {}) as Record<string, unknown>;
        const n = m.name;
        if (x.kind !== o.kind || typeof n !== "string" || n === "" || !name.includes(n)) return;
        const sameNamespace = m.namespace === meta.namespace;
        if (n.length > best.length || (n.length === best.length && sameNamespace && !best.sameNamespace)) {
            doc = i;
            best = { length: n.length, sameNamespace };
        }
    });
    return { locator: orig.locator, doc: doc < 0 ? orig.values.findIndex((v) => v !== null) : doc };
}
