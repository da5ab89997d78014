/**
 * Hidden classes on the hot paths (policies/model/shapes.ts): objects made alike share one, as V8's own
 * `%HaveSameMap` tells. Node 20's V8 gives every object a spread literal extends (`{ ...row, facts }`) a hidden
 * class of its own; each test below fails when such a literal comes back on its path. Also: `extended` is
 * `{ ...from, ...extra }` key for key.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as v8 from "v8";
import * as fc from "fast-check";
import { extended } from "../policies/model/shapes";
import { evaluatePack } from "../core/evaluate";
import { judgeRows } from "../core/judge";
import { loadManifests } from "../core/manifests/index";
import { evalResources } from "../core/manifests/objects";
import { evaluateManifests } from "../core/manifests/evaluate";
import { packConfig } from "../core/pack-config";

v8.setFlagsFromString("--allow-natives-syntax");
const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
v8.setFlagsFromString("--no-allow-natives-syntax");

/** The hidden classes among objects with the same keys in the same order (several key orders: each its own group). */
function hiddenClasses(objects: object[]): number {
    const byKeys = new Map<string, object[]>();
    for (const o of objects) {
        const k = Object.keys(o).join("\u0000");
        byKeys.set(k, [...(byKeys.get(k) ?? []), o]);
    }
    let n = 0;
    for (const group of byKeys.values()) {
        const classes: object[] = [];
        for (const o of group) if (!classes.some((c) => haveSameMap(c, o))) classes.push(o);
        n += classes.length;
    }
    return n;
}

/** A repository of `n` Stacks on a branch, each without annotations (so the source-path annotation is added). */
function repository(n: number): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-shapes-"));
    const docs = [];
    for (let i = 0; i < n; i++) {
        docs.push(
            [
                "apiVersion: pulumi.com/v1",
                "kind: Stack",
                "metadata:",
                `  name: app-${i}`,
                "  namespace: team",
                "  labels:",
                "    env: production",
                "spec:",
                `  stack: acme/app-${i}/production`,
                "  projectRepo: https://github.com/acme/app",
                "  branch: main",
                "  destroyOnFinalize: true",
            ].join("\n"),
        );
    }
    fs.mkdirSync(path.join(dir, "manifests"));
    fs.writeFileSync(path.join(dir, "manifests", "stacks.yaml"), docs.join("\n---\n"));
    return dir;
}

describe("hidden classes on the hot paths", () => {
    let dir: string;
    before(() => {
        dir = repository(60);
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("the premise: a spread literal that adds a key gives each object its own hidden class, extended does not", () => {
        const made = (i: number) => ({ policy: "p", urn: `u${i}` });
        const spread = Array.from({ length: 50 }, (_, i) => ({ ...made(i), facts: i }));
        const built = Array.from({ length: 50 }, (_, i) => extended(made(i), { facts: i }));
        // The premise is V8's (11.3, Node 20); where a later V8 shares them, the tests below still hold.
        if (process.versions.v8.startsWith("11.3.")) assert.ok(hiddenClasses(spread) > 10, `spread: ${hiddenClasses(spread)}`);
        assert.strictEqual(hiddenClasses(built), 1);
    });

    it("extended is { ...from, ...extra }: keys, order, values; __proto__ an own key", () => {
        const key = fc.constantFrom("a", "b", "metadata", "__proto__", "constructor", "1", "0", "z");
        const obj = fc.dictionary(key, fc.oneof(fc.integer(), fc.string()), { maxKeys: 6 });
        fc.assert(
            fc.property(obj, obj, (a, b) => {
                const want = { ...a, ...b };
                const got = extended(a, b);
                assert.deepStrictEqual(Object.keys(got), Object.keys(want));
                for (const k of Object.keys(want)) assert.strictEqual((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k]);
                assert.strictEqual(Object.getPrototypeOf(got), Object.prototype);
            }),
            { numRuns: 300 },
        );
        const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
        const got = extended(hostile, { b: 2 }) as Record<string, unknown>;
        assert.deepStrictEqual(Object.keys(got), ["__proto__", "a", "b"]);
        assert.strictEqual(got.polluted, undefined);
    });

    it("check: objects with the source-path annotation, rows, located rows and findings share their hidden classes", () => {
        const load = loadManifests([path.join(dir, "manifests")], { repoRoot: dir, cwd: dir });
        assert.strictEqual(load.objects.length, 60);
        const objects = load.objects.map((o) => o.object);
        assert.strictEqual(hiddenClasses(objects), 1);
        assert.strictEqual(hiddenClasses(objects.map((o) => o.metadata as object)), 1);
        assert.strictEqual(hiddenClasses(objects.map((o) => (o.metadata as Record<string, object>).annotations)), 1);

        const config = packConfig(undefined);
        const rows = evaluatePack(evalResources(load.objects), config);
        const byPolicy = new Map<string, number>();
        for (const r of rows) byPolicy.set(r.policy, (byPolicy.get(r.policy) ?? 0) + 1);
        // Findings on every Stack (a branch in production, destroyOnFinalize in production), each rule's alike.
        assert.ok(
            [...byPolicy.values()].some((n) => n >= 60),
            JSON.stringify([...byPolicy]),
        );
        assert.ok(hiddenClasses(rows) <= 3, `rows: ${hiddenClasses(rows)} hidden classes for ${rows.length}`);
        const located = evaluateManifests(load, config);
        assert.ok(hiddenClasses(located) <= 3, `located rows: ${hiddenClasses(located)}`);
        const findings = judgeRows(located, false);
        assert.ok(hiddenClasses(findings) <= 3, `findings: ${hiddenClasses(findings)}`);
    });
});
