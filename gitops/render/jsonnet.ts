/** A .jsonnet file evaluated as Argo CD's repo server evaluates it, every file it reads confined to the repository. */
import * as fs from "fs";
import * as path from "path";
import { BadInputError } from "../../support/errors";
import { RenderContext, RenderedStream, runTool } from "./render";
import { confineLinks, rootInUse } from "./repo-tree";

/**
 * An evaluation Argo CD's repo server refuses too (an import it cannot open in the repository, a remote URL among
 * them, or one outside it): exit 2 for a file named on the command line, the fail-closed finding on an
 * Application whose source it is (gitops/argocd/application-sources.ts). `reason` is the message without the file.
 */
export class JsonnetRefused extends BadInputError {
    constructor(
        what: string,
        readonly reason: string,
    ) {
        super(`${what}: ${reason}`);
    }
}

export interface JsonnetOptions {
    /** Library folders (-J), absolute. The file's folder comes first, as Argo CD's VM does. */
    libs?: string[];
    extVars?: { name: string; value: string; code?: boolean }[];
    tlas?: { name: string; value: string; code?: boolean }[];
}

/**
 * Argo CD confines jsonnet to the repository, and check uses no network; a file an import reads outside it
 * could also put a CI machine's files (`/proc/self/environ`) into an object and so into a finding. So every
 * file the evaluation would read (the file, and all it imports transitively with `import`, `importstr` or
 * `importbin`, as jsonnet's own parser finds them: the toolchain's `jsonnet-deps`, links resolved) must be
 * inside the repository, checked before evaluating. A remote import cannot be resolved, so it is refused too.
 */
function confineJsonnet(file: string, jpath: string[], what: string, ctx: RenderContext): void {
    const root = fs.realpathSync(ctx.repoRoot);
    const inside = (p: string) => {
        const rel = path.relative(root, p);
        return rel === "" || !(rel.startsWith("..") || path.isAbsolute(rel));
    };
    let deps: string[];
    try {
        deps = runTool("jsonnet-deps", [...jpath, file], what, ctx, { cwd: path.dirname(file) })
            .split("\n")
            .filter((l) => l !== "");
    } catch (e) {
        if (e instanceof BadInputError && /couldn't open import/.test(e.message)) {
            throw new JsonnetRefused(
                what,
                "an import cannot be opened in the repository (Argo CD's jsonnet reads only the repository's files and its libs folders, never a URL: vendor it)",
            );
        }
        throw e;
    }
    for (const p of [fs.realpathSync(file), ...deps]) {
        if (!inside(p))
            throw new JsonnetRefused(
                what,
                `an import reaches outside the repository (Argo CD refuses it; ${rootInUse(ctx)})`,
            );
    }
}

/** Evaluates one .jsonnet file; its JSON (an object or a list of objects) as one stream, none when it yields none. */
export function renderJsonnet(
    file: string,
    appDir: string,
    ctx: RenderContext,
    opts: JsonnetOptions = {},
): RenderedStream[] {
    const what = `${ctx.show(file)} (jsonnet)`;
    confineLinks(ctx);
    const jpath: string[] = ["-J", appDir];
    for (const l of opts.libs ?? []) jpath.push("-J", l);
    confineJsonnet(file, jpath, what, ctx);
    const args = [...jpath];
    for (const v of opts.extVars ?? []) args.push(v.code ? "--ext-code" : "--ext-str", `${v.name}=${v.value}`);
    for (const v of opts.tlas ?? []) args.push(v.code ? "--tla-code" : "--tla-str", `${v.name}=${v.value}`);
    args.push(file);
    const out = runTool("jsonnet", args, what, ctx, { cwd: path.dirname(file) });
    let value: unknown;
    try {
        value = JSON.parse(out);
    } catch {
        throw new BadInputError(`${what}: the jsonnet output is not JSON`);
    }
    // Argo CD reads the output as a list of objects, else as one (reposerver/repository/repository.go
    // `findManifests`), each decoded by apimachinery's unstructured JSON scheme, which refuses an object with no
    // `kind`: the source then fails to render. `null` and `[]` are no objects at all (the caller says so).
    const items: unknown[] = value === null ? [] : Array.isArray(value) ? value : [value];
    items.forEach((item, i) => {
        const kind =
            item !== null && typeof item === "object" && !Array.isArray(item)
                ? (item as { kind?: unknown }).kind
                : undefined;
        if (typeof kind !== "string" || kind === "")
            throw new BadInputError(
                `${what}: ${Array.isArray(value) ? `item ${i} of its output` : "its output"} is not a Kubernetes object (no kind), so Argo CD fails to render it; yield an object or a list of objects`,
            );
    });
    if (items.length === 0) return [];
    // A YAML stream of JSON documents (JSON is valid flow YAML; the leading marker keeps it from being read as
    // a JSON stream, which allows no separators).
    return [{ text: items.map((i) => "---\n" + JSON.stringify(i)).join("\n") + "\n", from: file }];
}
