/**
 * The expectation file (expect.yaml) as a typed, versioned document: `apiVersion: pko-guard/v1`, `kind: Fixture`.
 * The header is required: a file without it (the format from before versioning) is refused with one line that
 * names `pko-guard test --migrate`, which adds it (and is the one reader of the old format).
 * Validated with ajv against the JSON schema the package ships for editors (schemas/pko-guard/fixture-v1.schema.json),
 * every invalid field reported on a line of its own with the file's line number; each expected violation keeps
 * the line it is written on, so a mismatch can point at it (GitHub annotations).
 */
import Ajv, { ErrorObject } from "ajv";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { BadInputError, BadInputsError } from "../support/errors";
import { REPO_ROOT } from "../support/paths";
import { didYouMean } from "../support/suggest";

export const API_VERSION = "pko-guard/v1";
export const KIND = "Fixture";
/** The schema shipped in the package (`# yaml-language-server: $schema=` points editors at it). */
export const FIXTURE_SCHEMA = path.join(REPO_ROOT, "schemas", "pko-guard", "fixture-v1.schema.json");
/** An expectation file larger than this is not one (bounded read). */
const MAX_BYTES = 1 << 20;

let validator: ReturnType<Ajv["compile"]> | undefined;

function validate(doc: unknown): ErrorObject[] {
    if (!validator) {
        const schema = JSON.parse(fs.readFileSync(FIXTURE_SCHEMA, "utf8")) as Record<string, unknown>;
        delete schema.$schema; // ajv 8 knows draft-07 as its default meta-schema
        // verbose: each error carries its schema, whose properties name the fields a misspelt one was meant as.
        validator = new Ajv({ allErrors: true, strict: false, verbose: true }).compile(schema);
    }
    return validator(doc) ? [] : (validator.errors ?? []);
}

/** A parsed expectation file: its data, and where each part of it is. */
export interface ExpectFile {
    file: string;
    data: Record<string, unknown>;
    /** Whether the file has the versioned header (only --migrate reads a file without it). */
    versioned: boolean;
    /** The 1-based line of the node at `at` (a path of keys and indexes), else of the nearest parent. */
    lineOf(at: (string | number)[]): number;
}

/** The YAML path of an ajv instance path (`/violations/0/count` is ["violations", 0, "count"]). */
function segments(instancePath: string): (string | number)[] {
    return instancePath
        .split("/")
        .slice(1)
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function describe(e: ErrorObject): { at: (string | number)[]; text: string } {
    const at = segments(e.instancePath);
    const where = e.instancePath || "/";
    switch (e.keyword) {
        case "additionalProperties": {
            const key = String((e.params as { additionalProperty: string }).additionalProperty);
            const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
            return {
                at: [...at, key],
                text: `${where}: unknown field ${JSON.stringify(key)}${didYouMean(key, known)}`,
            };
        }
        case "required":
            return {
                at,
                text: `${where}: missing field ${JSON.stringify((e.params as { missingProperty: string }).missingProperty)}`,
            };
        case "const":
            return {
                at,
                text: `${where} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
            };
        case "enum":
            return {
                at,
                text: `${where} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`,
            };
        case "not":
            return { at, text: `${where}: mockOnly and realOnly exclude each other` };
        default:
            return { at, text: `${where} ${e.message ?? "is invalid"}` };
    }
}

/**
 * Reads, parses and validates an expectation file; every problem is one line `FILE:LINE: what` (exit 2). A file
 * without the header is refused, but for `unversioned` (--migrate), which reads it as pko-guard/v1.
 */
export function readExpectFile(file: string, shownAs = file, o: { unversioned?: boolean } = {}): ExpectFile {
    const text = readBounded(file, MAX_BYTES, shownAs);
    const lineCounter = new YAML.LineCounter();
    const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: false });
    if (doc.errors.length > 0) {
        const e = doc.errors[0];
        throw new BadInputError(`${shownAs}:${lineCounter.linePos(e.pos[0]).line}: not valid YAML: ${firstLine(e)}`);
    }
    const data = doc.toJS({ maxAliasCount: 100 }) as unknown;
    const lineOf = (at: (string | number)[]): number => {
        for (let n = at.length; n >= 0; n--) {
            const node = doc.getIn(at.slice(0, n), true) as YAML.Node | undefined;
            const parent = n > 0 ? (doc.getIn(at.slice(0, n - 1), true) as YAML.Node | undefined) : undefined;
            // A map key's own line (an unknown field is named by its key).
            if (YAML.isMap(parent)) {
                const pair = parent.items.find((p) => YAML.isScalar(p.key) && p.key.value === at[n - 1]);
                const keyRange = (pair?.key as YAML.Node | undefined)?.range;
                if (keyRange) return lineCounter.linePos(keyRange[0]).line;
            }
            if (node?.range) return lineCounter.linePos(node.range[0]).line;
        }
        return 1;
    };
    if (data === null || typeof data !== "object" || Array.isArray(data))
        throw new BadInputError(`${shownAs}:1: an expectation file is a YAML mapping (description, violations)`);
    const record = data as Record<string, unknown>;
    const versioned = record.apiVersion !== undefined || record.kind !== undefined;
    if (!versioned && !o.unversioned)
        throw new BadInputError(
            `${shownAs}:1: no apiVersion: ${API_VERSION} and kind: ${KIND} (the format from before versioning): run pko-guard test --migrate`,
        );
    const problems = validate(versioned ? record : { apiVersion: API_VERSION, kind: KIND, ...record })
        // ajv reports a failed `not` and an `if` once more for its parent: the specific ones say it all
        .filter((e, i, all) => all.findIndex((o) => o.instancePath === e.instancePath && o.keyword === e.keyword) === i)
        .map((e) => {
            const d = describe(e);
            return `${shownAs}:${lineOf(d.at)}: ${d.text}`;
        });
    if (problems.length === 1) throw new BadInputError(problems[0]);
    if (problems.length > 1)
        throw new BadInputsError(problems, `${shownAs}: ${problems.length} invalid fields (schema ${API_VERSION})`);
    return { file, data: record, versioned, lineOf };
}

/** A file's text, refused past `max` bytes (a hostile or mistaken path is not read whole). */
function readBounded(file: string, max: number, shownAs: string): string {
    let fd: number;
    try {
        fd = fs.openSync(file, "r");
    } catch {
        throw new BadInputError(`${shownAs}: cannot be read`);
    }
    try {
        const st = fs.fstatSync(fd);
        if (!st.isFile()) throw new BadInputError(`${shownAs}: not a regular file`);
        if (st.size > max) throw new BadInputError(`${shownAs}: larger than ${max} bytes`);
        const buf = Buffer.alloc(st.size);
        let done = 0;
        while (done < st.size) {
            const n = fs.readSync(fd, buf, done, st.size - done, done);
            if (n === 0) break;
            done += n;
        }
        return buf.subarray(0, done).toString("utf8");
    } finally {
        fs.closeSync(fd);
    }
}

function firstLine(e: Error): string {
    return e.message.split("\n")[0];
}

/**
 * The header a versioned file starts with: the editor's schema (relative to the file, from an installed package
 * when `schema` is given) and the apiVersion and kind.
 */
export function versionedHeader(schemaPath: string): string {
    return `# yaml-language-server: $schema=${schemaPath}\napiVersion: ${API_VERSION}\nkind: ${KIND}\n`;
}

/**
 * A file of the format from before versioning, with the header added after its leading comments (and document
 * start) and nothing else changed, byte for byte; undefined when it has the header already.
 */
export function migratedText(file: string, schemaPath: string): string | undefined {
    const parsed = readExpectFile(file, file, { unversioned: true });
    if (parsed.versioned) return undefined;
    const text = readBounded(file, MAX_BYTES, file);
    const eol = text.includes("\r\n") ? "\r\n" : "\n";
    const leading = /^\uFEFF?(?:(?:#[^\n]*|[ \t]*)\r?\n)*(?:---[ \t]*\r?\n)?/.exec(text)![0];
    return `${leading}${versionedHeader(schemaPath).replace(/\n/g, eol)}${text.slice(leading.length)}`;
}
