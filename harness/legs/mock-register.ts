/**
 * How the provider registers the objects of a component (yaml/v2 ConfigGroup and ConfigFile, helm.sh/v4 Chart,
 * kustomize/v2 Directory): normalized, named, and ordered by what each depends on.
 */
import { CheckContext } from "./mock-check";
import { groupOf, isNamespacedKind } from "./mock-kinds";
import { MockRefusal, Obj, isObj, makeSecret, unwrap } from "./mock-wire";

/** A child registration as the provider makes it inside a component. */
export interface ChildRegistration {
    type: string;
    name: string;
    properties: Obj;
    /** Names (within this component) of children this one depends on. */
    dependsOn: string[];
}

/** Expands Kubernetes list kinds (`v1.List`, `*List`) into their items, recursively, in order. */
function expandLists(objs: Obj[]): Obj[] {
    const out: Obj[] = [];
    const queue = [...objs];
    while (queue.length > 0) {
        const o = queue.shift()!;
        if (typeof o.kind === "string" && o.kind.endsWith("List") && Array.isArray(o.items)) {
            queue.unshift(...o.items.filter(isObj));
            continue;
        }
        out.push(o);
    }
    return out;
}

/**
 * The provider's yaml/v2 Normalize + Register, shared by ConfigGroup, ConfigFile, helm.sh/v4 Chart and
 * kustomize/v2 Directory: lists expanded, kind/apiVersion/name required, core group canonical, the default
 * namespace for namespaced kinds, children named `<prefix>:<namespace>/<name>`, Secrets' data secret.
 */
export function registerObjects(
    objs: Obj[],
    prefix: string,
    namespace: string,
    skipAwait: boolean,
    ctx: CheckContext,
): ChildRegistration[] {
    // Normalize: lists expanded, kind/apiVersion/name required, core group canonical, default namespace.
    objs = expandLists(objs);
    for (const o of objs) {
        const kind = typeof o.kind === "string" ? o.kind : "";
        let apiVersion = typeof o.apiVersion === "string" ? o.apiVersion : "";
        if (!kind || !apiVersion)
            throw new MockRefusal(
                `Kubernetes resources require a kind and apiVersion: \`${JSON.stringify(o).slice(0, 97)}...\``,
            );
        const meta = isObj(o.metadata) ? o.metadata : undefined;
        if (!meta || typeof meta.name !== "string" || meta.name === "") {
            throw new MockRefusal(
                `Kubernetes resources require a .metadata.name: \`${JSON.stringify(o).slice(0, 97)}...\``,
            );
        }
        if (apiVersion.startsWith("core/")) {
            apiVersion = apiVersion.slice("core/".length);
            o.apiVersion = apiVersion;
        }
        if (
            isNamespacedKind(apiVersion, kind, ctx.crds, objs) &&
            (meta.namespace === undefined || meta.namespace === "")
        ) {
            if (namespace) meta.namespace = namespace;
        }
    }
    const children = objs.map((o): ChildRegistration => {
        const meta = o.metadata as Obj;
        const kind = String(o.kind);
        const apiVersion = String(o.apiVersion);
        let name =
            typeof meta.namespace === "string" && meta.namespace !== ""
                ? `${meta.namespace}/${String(meta.name)}`
                : String(meta.name);
        if (prefix !== "") name = `${prefix}:${name}`;
        if (skipAwait) {
            meta.annotations = { ...(isObj(meta.annotations) ? meta.annotations : {}), "pulumi.com/skipAwait": "true" };
        }
        const props: Obj = { ...o };
        if (apiVersion === "v1" && kind === "Secret") {
            for (const key of ["data", "stringData"]) if (key in props) props[key] = makeSecret(props[key]);
        }
        const group = groupOf(apiVersion);
        const version = apiVersion.includes("/") ? apiVersion.split("/")[1] : apiVersion;
        return {
            type: `kubernetes:${group === "" ? "core" : group}/${version}:${kind}`,
            name,
            properties: props,
            dependsOn: [],
        };
    });
    return orderChildren(children);
}

/**
 * The provider registers children in dependency order (cli-utils' graph): CRDs before their custom
 * resources, Namespaces before objects in them, explicit `config.kubernetes.io/depends-on` annotations;
 * each child depends on the ones it needs. Order within a level follows the input.
 */
function orderChildren(children: ChildRegistration[]): ChildRegistration[] {
    const info = children.map((c) => {
        const p = unwrap(c.properties) as Obj;
        const meta = p.metadata as Obj;
        return {
            c,
            group: groupOf(String(p.apiVersion)),
            kind: String(p.kind),
            ns: typeof meta.namespace === "string" ? meta.namespace : "",
            name: String(meta.name),
            crd:
                p.kind === "CustomResourceDefinition" && isObj(p.spec)
                    ? `${String(p.spec.group)}/${isObj(p.spec.names) ? String(p.spec.names.kind) : ""}`
                    : undefined,
            dependsAnno: isObj(meta.annotations) ? meta.annotations["config.kubernetes.io/depends-on"] : undefined,
        };
    });
    const deps = new Map<number, Set<number>>();
    info.forEach((a, i) => {
        const set = new Set<number>();
        info.forEach((b, j) => {
            if (i === j) return;
            if (b.crd && b.crd === `${a.group}/${a.kind}`) set.add(j);
            if (b.kind === "Namespace" && b.group === "" && a.ns !== "" && b.name === a.ns) set.add(j);
        });
        if (typeof a.dependsAnno === "string") {
            for (const ref of a.dependsAnno
                .split(",")
                .map((s) => s.trim())
                .filter(Boolean)) {
                // <group>/namespaces/<ns>/<kind>/<name> or <group>/<kind>/<name>
                const parts = ref.split("/");
                const [group, ns, kind, name] =
                    parts.length === 5 ? [parts[0], parts[2], parts[3], parts[4]] : [parts[0], "", parts[1], parts[2]];
                info.forEach((b, j) => {
                    if (j !== i && b.group === group && b.kind === kind && b.name === name && b.ns === ns) set.add(j);
                });
            }
        }
        deps.set(i, set);
    });
    const done = new Set<number>();
    const out: ChildRegistration[] = [];
    while (done.size < info.length) {
        const level = info.map((_, i) => i).filter((i) => !done.has(i) && [...deps.get(i)!].every((d) => done.has(d)));
        if (level.length === 0)
            throw new MockRefusal("cannot order the YAML objects: their depends-on annotations form a cycle");
        for (const i of level) {
            info[i].c.dependsOn = [...deps.get(i)!].map((d) => info[d].c.name);
            out.push(info[i].c);
        }
        for (const i of level) done.add(i);
    }
    return out;
}
