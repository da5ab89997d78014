/**
 * Application trees ("app of apps", the most common Argo CD layout): an Application whose sources render
 * Applications or ApplicationSets makes Argo CD create those in turn; check expands them the same way, breadth
 * first, each judged in its own destination and attributed to the Application that synced it. Depth is bounded
 * (MAX_TREE_DEPTH) and a cycle fails closed naming the chain; an Application that renders itself (a root managing
 * its own manifest, as argocd-autopilot sets up) is no cycle.
 */
import { ManifestObject } from "../manifests/manifest-objects";
import { isApplication, isApplicationSet } from "./applications";
import { record } from "../../support/records";

export const MAX_TREE_DEPTH = 10;

/** What walking a tree needs of the load. */
export interface TreeSteps {
    /** Places one Application (`via`: the chain above it, as shown); returns the objects it added. */
    place: (app: ManifestObject, via: string[]) => ManifestObject[];
    /** Expands one ApplicationSet the tree produced; returns the Applications it added. */
    expandSet: (set: ManifestObject) => ManifestObject[];
    /** Records why an Application or ApplicationSet is not (fully) expanded: it fails closed. */
    fail: (o: ManifestObject, reason: string) => void;
    /** Takes an object out of the load (a rendered copy of an Application already in the tree). */
    drop: (o: ManifestObject) => void;
}

/** An Application as its chain shows it: `namespace/name` (after landing), or `name`. */
export function appKey(o: ManifestObject): string {
    const meta = record(o.object.metadata) ?? {};
    const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? `${meta.namespace}/` : "";
    return `${ns}${String(meta.name)}`;
}

interface Node {
    app: ManifestObject;
    /** The keys of the Applications above it, root first. */
    chain: string[];
}

/** Places `roots` and, in turn, every Application and ApplicationSet their rendering produces. */
export function walkApplicationTree(roots: ManifestObject[], steps: TreeSteps): void {
    const queue: Node[] = roots.map((app) => ({ app, chain: [] }));
    for (let i = 0; i < queue.length; i++) {
        const { app, chain } = queue[i];
        const key = appKey(app);
        const path = [...chain, key];
        const added = steps.place(
            app,
            chain.map((k) => `Application ${k}`),
        );
        const children: ManifestObject[] = [];
        for (const x of added) {
            if (!x.named) continue;
            if (isApplication(x.object)) children.push(x);
            else if (isApplicationSet(x.object)) {
                if (tooDeep(x, path, steps)) continue;
                children.push(...steps.expandSet(x).filter((a) => a.named));
            }
        }
        for (const child of children) {
            const childKey = appKey(child);
            if (childKey === key) {
                // An Application managing its own manifest: one Application, judged once when both say the same.
                if (sameSpec(child, app)) steps.drop(child);
                continue;
            }
            if (path.includes(childKey)) {
                steps.drop(child);
                steps.fail(
                    app,
                    `its sources render Application ${JSON.stringify(childKey)}, which is above it: Applications render each other in a cycle (${[...path, childKey].map((k) => JSON.stringify(k)).join(" -> ")}), not expanded again`,
                );
                continue;
            }
            if (tooDeep(child, path, steps)) continue;
            queue.push({ app: child, chain: path });
        }
    }
}

function sameSpec(a: ManifestObject, b: ManifestObject): boolean {
    return JSON.stringify(a.object.spec) === JSON.stringify(b.object.spec);
}

function tooDeep(o: ManifestObject, path: string[], steps: TreeSteps): boolean {
    if (path.length < MAX_TREE_DEPTH) return false;
    steps.fail(
        o,
        `it is ${path.length} Applications below its root (${JSON.stringify(path[0])}), deeper than check expands (${MAX_TREE_DEPTH})`,
    );
    return true;
}
