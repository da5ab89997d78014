/**
 * Run by test/integration/support/hidden-classes.spec.ts in a fresh process (`node --allow-natives-syntax`):
 * counts the hidden classes of the objects `check`'s hot paths make over the repository given, and prints them
 * as JSON. A fresh process, because V8's root object map stops taking new transitions after about 1,500 of them:
 * in a long test run every object built key by key from `{}` may then get a class of its own, whatever the code does.
 */
import * as path from "path";
import { extended } from "../../support/shapes";
import { evaluatePack } from "../../evaluation/evaluate";
import { judgeRows } from "../../evaluation/judge";
import { loadManifests } from "../../gitops/manifests/load";
import { evalResources } from "../../gitops/manifests/manifest-objects";
import { evaluateManifests } from "../../gitops/manifests/evaluate-manifests";
import { packConfig } from "../../evaluation/pack-config";

const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

/** The hidden classes among objects with the same keys in the same order (each key order its own group). */
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

const dir = process.argv[2];
const made = (i: number) => ({ policy: "p", urn: `u${i}` });
const load = loadManifests([path.join(dir, "manifests")], { repoRoot: dir, cwd: dir });
const objects = load.objects.map((o) => o.object);
const config = packConfig(undefined);
const rows = evaluatePack(evalResources(load.objects), config);
const located = evaluateManifests(load, config);
const findings = judgeRows(located, false);
process.stdout.write(
    JSON.stringify({
        v8: process.versions.v8,
        spread: hiddenClasses(Array.from({ length: 50 }, (_, i) => ({ ...made(i), facts: i }))),
        extended: hiddenClasses(Array.from({ length: 50 }, (_, i) => extended(made(i), { facts: i }))),
        objects: { n: objects.length, classes: hiddenClasses(objects) },
        metadata: hiddenClasses(objects.map((o) => o.metadata as object)),
        annotations: hiddenClasses(objects.map((o) => (o.metadata as Record<string, object>).annotations)),
        rows: {
            n: rows.length,
            classes: hiddenClasses(rows),
            policies: [...new Set(rows.map((r) => r.policy))].length,
        },
        located: hiddenClasses(located),
        findings: hiddenClasses(findings),
    }),
);
