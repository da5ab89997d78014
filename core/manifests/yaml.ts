/**
 * Reading a manifest file's YAML: every document's value by js-yaml (fast; YAML 1.2 core schema, unknown tags
 * read as their values, alias expansion bounded per run), its root's offset kept for positions found later; each
 * document becomes objects (./objects.ts). Bad input is one line, never the parser's quote of the file.
 */
import * as jsyaml from "js-yaml";
import { BadInputError } from "../errors";
import { LoadResult, Source, addObject } from "./objects";
import { FileLocator, Place, placeStart } from "./positions";

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
export function parseSource(src: Source, out: LoadResult, fromFolder: boolean): void {
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

