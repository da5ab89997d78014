/**
 * The Kubernetes objects of findings, as reports name them, and the kinds each rule reads: what the
 * PolicyReport's pass results, the JSON report's `object` and JUnit's test cases are made of.
 */
import { Row } from "../evaluation/rows";
import { policies } from "../policies/index";
import { DescribedRule } from "../policies/model/policy";
import { MANIFEST_URN_PREFIX } from "../policies/model/origin";
import { CLUSTER_URN_PREFIX } from "../cluster/kinds";
import type { ReportObject } from "./subject";

/**
 * The Kubernetes kinds each rule judges, from the rules' own description (`about.reads`, `group/Kind`): an
 * object of such a kind with no finding of the rule passed it. Rules that read no Kubernetes kind
 * (aws-s3-no-public-acl reads Pulumi AWS types) read no object.
 */
export const RULE_KINDS: Record<string, string[]> = Object.fromEntries(
    policies.map((p) => [
        p.name,
        ((p as Partial<DescribedRule>).about?.reads ?? [])
            .filter((r) => !r.includes(":"))
            .map((r) => r.slice(r.lastIndexOf("/") + 1)),
    ]),
);

/** `Kind/namespace/name` or `Kind/name` (check's identities), else the Pulumi type's kind and the resource name. */
export function objectOf(f: Pick<Row, "resource" | "type">): ReportObject | undefined {
    const parts = f.resource.split("/");
    if (
        /^[A-Z][A-Za-z0-9]*$/.test(parts[0] ?? "") &&
        (parts.length === 2 || parts.length === 3) &&
        parts.every((p) => p !== "")
    ) {
        return parts.length === 3
            ? { kind: parts[0], namespace: parts[1], name: parts[2] }
            : { kind: parts[0], name: parts[1] };
    }
    if (!f.resource) return undefined;
    const kind = f.type.split(":").pop() ?? "";
    return { kind: kind || "Resource", name: f.resource };
}

/** An object's identity as findings name it: kind, namespace (none for cluster-scoped) and name. */
export function objectKey(o: { kind: string; name: string; namespace?: string }): string {
    return JSON.stringify([o.kind, o.namespace ?? "", o.name]);
}

/**
 * The Kubernetes object a finding is about, when it is one that was read as an object (`check`'s manifests,
 * `audit`'s cluster): its apiVersion (from the resource's type), kind, namespace and name. A gate's finding is
 * about a Pulumi resource (its name is the program's, not the object's): none.
 */
export function kubernetesObject(f: Pick<Row, "resource" | "type" | "urn">): ReportObject | undefined {
    if (!f.urn.startsWith(MANIFEST_URN_PREFIX) && !f.urn.startsWith(CLUSTER_URN_PREFIX)) return undefined;
    const m = /^kubernetes:([^:]+)\/([^/:]+):([^:]+)$/.exec(f.type);
    const o = objectOf(f);
    if (!m || !o || o.kind !== m[3]) return undefined;
    return { apiVersion: m[1] === "core" ? m[2] : `${m[1]}/${m[2]}`, ...o };
}
