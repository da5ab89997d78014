/**
 * Reads Kubernetes manifests for `pko-guard check` and the manifest leg (files.ts: files and folders; yaml.ts:
 * documents; positions.ts: lines on demand; objects.ts: objects and identities): files and folders (recursive
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
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../errors";
import { STDIN_FILE, gitTopLevel, posix, readFile, readStdin, walk } from "./files";
import { LoadOptions, LoadResult, ManifestObject } from "./objects";
import { parseSource } from "./yaml";

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
            parseSource({ file: STDIN_FILE, text }, out, false);
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

