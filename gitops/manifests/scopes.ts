/**
 * Objects are identified by where they land: the cluster an Application sends them to (ManifestObject.scope,
 * gitops/argocd/destinations.ts) plus their kind, namespace and name. The same identity in two clusters is two
 * objects (an overlay sent to two clusters, per-cluster folders). Within one scope, an identity defined twice
 * (example folders, copies of CRDs, alternative layouts, two Applications sending one object to one cluster) is
 * judged in each place by every rule, and each definition gets an advisory `pko-guard-duplicate-object` finding
 * naming the others: whichever definition the cluster keeps has been judged, so the duplicate is no gap in the
 * verdict, but which one Argo CD (or `kubectl apply`) keeps is not decided by the repository. It is never bad
 * input: exit 2 stays for what cannot be read or rendered.
 *
 * Every object keeps a URN of its own (rows are matched to objects by URN): the first object of a URN keeps
 * `urn:pulumi:check::manifests::<type>::<identity>`; a later one gets a parent type `pko-guard:copy:<n>` in
 * front of its type (`...::pko-guard:copy:2$kubernetes:core/v1:Secret::Secret/ns/name`), which leaves its type
 * and name (evaluation/rows.ts urnParts), and so every report's resource, as they were.
 */
import { EvalRow } from "../../evaluation/evaluate";
import { row } from "../../evaluation/rows";
import { MANIFEST_URN_PREFIX } from "../../policies/model/origin";
import { NO_CLUSTER, describeScope } from "../argocd/destinations";
import { ManifestObject, renderedWithDefaultsFrom } from "./manifest-objects";

/** The finding on each definition of an identity defined more than once in one scope. */
export const DUPLICATE_OBJECT = "pko-guard-duplicate-object";

/**
 * Gives every object a URN of its own and returns the identities defined more than once in one scope (each
 * group's objects in read order).
 */
export function scopeObjects(objects: ManifestObject[]): ManifestObject[][] {
    const byIdentity = new Map<string, ManifestObject[]>();
    const urns = new Map<string, number>();
    for (const o of objects) {
        if (!o.named) continue;
        const key = `${o.scope ?? NO_CLUSTER}\u0000${o.identity}`;
        const group = byIdentity.get(key);
        if (group) group.push(o);
        else byIdentity.set(key, [o]);
        const seen = urns.get(o.urn) ?? 0;
        urns.set(o.urn, seen + 1);
        if (seen > 0 && o.urn.startsWith(MANIFEST_URN_PREFIX)) {
            o.urn = `${MANIFEST_URN_PREFIX}pko-guard:copy:${seen + 1}$${o.urn.slice(MANIFEST_URN_PREFIX.length)}`;
        }
    }
    return [...byIdentity.values()].filter((g) => g.length > 1);
}

/**
 * Where a definition is, as messages show it: `"file:line"` (quoted: a path is no field), and what syncs it, or
 * the folder rendered with defaults that made it: two overlays of one base give one file and line, and the
 * overlay is what tells the definitions apart.
 */
function place(o: ManifestObject): string {
    const from = renderedWithDefaultsFrom(o);
    const how = o.syncedBy ?? (from !== undefined ? `rendered from ${JSON.stringify(from)} with defaults` : undefined);
    return `${JSON.stringify(`${o.repoPath ?? o.file}:${o.line}`)}${how ? ` (${how})` : ""}`;
}

/** The advisory finding on each definition of each duplicated identity. */
export function duplicateRows(groups: ManifestObject[][]): EvalRow[] {
    const rows: EvalRow[] = [];
    for (const group of groups) {
        const where = describeScope(
            group[0].scope ?? NO_CLUSTER,
            group.some((o) => o.syncedBy !== undefined),
        );
        // One text for every definition (so they sort together, in read order), naming each place.
        const text =
            `${group[0].identity} is defined ${group.length} times ${where}: ${group.map(place).join(", ")}; ` +
            "each definition is judged, but which one the cluster keeps is not decided by the repository. " +
            "Keep one definition, send the others to other clusters, or leave copies out with --exclude.";
        for (const o of group) {
            const r = row(DUPLICATE_OBJECT, o.urn, "advisory", text) as EvalRow;
            r.facts = { text, failClosed: false };
            rows.push(r);
        }
    }
    return rows;
}
