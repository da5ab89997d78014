/**
 * Where a resource was written down: in YAML manifests (a GitOps repository read by `pko-guard check`, or
 * YAML files and strings that a Pulumi program hands to the Kubernetes provider's YAML and kustomize
 * components) or in program code. Rules about what must never be committed to Git read it from the URN.
 */

/** The URN prefix `pko-guard check` gives every object it reads (`urn:pulumi:check::manifests::<type>::<identity>`). */
export const MANIFEST_URN_PREFIX = "urn:pulumi:check::manifests::";

/** The annotation `pko-guard check` sets on every manifest to its file's path relative to the repository root. */
export const SOURCE_PATH = "pko-guard/source-path";

/** The Kubernetes provider's components whose children are read from YAML text (files, folders, strings, kustomize). */
const YAML_COMPONENTS = new Set([
    "kubernetes:yaml:ConfigFile",
    "kubernetes:yaml:ConfigGroup",
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:kustomize:Directory",
    "kubernetes:kustomize/v2:Directory",
]);

/**
 * True when the resource with this URN comes from YAML manifests: an object `pko-guard check` read, or a
 * resource whose URN type chain (`parent$...$type`) passes through one of the provider's YAML components.
 */
export function fromManifests(urn: unknown): boolean {
    if (typeof urn !== "string") return false;
    if (urn.startsWith(MANIFEST_URN_PREFIX)) return true;
    const parts = urn.split("::");
    if (parts.length < 4) return false;
    const chain = parts[2].split("$");
    return chain.slice(0, -1).some((t) => YAML_COMPONENTS.has(t));
}

/**
 * The annotation `pko-guard check` sets on an Argo CD Application or ApplicationSet whose applied objects it
 * could not compute (a generator or feature it does not expand, a template that does not execute, a source it
 * cannot read or render): one line a reason. check removes any value the manifest itself wrote, so only check's
 * own reasons are read (argocd-app-rendered reports each, failing closed).
 */
export const NOT_RENDERED = "pko-guard/not-rendered";

/**
 * The annotation `pko-guard check` sets on an object it read from a fetched source whose reference can move (a
 * branch, a tag, a chart version range): that source's URL, the reference and what it resolved to. check removes
 * any value the manifest itself wrote, so only check's own is read (pko-stack-prod-pinned-commit: a production
 * Stack from such a source is not pinned, whatever its spec says).
 */
export const FLOATING_SOURCE = "pko-guard/floating-source";

/** The URN prefix of a live object the webhook or `audit` reads (cluster/kinds.ts). */
export const CLUSTER_URN_PREFIX = "urn:pulumi:cluster::live::";

/** Which run judges a resource, from its URN: check's manifests, the cluster's objects, or a program's preview. */
export function judgedBy(urn: unknown): "manifests" | "cluster" | "program" {
    if (typeof urn === "string" && urn.startsWith(MANIFEST_URN_PREFIX)) return "manifests";
    if (typeof urn === "string" && urn.startsWith(CLUSTER_URN_PREFIX)) return "cluster";
    return "program";
}

/**
 * What a resource is judged with, as a message says it: the manifests `check` reads with it, the cluster's objects
 * (admission, audit), or the program being previewed. `among` ends "which has no binding ..."; `of` ends "no Stack ...".
 * `scope`: the scope it is judged in when `check` judges several, as messages name it (`in cluster "..."`), added
 * so that "no Stack" is not read as "none in any cluster".
 */
export function judgedWith(urn: unknown, scope?: string): { among: string; of: string } {
    const by = judgedBy(urn);
    if (by === "manifests") {
        const where = scope === undefined ? "" : ` ${scope}`;
        return { among: `among the manifests checked with it${where}`, of: `of the manifests checked${where}` };
    }
    if (by === "cluster") return { among: "in the cluster", of: "in the cluster" };
    return { among: "in this program", of: "of this program" };
}

/**
 * Whether the resource is judged in a preview through the Pulumi engine (a program), the one run where a value can
 * be unknown and a missing one may stand for one not known yet: neither check's manifests nor the cluster's objects.
 * Messages say "unknown during preview" and "make it known at preview time" only then.
 */
export function judgedInPreview(urn: unknown): boolean {
    return judgedBy(urn) === "program";
}
