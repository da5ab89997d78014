/** ClusterRole aggregation: whether a label selector of an aggregating role matches a role (three-valued). */
import { Plain, UNKNOWN, Unknown, entries, get, isObject, list } from "../values";
import { Role, Tri, and } from "./objects";

export function eq(a: string | Unknown | undefined, b: string | Unknown | undefined): Tri {
    if (a === UNKNOWN || b === UNKNOWN) return "maybe";
    return a === b ? "yes" : "no";
}

/** Whether a role's labels satisfy one label-selector requirement (`key <op> values`). */
export function requirement(role: Role, key: Plain, op: Plain, values: Plain): Tri {
    if (key === UNKNOWN || op === UNKNOWN || role.labels === UNKNOWN) return "maybe";
    if (typeof key !== "string" || typeof op !== "string") return "maybe"; // invalid: the controller cannot use it
    const present = Object.prototype.hasOwnProperty.call(role.labels, key);
    const value = present ? role.labels[key] : undefined;
    if (present && typeof value !== "string") return "maybe";
    const absent: Tri = present ? "no" : role.labelsOpen ? "maybe" : "yes";
    const valueIn = (): Tri => {
        if (absent === "yes") return "no";
        if (absent === "maybe") return "maybe";
        if (values === UNKNOWN) return "maybe";
        const items = list(values);
        if (items.includes(value)) return "yes";
        return items.includes(UNKNOWN) ? "maybe" : "no";
    };
    switch (op) {
        case "In":
            return valueIn();
        case "NotIn": {
            const v = valueIn();
            return v === "yes" ? "no" : v === "no" ? "yes" : "maybe";
        }
        case "Exists":
            return absent === "yes" ? "no" : absent === "no" ? "yes" : "maybe";
        case "DoesNotExist":
            return absent;
        default:
            return "maybe";
    }
}

/** Whether a Kubernetes label selector (matchLabels AND matchExpressions) selects the role. An empty selector selects every role. */
export function selectorMatches(selector: Plain, role: Role): Tri {
    if (selector === UNKNOWN) return "maybe";
    if (selector === null || selector === undefined) return "yes";
    if (!isObject(selector)) return "maybe";
    const results: Tri[] = [];
    const matchLabels = get(selector, "matchLabels");
    if (matchLabels === UNKNOWN) results.push("maybe");
    else for (const [k, v] of entries(matchLabels)) results.push(requirement(role, k, "In", [v]));
    const expressions = get(selector, "matchExpressions");
    if (expressions === UNKNOWN) results.push("maybe");
    else {
        for (const e of list(expressions)) {
            results.push(
                e === UNKNOWN ? "maybe" : requirement(role, get(e, "key"), get(e, "operator"), get(e, "values")),
            );
        }
    }
    return results.reduce<Tri>((acc, t) => and(acc, t), "yes");
}
