/**
 * Helpers for tests against the real API server (harness/apiserver.ts): the cluster binaries or a clear
 * failure (skipped, reported pending, only with PKO_GUARD_SKIP_REAL=1), guide-shaped manifests moved into
 * a namespace of the test's own, and waits on conditions (never fixed sleeps).
 */
import * as fs from "fs";
import * as path from "path";
import * as jsyaml from "js-yaml";
import { REPO_ROOT } from "../../support/paths";
import { missingClusterBinaries } from "../../harness/apiserver";

export function requireCluster(ctx: Mocha.Context): void {
    const missing = missingClusterBinaries();
    if (missing.length === 0) return;
    if (process.env.PKO_GUARD_SKIP_REAL === "1") ctx.skip();
    throw new Error(
        `the cluster toolchain is not installed (${missing.join(", ")}): run npm run setup (or set PKO_GUARD_SKIP_REAL=1)`,
    );
}

export type Doc = Record<string, any>;

/** The documents of a fixture file, with namespace `pulumi` moved to `ns`, other namespaces and cluster-scoped names prefixed by it. */
export function guideDocs(fixture: string, file: string, ns: string): Doc[] {
    const text = fs.readFileSync(path.join(REPO_ROOT, "fixtures", fixture, "manifests", file), "utf8");
    return (jsyaml.loadAll(text) as Doc[])
        .filter((d) => d && typeof d === "object")
        .map((d) => {
            const m = d.metadata ?? {};
            if (m.namespace === "pulumi") m.namespace = ns;
            else if (m.namespace) m.namespace = `${ns}-${m.namespace}`;
            else if (!m.namespace && /^Cluster/.test(d.kind)) m.name = `${ns}-${m.name}`;
            for (const s of d.subjects ?? []) if (s.namespace === "pulumi") s.namespace = ns;
            return d;
        });
}

export function yaml(docs: Doc[]): string {
    return docs.map((d) => jsyaml.dump(d)).join("---\n");
}

/** Namespace objects for every namespace the documents use (applied first: the test cluster creates none). */
export function namespacesOf(docs: Doc[]): Doc[] {
    const names = new Set(
        docs.map((d) => d.metadata?.namespace).filter((n): n is string => typeof n === "string" && n !== ""),
    );
    return [...names].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } }));
}

export function namespaceYaml(ns: string): string {
    return `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`;
}

export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
    }
}
