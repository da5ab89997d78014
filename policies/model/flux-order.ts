/**
 * The order in which Flux applies objects, as far as a rule reads it: kustomize-controller applies everything one
 * Kustomization builds in one reconciliation, after the Kustomizations its `spec.dependsOn` names are ready.
 * The owning Kustomization is read from kustomize-controller's owner labels; two Kustomizations neither of which
 * depends on the other apply in no set order.
 */
import { Plain, get, list, str } from "./values";
import { ResourceLike } from "./stack";

const KUSTOMIZATION = /^kubernetes:kustomize\.toolkit\.fluxcd\.io\/[^:]+:Kustomization$/;
const OWNER_NAME = "kustomize.toolkit.fluxcd.io/name";
const OWNER_NAMESPACE = "kustomize.toolkit.fluxcd.io/namespace";

/** `namespace/name` of the Kustomization that applied an object (from its labels), when it says. */
export function fluxOwner(labels: Plain): string | undefined {
    const name = str(get(labels, OWNER_NAME));
    const ns = str(get(labels, OWNER_NAMESPACE));
    return typeof name === "string" && typeof ns === "string" ? `${ns}/${name}` : undefined;
}

/** For each Kustomization of the program (`namespace/name`), every Kustomization it waits for, transitively. */
export function fluxDependencies(
    resources: ResourceLike[],
    props: (r: ResourceLike) => Plain,
): Map<string, Set<string>> {
    const direct = new Map<string, string[]>();
    for (const r of resources) {
        if (!KUSTOMIZATION.test(String(r.type ?? ""))) continue;
        const p = props(r);
        const name = str(get(p, "metadata", "name"));
        const nsRaw = str(get(p, "metadata", "namespace"));
        if (typeof name !== "string") continue;
        const ns = typeof nsRaw === "string" && nsRaw !== "" ? nsRaw : "default";
        const deps = list(get(p, "spec", "dependsOn"))
            .map((d) => {
                const n = str(get(d, "name"));
                const dns = str(get(d, "namespace"));
                return typeof n === "string" ? `${typeof dns === "string" && dns !== "" ? dns : ns}/${n}` : undefined;
            })
            .filter((d): d is string => d !== undefined);
        direct.set(`${ns}/${name}`, deps);
    }
    const closure = new Map<string, Set<string>>();
    for (const start of direct.keys()) {
        const seen = new Set<string>();
        const todo = [...(direct.get(start) ?? [])];
        while (todo.length > 0) {
            const next = todo.pop()!;
            if (seen.has(next)) continue;
            seen.add(next);
            todo.push(...(direct.get(next) ?? []));
        }
        closure.set(start, seen);
    }
    return closure;
}
