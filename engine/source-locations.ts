/**
 * Where a resource is declared, best effort: the first line of the program's source files that has the
 * resource's Pulumi name as a string literal ("name", 'name' or `name`). The Node.js SDK sends a source
 * position with RegisterResourceRequest, but the engine's JSON events (policyEvent, resourcePreEvent) do
 * not carry it, so the gate searches the program. Rows that already have a location keep it.
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

/** Finds each row's declaration line in the program folder (absolute file paths). */
export function locateRows<T extends Row>(rows: T[], programDir: string, main?: string): T[] {
    const names = [...new Set(rows.filter((r) => !r.file && r.resource).map((r) => r.resource))];
    if (names.length === 0) return rows;
    const found = new Map<string, Location>();
    for (const file of sourceFiles(programDir, main)) {
        let lines: string[];
        try {
            lines = fs.readFileSync(file, "utf8").split("\n");
        } catch {
            continue;
        }
        for (const name of names) {
            if (found.has(name)) continue;
            for (let i = 0; i < lines.length; i++) {
                const col = ['"', "'", "`"].map((q) => lines[i].indexOf(`${q}${name}${q}`)).filter((c) => c >= 0);
                // YAML programs declare resources as map keys: `  name:`
                const yamlKey = /\.ya?ml$/.test(file)
                    ? lines[i].search(new RegExp(`^\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\s*$`))
                    : -1;
                if (col.length > 0 || yamlKey >= 0) {
                    found.set(name, {
                        file,
                        line: i + 1,
                        column: (col.length > 0 ? Math.min(...col) : lines[i].indexOf(name)) + 1,
                    });
                    break;
                }
            }
        }
        if (found.size === names.length) break;
    }
    return rows.map((r) => (r.file || !found.has(r.resource) ? r : (extended(r, found.get(r.resource)!) as T)));
}
