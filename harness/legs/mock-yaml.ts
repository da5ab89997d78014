/**
 * The provider's YAML: the invoke `kubernetes:yaml:decode` (the v1 `yaml.ConfigGroup`/`ConfigFile`), answered by
 * decoding the YAML text as the provider does, and the provider-side components `kubernetes:yaml/v2:ConfigGroup`
 * and `ConfigFile`, expanded into the child registrations the provider makes.
 */
import * as fs from "fs";
import * as path from "path";
import { KubeYamlError, decodeKubeYaml } from "../../gitops/decode/kube-yaml";
import { BAD_PATTERN, compilePathPattern } from "../../gitops/argocd/path-match";
import { CheckContext } from "./mock-check";
import { ChildRegistration, registerObjects } from "./mock-register";
import { MockRefusal, Obj, hasUnknown, isObj, unwrap } from "./mock-wire";

/**
 * Multi-document YAML (or JSON) text into objects, as the provider's decoder reads it: the product's one
 * Kubernetes YAML decoder (gitops/decode/kube-yaml.ts), which `pko-guard check` uses too. `keep` decides which
 * documents count (v1 decode: those with kind and apiVersion; v2: every non-empty one).
 */
export function decodeDocuments(text: string, keep: (o: Obj) => boolean): Obj[] {
    let docs: ReturnType<typeof decodeKubeYaml>;
    try {
        docs = decodeKubeYaml(text);
    } catch (e) {
        if (e instanceof KubeYamlError) throw new MockRefusal(`decoding YAML: ${e.reason}`);
        throw e;
    }
    const out: Obj[] = [];
    for (const doc of docs) {
        // Aliases share nodes in the decoded value; the copy below expands them, so bound it first.
        if (expandedSize(doc.value) > MAX_EXPANDED_NODES)
            throw new MockRefusal(
                `decoding YAML: aliases expand to more than ${MAX_EXPANDED_NODES.toLocaleString("en")} nodes`,
            );
        const value = JSON.parse(JSON.stringify(doc.value)) as unknown;
        if (value === null || value === undefined) continue;
        if (!isObj(value)) throw new MockRefusal(`decoding YAML: a document is not an object`);
        if (keep(value)) out.push(value);
    }
    return out;
}

const MAX_EXPANDED_NODES = 1_000_000;

/** How many nodes a value expands to (shared objects counted each time they occur), memoized. */
function expandedSize(v: unknown, sizes = new Map<object, number>()): number {
    if (v === null || typeof v !== "object") return 1;
    const known = sizes.get(v);
    if (known !== undefined) return known;
    sizes.set(v, Infinity); // a cycle (not produced by the decoder) counts as unbounded
    let n = 1;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
        n += expandedSize(child, sizes);
        if (n > MAX_EXPANDED_NODES) break;
    }
    sizes.set(v, n);
    return n;
}

/** The invoke `kubernetes:yaml:decode` ({text}) → {result: objects}. */
export function decodeYamlInvoke(args: Record<string, unknown>): { result: Obj[] } {
    if (typeof args.text !== "string") throw new MockRefusal("kubernetes:yaml:decode needs a known `text`");
    if (typeof args.defaultNamespace === "string" && args.defaultNamespace !== "") {
        throw new MockRefusal("kubernetes:yaml:decode with a defaultNamespace needs the cluster's kinds");
    }
    return {
        result: decodeDocuments(
            args.text,
            (o) =>
                typeof o.kind === "string" && o.kind !== "" && typeof o.apiVersion === "string" && o.apiVersion !== "",
        ),
    };
}

/** Invokes of the Kubernetes provider the mock leg cannot answer without the tools or the cluster the provider uses. */
export const REFUSED_INVOKES: Record<string, string> = {
    "kubernetes:helm:template": "rendering a Helm chart (helm.sh/v3 Chart) needs the chart and Helm",
    "kubernetes:kustomize:directory": "building a kustomization needs kustomize",
};

/** Go's filepath.Glob semantics (path.Match within each path segment, gitops/argocd/path-match.ts; results sorted). */
export function goGlob(pattern: string, cwd: string): string[] {
    // Go checks the whole pattern first: a malformed one fails whatever the folder holds.
    if (!compilePathPattern(pattern))
        throw new MockRefusal(`expanding glob: ${BAD_PATTERN} ${JSON.stringify(pattern)}`);
    const hasMeta = (s: string) => /[*?[\\]/.test(s);
    if (!hasMeta(pattern)) return fs.existsSync(path.resolve(cwd, pattern)) ? [pattern] : [];
    const abs = path.isAbsolute(pattern);
    const parts = pattern.split("/");
    let found: string[] = [abs ? "/" : ""];
    for (let i = 0; i < parts.length; i++) {
        const seg = parts[i];
        if (seg === "" && i === 0) continue;
        const next: string[] = [];
        for (const base of found) {
            if (!hasMeta(seg)) {
                const p = base === "" ? seg : path.posix.join(base, seg);
                if (fs.existsSync(path.resolve(cwd, p))) next.push(p);
                continue;
            }
            const segment = compilePathPattern(seg);
            let entries: string[] = [];
            try {
                entries = fs.readdirSync(path.resolve(cwd, base === "" ? "." : base));
            } catch {
                entries = [];
            }
            for (const e of entries.sort()) {
                if (segment?.matches(e)) next.push(base === "" ? e : path.posix.join(base, e));
            }
        }
        found = next;
    }
    return found.sort();
}

/** The inputs of a yaml/v2 ConfigGroup or ConfigFile, as the program registered them (wire form). */
export function expandYamlV2(
    component: "ConfigGroup" | "ConfigFile",
    componentName: string,
    inputs: Obj,
    programDir: string,
    ctx: CheckContext,
): ChildRegistration[] {
    if (hasUnknown(inputs)) {
        throw new MockRefusal(
            `cannot expand kubernetes:yaml/v2:${component} "${componentName}" in the mock leg: its inputs are unknown in preview`,
        );
    }
    const args = unwrap(inputs) as Obj;
    const texts: string[] = [];
    const readFile = (file: string) => {
        if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(file)) {
            throw new MockRefusal(
                `cannot expand kubernetes:yaml/v2:${component} "${componentName}" in the mock leg: it fetches ${file.split("?")[0]} over the network`,
            );
        }
        try {
            texts.push(fs.readFileSync(path.resolve(programDir, file), "utf8"));
        } catch (e) {
            throw new MockRefusal(
                `kubernetes:yaml/v2:${component} "${componentName}": reading YAML file from disk: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} ${file}`,
            );
        }
    };
    if (component === "ConfigFile") {
        if (typeof args.file !== "string")
            throw new MockRefusal(`kubernetes:yaml/v2:ConfigFile "${componentName}" needs a known \`file\``);
        readFile(args.file);
    } else {
        const files = Array.isArray(args.files)
            ? args.files
            : args.files === undefined || args.files === null
              ? []
              : [args.files];
        for (const f of files) {
            if (typeof f !== "string") continue;
            if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(f)) readFile(f);
            else for (const m of goGlob(f, programDir)) readFile(m);
        }
        if (typeof args.yaml === "string") texts.push(args.yaml);
    }
    const objs: Obj[] = [];
    for (const t of texts) objs.push(...decodeDocuments(t, (o) => Object.keys(o).length > 0));
    if (component === "ConfigGroup" && Array.isArray(args.objs)) {
        objs.push(...args.objs.filter(isObj));
    }
    const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
    return registerObjects(objs, prefix, ctx.defaultNamespace, args.skipAwait === true, ctx);
}
