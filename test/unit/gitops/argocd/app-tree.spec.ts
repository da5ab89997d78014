/** Application trees: every Application rendered is placed in turn; depth is bounded; a cycle names its chain. */
import * as assert from "assert";
import { MAX_TREE_DEPTH, walkApplicationTree } from "../../../../gitops/argocd/app-tree";
import { ManifestObject } from "../../../../gitops/manifests/manifest-objects";

const obj = (kind: string, name: string, spec: Record<string, unknown> = {}): ManifestObject =>
    ({
        kind,
        named: true,
        identity: `${kind}/argocd/${name}`,
        object: { apiVersion: "argoproj.io/v1alpha1", kind, metadata: { name, namespace: "argocd" }, spec },
    }) as unknown as ManifestObject;

/** Walks from `root`, each Application rendering the names `renders` gives it; what each step saw. */
function walk(renders: Record<string, string[]>, sets: Record<string, string[]> = {}) {
    const placed: string[] = [];
    const failed: string[] = [];
    const dropped: string[] = [];
    walkApplicationTree([obj("Application", "root", { x: 1 })], {
        place: (app, via) => {
            const name = String((app.object.metadata as { name: string }).name);
            placed.push([name, ...via].join(" < "));
            return (renders[name] ?? []).map((n) =>
                n.startsWith("set:") ? obj("ApplicationSet", n.slice(4)) : obj("Application", n, { x: 1 }),
            );
        },
        expandSet: (set) =>
            (sets[String((set.object.metadata as { name: string }).name)] ?? []).map((n) => obj("Application", n)),
        fail: (o, reason) => failed.push(`${o.identity}: ${reason}`),
        drop: (o) => dropped.push(o.identity),
    });
    return { placed, failed, dropped };
}

describe("Application trees", () => {
    it("places each rendered Application and each Application a rendered set creates, breadth first", () => {
        const r = walk({ root: ["a", "set:s"], a: ["c"] }, { s: ["b"] });
        assert.deepStrictEqual(r.placed, [
            "root",
            "a < Application argocd/root",
            "b < Application argocd/root",
            "c < Application argocd/root < Application argocd/a",
        ]);
        assert.deepStrictEqual([r.failed, r.dropped], [[], []]);
    });
    it("a root that renders its own manifest is no cycle: its identical copy is dropped, not expanded", () => {
        const r = walk({ root: ["root", "a"] });
        assert.deepStrictEqual(r.placed, ["root", "a < Application argocd/root"]);
        assert.deepStrictEqual([r.failed, r.dropped], [[], ["Application/argocd/root"]]);
    });
    it("a cycle fails closed on the Application that closes it, naming the chain; the copy is dropped", () => {
        const r = walk({ root: ["a"], a: ["b"], b: ["a"] });
        assert.deepStrictEqual(r.placed, [
            "root",
            "a < Application argocd/root",
            "b < Application argocd/root < Application argocd/a",
        ]);
        assert.deepStrictEqual(r.dropped, ["Application/argocd/a"]);
        assert.deepStrictEqual(r.failed, [
            'Application/argocd/b: its sources render Application "argocd/a", which is above it: Applications render each other in a cycle ("argocd/root" -> "argocd/a" -> "argocd/b" -> "argocd/a"), not expanded again',
        ]);
    });
    it("stops at the depth bound: the deeper Application fails closed and is not placed", () => {
        const renders: Record<string, string[]> = { root: ["d1"] };
        for (let i = 1; i <= MAX_TREE_DEPTH + 2; i++) renders[`d${i}`] = [`d${i + 1}`];
        const r = walk(renders);
        assert.strictEqual(r.placed.length, MAX_TREE_DEPTH);
        assert.deepStrictEqual(r.failed, [
            `Application/argocd/d${MAX_TREE_DEPTH}: it is ${MAX_TREE_DEPTH} Applications below its root ("argocd/root"), deeper than check expands (${MAX_TREE_DEPTH})`,
        ]);
    });
});
