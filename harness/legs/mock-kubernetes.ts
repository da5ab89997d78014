/**
 * What the Kubernetes provider (pulumi-kubernetes 4.27.0) does during a preview that plain runtime mocks do
 * not, re-done for the mock leg on values in the engine's wire form (secret and unknown sentinels kept):
 *
 * - `check`: the provider's Check, whose result is what the engine hands to analyzers and what dependent
 *   resources read in preview: autonaming (`<name>-<8 hex>` plus the `pulumi.com/autonamed` annotation, a
 *   known value), removal of read-only metadata, Secret `stringData` folded into base64 `data`, the default
 *   namespace for namespaced kinds, and the CRD cache that later YAML components consult;
 * - the invoke `kubernetes:yaml:decode` (the v1 `yaml.ConfigGroup`/`ConfigFile`), answered by decoding the
 *   YAML text as the provider does;
 * - the provider-side components `kubernetes:yaml/v2:ConfigGroup` and `ConfigFile`, expanded into the child
 *   registrations the provider makes (same names, types, parents, secret marking and order).
 *
 * Anything else the provider computes from a cluster, a chart repository or kustomize is refused with a
 * `MockRefusal` ("cannot ... in the mock leg"), never answered with a guess.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as os from "os";
import { BadInputError } from "../../support/errors";
import { KubeYamlError, decodeKubeYaml } from "../../gitops/decode/kube-yaml";
import { BAD_PATTERN, compilePathPattern } from "../../gitops/argocd/path-match";
import { runTool } from "../../gitops/render/render";
import { findTool } from "../../gitops/render/tools";
import { PROVIDER_CLUSTER_SCOPED_KINDS } from "../../support/kube-kinds";
import { isRecord } from "../../support/records";

/** The engine's wire sentinels. */
export const UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** The annotation the provider puts on every object it named. */
export const AUTONAMED_ANNOTATION = "pulumi.com/autonamed";

/** The mock leg cannot reproduce what the engine would do here: the fixture is an error, never a match. */
export class MockRefusal extends Error {}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** A map of wire values (isRecord, typed for the wire form). */
export function isObj(v: unknown): v is Obj {
    return isRecord(v);
}

export function isSecret(v: unknown): boolean {
    return isObj(v) && v[SIG_KEY] === SECRET_SIG;
}

export function makeSecret(v: Json): Obj {
    return { [SIG_KEY]: SECRET_SIG, value: v };
}

/** True when an unknown sentinel occurs anywhere in the value (the provider skips normalisation then). */
export function hasUnknown(v: unknown): boolean {
    if (v === UNKNOWN_WIRE) return true;
    if (Array.isArray(v)) return v.some(hasUnknown);
    if (isObj(v)) return Object.values(v).some(hasUnknown);
    return false;
}

/** A plain copy without secret markers (what `propMapToUnstructured` hands the provider's own code). */
function unwrap(v: Json): Json {
    if (isSecret(v)) return unwrap((v as Obj).value);
    if (Array.isArray(v)) return v.map(unwrap);
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)]));
    return v;
}

// ---------------------------------------------------------------------------------------------------------
// Kinds: which are namespaced (the provider's static table for built-in group versions, then CRDs).

/** Built-in group versions the provider knows statically; kinds of other group versions come from CRDs. */
const KNOWN_GROUP_VERSIONS = new Set(
    [
        "admissionregistration.k8s.io/v1 v1alpha1 v1beta1",
        "apiextensions.k8s.io/v1 v1beta1",
        "apiregistration.k8s.io/v1 v1beta1",
        "apps/v1 v1beta1 v1beta2",
        "auditregistration.k8s.io/v1alpha1",
        "autoscaling/v1 v2 v2beta1 v2beta2",
        "batch/v1 v1beta1 v2alpha1",
        "certificates.k8s.io/v1 v1alpha1 v1beta1",
        "coordination.k8s.io/v1 v1alpha1 v1alpha2 v1beta1",
        "core/v1",
        "discovery.k8s.io/v1 v1beta1",
        "events.k8s.io/v1 v1beta1",
        "extensions/v1beta1",
        "flowcontrol.apiserver.k8s.io/v1 v1alpha1 v1beta1 v1beta2 v1beta3",
        "meta/v1",
        "networking.k8s.io/v1 v1alpha1 v1beta1",
        "node.k8s.io/v1 v1alpha1 v1beta1",
        "policy/v1 v1beta1",
        "rbac.authorization.k8s.io/v1 v1alpha1 v1beta1",
        "resource.k8s.io/v1 v1alpha1 v1alpha2 v1alpha3 v1beta1 v1beta2",
        "scheduling.k8s.io/v1 v1alpha1 v1beta1",
        "settings.k8s.io/v1alpha1",
        "storage.k8s.io/v1 v1alpha1 v1beta1",
        "storagemigration.k8s.io/v1alpha1 v1beta1",
    ].flatMap((line) => {
        const [first, ...more] = line.split(" ");
        const group = first.split("/")[0];
        return [first, ...more.map((v) => `${group}/${v}`)];
    }),
);
KNOWN_GROUP_VERSIONS.add("v1");

const NAMESPACED_BUILTIN = new Set(
    "Binding ConfigMap ControllerRevision CronJob CSIStorageCapacity DaemonSet Deployment Endpoints EndpointSlice Event HorizontalPodAutoscaler Ingress Job Lease LimitRange NetworkPolicy PersistentVolumeClaim Pod PodDisruptionBudget PodTemplate ReplicaSet ReplicationController ResourceQuota Role RoleBinding Secret Service ServiceAccount StatefulSet".split(
        " ",
    ),
);

function groupOf(apiVersion: string): string {
    const i = apiVersion.indexOf("/");
    const group = i < 0 ? "" : apiVersion.slice(0, i);
    return group === "core" ? "" : group;
}

/** CRDs the program declared, by `<group>/<Kind>`: scope "Namespaced" or "Cluster". */
export type CrdScopes = Map<string, string>;

/** Records a CRD's scope (the provider caches every CRD it checks, for later YAML components). */
export function rememberCrd(crds: CrdScopes, obj: Json): void {
    if (!isObj(obj)) return;
    const plain = unwrap(obj) as Obj;
    if (plain.kind !== "CustomResourceDefinition" || groupOf(String(plain.apiVersion ?? "")) !== "apiextensions.k8s.io")
        return;
    const spec = isObj(plain.spec) ? plain.spec : {};
    const names = isObj(spec.names) ? spec.names : {};
    if (typeof spec.group === "string" && typeof names.kind === "string") {
        crds.set(`${spec.group}/${names.kind}`, String(spec.scope ?? ""));
    }
}

/**
 * Whether objects of this kind are namespaced, as the provider decides without a cluster: the static table
 * for built-in group versions, then CRDs among `objs`, then CRDs the program declared before. Otherwise
 * the provider fails, and so does this (same message).
 */
export function isNamespacedKind(apiVersion: string, kind: string, crds: CrdScopes, objs: Obj[] = []): boolean {
    const gv = apiVersion.startsWith("core/") ? apiVersion.slice("core/".length) : apiVersion;
    if (KNOWN_GROUP_VERSIONS.has(gv) || KNOWN_GROUP_VERSIONS.has(apiVersion)) {
        const base = kind.replace(/Patch$/, "").replace(/List$/, "");
        if (NAMESPACED_BUILTIN.has(base)) return true;
        if (PROVIDER_CLUSTER_SCOPED_KINDS.has(base)) return false;
    }
    const group = groupOf(apiVersion);
    const local = new Map<string, string>();
    for (const o of objs) rememberCrd(local, o);
    const scope = local.get(`${group}/${kind}`) ?? crds.get(`${group}/${kind}`);
    if (scope !== undefined) return scope === "Namespaced";
    const [g, v] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    throw new MockRefusal(
        `failed to determine if the following GVK is namespaced: ${g}/${v}, Kind=${kind} ` +
            `(declare its CustomResourceDefinition in the program, before the component, as the real preview needs too)`,
    );
}

// ---------------------------------------------------------------------------------------------------------
// Check: what the analyzer and dependent resources see.

export interface CheckContext {
    crds: CrdScopes;
    /** The provider's default namespace ("" when it has none: then nothing is defaulted). */
    defaultNamespace: string;
    /** Random bytes for autonaming; injectable for tests. */
    random?: () => string;
}

const READ_ONLY_METADATA = [
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "generation",
    "managedFields",
    "resourceVersion",
    "uid",
];

/** `kubernetes:<group>/<version>:<Kind>` → apiVersion and kind; undefined for other types. */
export function kubernetesKind(type: string): { apiVersion: string; kind: string } | undefined {
    const m = /^kubernetes:([^:]+):([^:]+)$/.exec(type);
    if (!m || !m[1].includes("/")) return undefined;
    const [group, version] = m[1].split("/");
    if (group === "yaml" || group === "helm.sh" || group === "kustomize") return undefined;
    return { apiVersion: group === "core" ? version : `${group}/${version}`, kind: m[2] };
}

/**
 * The provider's Check of a Kubernetes object registered as `name` (the URN's name), on wire-form inputs.
 * Returns the checked inputs; may throw MockRefusal where the real preview fails.
 */
export function checkKubernetesInputs(name: string, type: string, inputs: Obj, ctx: CheckContext): Obj {
    const out: Obj = JSON.parse(JSON.stringify(inputs));
    const ident = kubernetesKind(type);
    const apiVersion = typeof out.apiVersion === "string" ? out.apiVersion : (ident?.apiVersion ?? "");
    const kind = typeof out.kind === "string" ? out.kind : (ident?.kind ?? "");
    if (out.metadata === undefined || out.metadata === null) out.metadata = {};
    const meta = out.metadata;
    if (!isObj(meta) || isSecret(meta)) {
        // An unknown or secret metadata: the provider cannot look inside either; nothing to add.
        return out;
    }
    // Read-only fields are dropped.
    for (const f of READ_ONLY_METADATA) delete meta[f];
    // Autonaming: no name (known or unknown) and no generateName.
    const named = meta.name !== undefined && meta.name !== null && meta.name !== "";
    const generate = meta.generateName !== undefined && meta.generateName !== null && meta.generateName !== "";
    if (!named && generate) {
        throw new MockRefusal(
            "the `.metadata.generateName` field is not supported in YAML rendering mode (the real leg's provider mode)",
        );
    }
    if (!named) {
        const suffix = (ctx.random ?? (() => crypto.randomBytes(4).toString("hex")))();
        meta.name = `${name}-${suffix}`;
        const annotations = isObj(meta.annotations) && !isSecret(meta.annotations) ? meta.annotations : {};
        annotations[AUTONAMED_ANNOTATION] = "true";
        meta.annotations = annotations;
    }
    // Built-in kinds go through the typed API structs and back, which drops empty `omitempty` fields; the
    // one such field programs commonly set is an RBAC subject's `apiGroup: ""` (a ServiceAccount's).
    if (apiVersion.startsWith("rbac.authorization.k8s.io/") && !hasUnknown(out) && Array.isArray(out.subjects)) {
        for (const subject of out.subjects) if (isObj(subject) && subject.apiGroup === "") delete subject.apiGroup;
    }
    // Secret: stringData is folded into base64 data when the object holds no unknown value.
    if (apiVersion === "v1" && kind === "Secret" && !hasUnknown(out)) {
        foldStringData(out);
    }
    // The default namespace for namespaced kinds without one.
    if (ctx.defaultNamespace && (meta.namespace === undefined || meta.namespace === null || meta.namespace === "")) {
        let namespaced = true; // the provider assumes namespaced when it cannot tell
        try {
            namespaced = isNamespacedKind(apiVersion, kind, ctx.crds);
        } catch (e) {
            if (!(e instanceof MockRefusal)) throw e;
        }
        if (namespaced) meta.namespace = ctx.defaultNamespace;
    }
    if (kind === "CustomResourceDefinition") rememberCrd(ctx.crds, out);
    return out;
}

function foldStringData(secret: Obj): void {
    const sd = secret.stringData;
    const plainSd = sd === undefined ? undefined : unwrap(sd);
    if (
        !isObj(plainSd) ||
        Object.keys(plainSd).length === 0 ||
        Object.values(plainSd).some((v) => typeof v !== "string")
    ) {
        return;
    }
    const data: Obj = isObj(secret.data) && !isSecret(secret.data) ? secret.data : {};
    const sdIsSecret = isSecret(sd);
    const sdObj = (sdIsSecret ? (sd as Obj).value : sd) as Obj;
    for (const [k, v] of Object.entries(sdObj)) {
        const encoded = Buffer.from(String(unwrap(v)), "utf8").toString("base64");
        data[k] = isSecret(v) ? makeSecret(encoded) : encoded;
    }
    secret.data = sdIsSecret ? makeSecret(data) : data;
    delete secret.stringData;
}

// ---------------------------------------------------------------------------------------------------------
// YAML: the invoke kubernetes:yaml:decode and the yaml/v2 components.

/**
 * Multi-document YAML (or JSON) text into objects, as the provider's decoder reads it: the product's one
 * Kubernetes YAML decoder (gitops/decode/kube-yaml.ts), which `pko-guard check` uses too. `keep` decides which
 * documents count (v1 decode: those with kind and apiVersion; v2: every non-empty one).
 */
function decodeDocuments(text: string, keep: (o: Obj) => boolean): Obj[] {
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

/** A child registration as the provider makes it inside a component. */
export interface ChildRegistration {
    type: string;
    name: string;
    properties: Obj;
    /** Names (within this component) of children this one depends on. */
    dependsOn: string[];
}

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

/** Expands Kubernetes list kinds (`v1.List`, `*List`) into their items, recursively, in order. */
function expandLists(objs: Obj[]): Obj[] {
    const out: Obj[] = [];
    const queue = [...objs];
    while (queue.length > 0) {
        const o = queue.shift()!;
        if (typeof o.kind === "string" && o.kind.endsWith("List") && Array.isArray(o.items)) {
            queue.unshift(...(o.items.filter(isObj) as Obj[]));
            continue;
        }
        out.push(o);
    }
    return out;
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
        objs.push(...(args.objs.filter(isObj) as Obj[]));
    }
    const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
    return registerObjects(objs, prefix, ctx.defaultNamespace, args.skipAwait === true, ctx);
}

/**
 * The provider's yaml/v2 Normalize + Register, shared by ConfigGroup, ConfigFile, helm.sh/v4 Chart and
 * kustomize/v2 Directory: lists expanded, kind/apiVersion/name required, core group canonical, the default
 * namespace for namespaced kinds, children named `<prefix>:<namespace>/<name>`, Secrets' data secret.
 */
function registerObjects(
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
                ? `${meta.namespace}/${meta.name}`
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
                    ? `${(p.spec as Obj).group}/${isObj((p.spec as Obj).names) ? ((p.spec as Obj).names as Obj).kind : ""}`
                    : undefined,
            dependsAnno: isObj(meta.annotations)
                ? (meta.annotations as Obj)["config.kubernetes.io/depends-on"]
                : undefined,
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

const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
const REMOTE_REF = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@|github\.com\/)|\?ref=/i;

/** Runs a rendering tool for a component: a missing tool is a refusal, a failed render the component's error. */
function renderFor(tool: "helm" | "kustomize", args: string[], what: string, cwd: string): string {
    if (!findTool(tool))
        throw new MockRefusal(`cannot expand ${what} in the mock leg: ${tool} is not installed (npm run setup)`);
    try {
        return runTool(tool, args, what, { deadline: Date.now() + 120_000, repoRoot: cwd, show: (p) => p }, { cwd });
    } catch (e) {
        if (e instanceof BadInputError) throw new Error(e.message);
        throw e;
    }
}

/**
 * `kubernetes:helm.sh/v4:Chart` with a local chart: `helm template` (hooks left out, CRDs unless skipCrds,
 * the release name `name` or the component's, `values` and `valueYamlFiles`), then the yaml/v2 path with the
 * component's name as the prefix and the Chart's namespace (else the provider's) as the default.
 * Charts from a repository or an OCI registry are refused (they need the network).
 */
export function expandHelmV4(
    componentName: string,
    inputs: Obj,
    programDir: string,
    ctx: CheckContext,
): ChildRegistration[] {
    const what = `kubernetes:helm.sh/v4:Chart "${componentName}"`;
    if (hasUnknown(inputs))
        throw new MockRefusal(`cannot expand ${what} in the mock leg: its inputs are unknown in preview`);
    const valueFiles = (Array.isArray(inputs.valueYamlFiles) ? inputs.valueYamlFiles : []).map((a) =>
        isObj(a) && a[SIG_KEY] === ASSET_SIG && typeof a.path === "string" ? a.path : undefined,
    );
    const args = unwrap(inputs) as Obj;
    const chart = typeof args.chart === "string" ? args.chart : "";
    const repo =
        isObj(args.repositoryOpts) && typeof args.repositoryOpts.repo === "string" ? args.repositoryOpts.repo : "";
    const dir = path.resolve(programDir, chart);
    if (repo !== "" || REMOTE_REF.test(chart) || !fs.existsSync(path.join(dir, "Chart.yaml"))) {
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: the chart comes from a repository or registry (it needs the network)`,
        );
    }
    if (valueFiles.some((f) => f === undefined))
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: a valueYamlFiles entry is not a local file asset`,
        );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pko-guard-chart-"));
    try {
        const namespace = typeof args.namespace === "string" ? args.namespace : "";
        const cli = [
            "template",
            typeof args.name === "string" && args.name !== "" ? args.name : componentName,
            dir,
            "--no-hooks",
        ];
        if (namespace) cli.push("--namespace", namespace);
        if (args.skipCrds !== true) cli.push("--include-crds");
        for (const f of valueFiles) cli.push("--values", path.resolve(programDir, f!));
        if (isObj(args.values)) {
            fs.writeFileSync(path.join(tmp, "values.json"), JSON.stringify(args.values));
            cli.push("--values", path.join(tmp, "values.json"));
        }
        const text = renderFor("helm", cli, what, programDir);
        const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
        return registerObjects(
            decodeDocuments(text, (o) => Object.keys(o).length > 0),
            prefix,
            namespace || ctx.defaultNamespace,
            args.skipAwait === true,
            ctx,
        );
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/**
 * `kubernetes:kustomize/v2:Directory` with a local kustomization: `kustomize build` with the provider's
 * options (no load restrictions, no reordering), then the yaml/v2 path (prefix: the component's name;
 * default namespace: `namespace`, else the provider's). Remote directories are refused.
 */
export function expandKustomizeV2(
    componentName: string,
    inputs: Obj,
    programDir: string,
    ctx: CheckContext,
): ChildRegistration[] {
    const what = `kubernetes:kustomize/v2:Directory "${componentName}"`;
    if (hasUnknown(inputs))
        throw new MockRefusal(`cannot expand ${what} in the mock leg: its inputs are unknown in preview`);
    const args = unwrap(inputs) as Obj;
    const directory = typeof args.directory === "string" ? args.directory : "";
    if (REMOTE_REF.test(directory))
        throw new MockRefusal(
            `cannot expand ${what} in the mock leg: the kustomization is remote (it needs the network)`,
        );
    const dir = path.resolve(programDir, directory);
    const text = renderFor(
        "kustomize",
        ["build", "--load-restrictor", "LoadRestrictionsNone", "--reorder", "none", dir],
        what,
        programDir,
    );
    const prefix = typeof inputs.resourcePrefix === "string" ? inputs.resourcePrefix : componentName;
    const namespace =
        typeof args.namespace === "string" && args.namespace !== "" ? args.namespace : ctx.defaultNamespace;
    return registerObjects(
        decodeDocuments(text, (o) => Object.keys(o).length > 0),
        prefix,
        namespace,
        args.skipAwait === true,
        ctx,
    );
}

/** Provider-side components the mock leg expands, and why the others cannot be. */
export const EXPANDABLE_COMPONENTS = new Set([
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:helm.sh/v4:Chart",
    "kubernetes:kustomize/v2:Directory",
]);
export const REFUSED_COMPONENTS: Record<string, string> = {};
