/** RBAC objects and subjects described for messages (names quoted, unknown and missing values said so). */
import { UNKNOWN, Unknown } from "../values";
import { AdminGrant, Binding, RoleGrant, Subject, missing } from "./objects";

export const quoteName = (v: string | Unknown | undefined) =>
    v === UNKNOWN ? "<unknown during preview>" : v === undefined || v === "" ? "<missing>" : JSON.stringify(v);

/** A readable description of a role for messages, e.g. `ClusterRole "x" (aggregates ClusterRole "y": * verbs on * resources)`. */
export function describeRole(name: string, kind: string | Unknown | undefined, g?: RoleGrant): string {
    const k = typeof kind === "string" && kind !== "" ? kind : "role";
    if (k === "ClusterRole" && name === "cluster-admin") return "cluster-admin";
    const source = g?.source;
    let how = "";
    if (source && g?.wildcard === "yes") {
        const patched = source.patches
            ? ` as patched by ${source.patches.map((p) => JSON.stringify(p)).join(", ")}`
            : "";
        how =
            source.name === name && source.kind === k && !source.builtIn
                ? ` (wildcard: * verbs on * resources${patched})`
                : ` (wildcard by aggregation: it aggregates ${source.kind} ${quoteName(source.name)}${patched}, which has * verbs on * resources)`;
    }
    return `${k} ${JSON.stringify(name)}${how}`;
}

/** A readable name of the binding's role. */
export function describeBindingRole(binding: Binding, g: AdminGrant): string {
    if (binding.patch?.roleOutsideProgram) return "the role it binds in the cluster (not in this program)";
    if (typeof binding.roleName !== "string" || binding.roleName === "")
        return `${typeof binding.roleKind === "string" && binding.roleKind ? binding.roleKind : "role"} ${quoteName(binding.roleName)}`;
    if (g.escalation && g.admin === "yes") {
        const src = g.grant?.escalationSource;
        const through =
            src && !(src.name === binding.roleName && src.kind === binding.roleKind)
                ? ` through ${src.kind} ${quoteName(src.name)}, which it aggregates`
                : "";
        const kind = typeof binding.roleKind === "string" && binding.roleKind ? binding.roleKind : "role";
        return `${kind} ${JSON.stringify(binding.roleName)} (equivalent to cluster-admin: ${g.escalation}${through})`;
    }
    return describeRole(binding.roleName, binding.roleKind, g.grant);
}

/** A binding's kind and resource name for messages; a patch names what it patches. */
export function describeBinding(binding: Binding): string {
    if (!binding.patch) return `${binding.kind} ${JSON.stringify(binding.resourceName)}`;
    const target = binding.patch.base
        ? `${binding.kind} ${JSON.stringify(binding.patch.base.resourceName)} of this program`
        : `${binding.kind} ${quoteName(binding.patch.target)}, which this program does not declare`;
    return `${binding.kind}Patch ${JSON.stringify(binding.resourceName)} (patching ${target})`;
}

/** A readable name of a subject for messages. */
export function describeSubject(s: Subject): string {
    const part = (v: string | Unknown | undefined) => (v === UNKNOWN ? "<unknown>" : (v ?? ""));
    const name = s.name === UNKNOWN ? "<unknown>" : missing(s.name) ? "<missing name>" : s.name;
    return s.kind === "ServiceAccount"
        ? `ServiceAccount ${part(s.namespace) ? part(s.namespace) + "/" : ""}${name}`
        : `${missing(s.kind) ? "<missing kind>" : part(s.kind)} ${name}`;
}
