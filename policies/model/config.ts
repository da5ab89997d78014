/**
 * Checks on a policy's configuration that the engine does not make: the engine validates a policy's
 * config only against the `properties` (and `required`) of its schema, so a misspelt property name
 * would be accepted and ignored. Both the pack and the CLI/harness reject it here, naming the closest name.
 */
import { looksLikeCredential } from "./credentials";

/** Edit distance between two short names (case-insensitive). */
function distance(a: string, b: string): number {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
    for (let i = 1; i <= x.length; i++) {
        const cur = [i];
        for (let j = 1; j <= y.length; j++) {
            cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
        }
        prev = cur;
    }
    return prev[y.length];
}

/** The valid name closest to `name`, when one is close enough to be a likely typo. */
export function closestName(name: string, valid: string[]): string | undefined {
    let best: string | undefined;
    let bestDistance = Infinity;
    for (const v of valid) {
        const d = distance(name.slice(0, 100), v);
        if (d < bestDistance) {
            best = v;
            bestDistance = d;
        }
    }
    return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** Properties that moved to another policy: where they are configured now. */
const MOVED: Record<string, string> = {
    productionStackPatterns: "pko-guard-production",
    productionNamespaces: "pko-guard-production",
    productionLabels: "pko-guard-production",
};

/**
 * The first property of `given` that `valid` does not name, as a message part, or undefined.
 * `enforcementLevel` is always valid. Names are shown bounded and quoted (config keys, never values).
 */
export function unknownProperty(policy: string, given: Record<string, unknown>, valid: string[]): string | undefined {
    for (const name of Object.keys(given)) {
        if (name === "enforcementLevel" || valid.includes(name)) continue;
        if (looksLikeCredential(name)) return "unknown property (a name that looks like a credential, not shown)";
        const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}...` : name);
        if (MOVED[name] !== undefined && MOVED[name] !== policy) {
            return `unknown property ${shown}: ${name} is set once for the whole pack, under ${MOVED[name]}`;
        }
        const near = closestName(name, valid);
        const options =
            valid.length === 0
                ? "it takes no properties besides enforcementLevel"
                : near
                  ? `did you mean ${near}?`
                  : `valid: ${valid.join(", ")}`;
        return `unknown property ${shown} (${options})`;
    }
    return undefined;
}
