/**
 * An ApplicationSet's git generator over the checked repository: its `directories` (the folders Go's path.Match
 * chooses) and its `files` (the files a git pathspec chooses, each read as a YAML or JSON map or list of maps),
 * each turned into parameter sets with the path parameters (`pathParamPrefix`), as Argo CD names them.
 */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { firstKubeYamlValue } from "../decode/kube-yaml";
import { RenderContext } from "../render/render";
import { repoFiles, repoFolders } from "../render/repo-tree";
import { compilePathPattern } from "./path-match";
import { flattenParams, pathParams, sanitizeName } from "./generator-params";
import { extended } from "../../support/shapes";
import { list, record } from "../../support/records";

type Obj = Record<string, unknown>;

/** At most this many bytes of one git files generator file (Argo CD reads small JSON/YAML files). */
const MAX_PARAM_FILE_BYTES = 1 << 20;
/** At most this many bytes of all the files one git files generator matches (a bad input beyond: exit 2). */
const MAX_PARAM_FILES_BYTES = 64 << 20;

/**
 * A git files `path` as Argo CD's repo server matches it (`git ls-files -- <pattern>`, a git pathspec): without
 * wildcards, the file itself or every file below that folder; with them, `*` and `?` also cross `/`, `[...]`
 * a class.
 */
function gitPathspec(pattern: string): RegExp {
    const p = pattern.replace(/^\.\//, "");
    if (!/[*?[]/.test(p)) {
        const lit = p.replace(/\/+$/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        return new RegExp(`^${lit}(?:/.*)?$`);
    }
    let re = "";
    for (let i = 0; i < p.length; i++) {
        const c = p[i];
        if (c === "*") re += ".*";
        else if (c === "?") re += ".";
        else if (c === "[") {
            const end = p.indexOf("]", i + 2);
            if (end < 0) re += "\\[";
            else {
                re +=
                    "[" +
                    p
                        .slice(i + 1, end)
                        .replace(/^!/, "^")
                        .replace(/\\/g, "\\\\") +
                    "]";
                i = end;
            }
        } else if (c === "\\" && i + 1 < p.length) re += "\\" + p[++i];
        else re += c.replace(/[.+^${}()|\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}

/** A git directories `path` glob: Go's path.Match, as Argo CD filters the folders; a malformed one matches nothing (Argo CD logs it and skips it). */
function globDir(pattern: string): { test(dir: string): boolean } {
    const compiled = compilePathPattern(pattern);
    return { test: (dir) => compiled?.matches(dir) ?? false };
}

/**
 * The paths of `all` that an entry of `entries` (each with a `path` pattern) matches, less those an entry with
 * `exclude: true` matches, sorted.
 */
function chosenPaths(entries: Obj[], all: string[], matcher: (pattern: string) => { test(p: string): boolean }) {
    const chosen = new Set<string>();
    // Each pattern is compiled once, when it is first needed.
    for (const e of entries.filter((x) => x.exclude !== true)) {
        let m: { test(p: string): boolean } | undefined;
        for (const p of all) if ((m ??= matcher(String(e.path))).test(p)) chosen.add(p);
    }
    for (const e of entries.filter((x) => x.exclude === true)) {
        let m: { test(p: string): boolean } | undefined;
        for (const p of [...chosen]) if ((m ??= matcher(String(e.path))).test(p)) chosen.delete(p);
    }
    return [...chosen].sort();
}

/** The entries of a git generator's `directories` or `files` that have a `path`. */
function pathEntries(v: unknown): Obj[] {
    return list(v)
        .map(record)
        .filter((x): x is Obj => !!x && typeof x.path === "string");
}

/** A git directories generator's parameter sets: one for each folder of the repository it chooses. */
export function gitDirectoryParams(git: Obj, ctx: RenderContext, goTemplate: boolean, prefix: string): Obj[] {
    return chosenPaths(pathEntries(git.directories), repoFolders(ctx), globDir).map((d) =>
        pathParams(d, goTemplate, prefix),
    );
}

/**
 * A file's text, read without following it past MAX_PARAM_FILE_BYTES (undefined when it is larger); `read.total`
 * counts the bytes of every file read, a bad input beyond MAX_PARAM_FILES_BYTES.
 */
function readParamFile(file: string, field: string, ctx: RenderContext, read: { total: number }): string | undefined {
    const root = ctx.repoRoot;
    const fd = fs.openSync(path.join(root, file), fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    try {
        const buf = Buffer.alloc(MAX_PARAM_FILE_BYTES + 1);
        let n = 0;
        for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
        if (n > MAX_PARAM_FILE_BYTES) return undefined;
        read.total += n;
        if (read.total > MAX_PARAM_FILES_BYTES)
            throw new BadInputError(
                `${ctx.show(path.resolve(root))}: ${field}.git.files matches more than ${MAX_PARAM_FILES_BYTES} bytes of files (check's limit)`,
            );
        return buf.subarray(0, n).toString("utf8");
    } finally {
        fs.closeSync(fd);
    }
}

/** A git file's objects: its map, or each map of its list (null as an empty map); undefined for anything else. */
function fileObjects(text: string): Obj[] | undefined {
    const yaml = firstKubeYamlValue(text);
    return !yaml.ok
        ? undefined
        : yaml.value === null
          ? [{}]
          : record(yaml.value)
            ? [yaml.value as Obj]
            : Array.isArray(yaml.value) && yaml.value.every((x) => x === null || record(x))
              ? yaml.value.map((x) => record(x) ?? {})
              : undefined;
}

/** The parameter sets of one git file's objects, with the file's path parameters. */
function fileParams(file: string, objects: Obj[], goTemplate: boolean, prefix: string): Obj[] {
    const dir = path.posix.dirname(file);
    const base = path.posix.basename(dir);
    const filename = path.posix.basename(file);
    return objects.map((o) => {
        if (goTemplate) {
            const p = {
                path: dir,
                basename: base,
                filename,
                basenameNormalized: sanitizeName(base),
                filenameNormalized: sanitizeName(filename),
                segments: dir.split("/"),
            };
            return extended(o, prefix ? { [prefix]: { path: p } } : { path: p });
        }
        const flat: Obj = {};
        flattenParams(o, "", flat);
        const name = prefix ? `${prefix}.path` : "path";
        Object.assign(flat, {
            [name]: dir,
            [`${name}.basename`]: base,
            [`${name}.filename`]: filename,
            [`${name}.basenameNormalized`]: sanitizeName(base),
            [`${name}.filenameNormalized`]: sanitizeName(filename),
        });
        dir.split("/").forEach((seg, i) => {
            if (seg !== "") flat[`${name}[${i}]`] = seg;
        });
        return flat;
    });
}

/**
 * A git files generator's parameter sets (Argo CD's): each chosen file's object, or each object of its list, with
 * the path parameters; or why the generator fails (a file too large, or not a map or list of maps).
 */
export function gitFilesParams(
    git: Obj,
    ctx: RenderContext,
    goTemplate: boolean,
    prefix: string,
    field: string,
): Obj[] | string {
    const out: Obj[] = [];
    const read = { total: 0 };
    for (const file of chosenPaths(pathEntries(git.files), repoFiles(ctx), gitPathspec)) {
        const text = readParamFile(file, field, ctx, read);
        if (text === undefined)
            return `${field}.git.files: ${JSON.stringify(file)} is larger than ${MAX_PARAM_FILE_BYTES} bytes, which check does not read`;
        const objects = fileObjects(text);
        if (!objects)
            return `${field}.git.files: ${JSON.stringify(file)} is not a YAML or JSON map or list of maps, which fails the generator in Argo CD`;
        out.push(...fileParams(file, objects, goTemplate, prefix));
    }
    return out;
}
