/**
 * Where a resource is declared, best effort. The Node.js SDK sends a source position with
 * RegisterResourceRequest, but the engine's JSON events (policyEvent, resourcePreEvent) do not carry it, so the
 * gate searches the program's source files for the resource's Pulumi name (a literal, a YAML key, or a template
 * that builds it). Names are not unique in a program, so each place is weighed by what the URN says (its type
 * constructed nearby, its kind below, its parent's type in the file); the best wins, the first on a tie.
 */
import * as fs from "fs";
import * as path from "path";
import { Row, compareText } from "../evaluation/rows";
import { extended } from "../support/shapes";

interface Location {
    file: string;
    line: number;
    column: number;
}

const SOURCE = /\.(ts|tsx|js|mjs|cjs|py|go|cs|fs|vb|java|kt|scala|yaml|yml)$/;
const SKIP = new Set(["node_modules", ".git", "bin", "dist", "venv", ".venv", "__pycache__", ".pulumi", "vendor"]);
const MAX_FILES = 500;

function sourceFiles(dir: string, main?: string): string[] {
    const out: string[] = [];
    const walk = (d: string, depth: number) => {
        if (out.length >= MAX_FILES || depth > 6) return;
        let entries: fs.Dirent[];
        try {
            entries = fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name));
        } catch {
            return;
        }
        for (const e of entries) {
            if (e.isDirectory() && !SKIP.has(e.name) && !e.name.startsWith(".")) walk(path.join(d, e.name), depth + 1);
            else if (e.isFile() && SOURCE.test(e.name) && !/^Pulumi\..*\.ya?ml$/.test(e.name))
                out.push(path.join(d, e.name));
        }
    };
    walk(dir, 0);
    // The program's entry file first: a name declared there wins over a match elsewhere.
    if (main) {
        const m = path.resolve(dir, main);
        out.sort((a, b) => (a === m ? -1 : b === m ? 1 : 0));
    }
    return out;
}

/** What the URN says of a resource that tells its declaration from another of the same name. */
interface Wanted {
    name: string;
    /** The class name of its type (`Namespace` of `kubernetes:core/v1:Namespace`). */
    className: string;
    /** The type token of its parent component, when it has one (`acme:index:Platform`). */
    parent?: string;
}

function wantedOf(row: Row): Wanted {
    const parts = row.urn.split("::");
    const chain = parts.length >= 4 ? parts[2].split("$") : [row.type];
    const type = chain[chain.length - 1] || row.type;
    const className = type.slice(type.lastIndexOf(":") + 1).replace(/[^A-Za-z0-9_]/g, "");
    const parent = chain.length > 1 ? chain[chain.length - 2] : undefined;
    return { name: row.resource, className, ...(parent ? { parent } : {}) };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A template's fixed parts as a pattern for the names it builds; undefined for a template of no fixed part. */
function templatePattern(body: string, interpolation: RegExp): RegExp | undefined {
    const fixed = body.split(interpolation);
    if (fixed.length < 2 || fixed.join("") === "") return undefined;
    return new RegExp(`^${fixed.map(escapeRegExp).join(".+")}$`);
}

/** The columns (0-based) on a line where a template builds `name`: JS/TS template strings and Python f-strings. */
function templateColumns(line: string, name: string): number[] {
    const out: number[] = [];
    for (const m of line.matchAll(/`((?:[^`\\]|\\.)*\$\{(?:[^`\\]|\\.)*)`/g)) {
        const p = templatePattern(m[1], /\$\{[^}]*\}/);
        if (p?.test(name)) out.push(m.index);
    }
    for (const m of line.matchAll(/\bf(["'])((?:(?!\1)[^\\]|\\.)*\{(?:(?!\1)[^\\]|\\.)*)\1/g)) {
        const p = templatePattern(m[2], /\{[^}]*\}/);
        if (p?.test(name)) out.push(m.index);
    }
    return out;
}

/** Where on a line the name is written, as a literal or a YAML key (0-based column), or -1. */
function literalColumn(line: string, name: string, yaml: boolean): number {
    const cols = ['"', "'", "`"].map((q) => line.indexOf(`${q}${name}${q}`)).filter((c) => c >= 0);
    if (cols.length > 0) return Math.min(...cols);
    return yaml && new RegExp(`^\\s*${escapeRegExp(name)}:\\s*$`).test(line) ? line.indexOf(name) : -1;
}

/**
 * How well the place at `lines[i]`, column `col`, fits what the URN says: the name is the first argument of its own
 * class's constructor (Go's `New<Class>(ctx, ...)` too), the kind written in that declaration is its class (a
 * CustomResource's `kind: "Stack"`), the file names its parent's type.
 */
function weight(lines: string[], i: number, col: number, w: Wanted, parentInFile: boolean): number {
    let score = 0;
    const c = escapeRegExp(w.className);
    let before = lines[i].slice(0, col);
    for (let k = i - 1; k >= Math.max(0, i - 2) && !before.includes("("); k--) before = `${lines[k]}\n${before}`;
    if (c && new RegExp(`(\\b|New)${c}(<[^>]*>)?\\s*\\(\\s*(ctx\\s*,\\s*)?$`).test(before)) score += 4;
    // The declaration's own lines: up to the next one that starts another declaration.
    const own = [lines[i].slice(col)];
    for (let k = i + 1; k < Math.min(lines.length, i + 20); k++) {
        if (/\bnew\s+[\w.]+\s*\(|^\s*(const|let|var)\s|^\S/.test(lines[k])) break;
        own.push(lines[k]);
    }
    if (c && new RegExp(`\\bkind["']?\\s*[:=]\\s*["'\`]${c}["'\`]`).test(own.join("\n"))) score += 2;
    if (parentInFile) score += 1;
    return score;
}

interface Candidate extends Location {
    score: number;
}

/** The best place a file declares the resource, by literal first, then by template. */
function bestIn(file: string, lines: string[], w: Wanted, text: string): Candidate | undefined {
    const yaml = /\.ya?ml$/.test(file);
    const parentInFile = w.parent !== undefined && text.includes(`"${w.parent}"`);
    let best: Candidate | undefined;
    const consider = (i: number, col: number, bonus: number) => {
        const score = weight(lines, i, col, w, parentInFile) + bonus;
        if (!best || score > best.score) best = { file, line: i + 1, column: col + 1, score };
    };
    for (let i = 0; i < lines.length; i++) {
        const col = literalColumn(lines[i], w.name, yaml);
        // A literal of the name outweighs a template that may build it.
        if (col >= 0) consider(i, col, 8);
        else if (!yaml) for (const t of templateColumns(lines[i], w.name)) consider(i, t, 0);
    }
    return best;
}

/** Finds each row's declaration line in the program folder (absolute file paths); rows it cannot place keep none. */
export function locateRows<T extends Row>(rows: T[], programDir: string, main?: string): T[] {
    const wanted = new Map<string, Wanted>();
    for (const r of rows) if (!r.file && r.resource && !wanted.has(r.urn)) wanted.set(r.urn, wantedOf(r));
    if (wanted.size === 0) return rows;
    const found = new Map<string, Candidate>();
    for (const file of sourceFiles(programDir, main)) {
        let text: string;
        try {
            text = fs.readFileSync(file, "utf8");
        } catch {
            continue;
        }
        const lines = text.split("\n");
        for (const [urn, w] of wanted) {
            if (!text.includes(w.name) && !text.includes("{")) continue;
            const c = bestIn(file, lines, w, text);
            const known = found.get(urn);
            if (c && (!known || c.score > known.score)) found.set(urn, c);
        }
    }
    return rows.map((r) => {
        const c = r.file ? undefined : found.get(r.urn);
        return c ? (extended(r, { file: c.file, line: c.line, column: c.column }) as T) : r;
    });
}
