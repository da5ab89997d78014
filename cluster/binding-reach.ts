/**
 * Which namespaces' service accounts a live binding can grant to: the namespaces whose Stacks (and the
 * objects around them) can change the verdict on the binding. It follows the rules' own reading of a subject
 * (policies/model/rbac/grants.ts subjectCovers); a subject whose kind or name cannot be read may be anything,
 * so it reaches every namespace.
 */
import { GROUPS_COVERING_ALL_ACCOUNTS } from "../policies/model/rbac/grants";
import { KObject } from "./kinds";

/** Every namespace (a subject that covers every account, or one that cannot be told). */
export const EVERY_NAMESPACE = "*any*";

function text(v: unknown): string | undefined {
    return typeof v === "string" && v !== "" ? v : undefined;
}

/** The namespace whose accounts one subject can name, EVERY_NAMESPACE, or undefined for none. */
function subjectReach(s: unknown, binding: KObject): string | undefined {
    if (s === null || typeof s !== "object" || Array.isArray(s)) return EVERY_NAMESPACE;
    const { kind, name, namespace } = s as Record<string, unknown>;
    const own = text((binding.metadata ?? {}).namespace);
    if (kind === "ServiceAccount") return text(namespace) ?? (binding.kind === "RoleBinding" ? own : undefined);
    if ((kind !== "Group" && kind !== "User") || text(name) === undefined) return EVERY_NAMESPACE;
    const n = name as string;
    if (kind === "Group") {
        if (GROUPS_COVERING_ALL_ACCOUNTS.has(n)) return EVERY_NAMESPACE;
        return n.startsWith("system:serviceaccounts:") ? text(n.slice("system:serviceaccounts:".length)) : undefined;
    }
    return n.startsWith("system:serviceaccount:")
        ? text(n.slice("system:serviceaccount:".length).split(":")[0])
        : undefined;
}

/** The namespaces whose accounts a binding's subjects can cover (EVERY_NAMESPACE among them for all). */
export function accountNamespaces(binding: KObject): string[] {
    const subjects = binding.subjects;
    if (subjects === undefined || subjects === null) return [];
    if (!Array.isArray(subjects)) return [EVERY_NAMESPACE];
    const out = new Set<string>();
    for (const s of subjects) {
        const n = subjectReach(s, binding);
        if (n !== undefined) out.add(n);
    }
    return [...out];
}
