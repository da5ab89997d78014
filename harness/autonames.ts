/**
 * Names the Kubernetes provider generates (`<resource name>-<8 random hex>`, annotated
 * `pulumi.com/autonamed: "true"`) differ on every run, in both legs. For `--leg both` to compare rows
 * strictly, each leg masks, in its own rows' messages, exactly the names its own run generated: the
 * random part becomes `********`. Nothing else is touched, so a name that is missing, unknown or
 * different in one leg still shows as a mismatch.
 */
import { Row } from "../evaluation/rows";

export const AUTONAME_MASK = "********";

/** `runner-1a2b3c4d` → `runner-********`; other strings unchanged. */
export function maskedName(generated: string): string {
    return /-[0-9a-f]{8}$/.test(generated) ? `${generated.slice(0, -8)}${AUTONAME_MASK}` : generated;
}

/** Rows with every generated name in their messages masked. */
export function maskAutonames(rows: Row[], generated: Iterable<string>): Row[] {
    const names = [...new Set(generated)].filter((n) => /-[0-9a-f]{8}$/.test(n)).sort((a, b) => b.length - a.length);
    if (names.length === 0) return rows;
    return rows.map((r) => {
        let message = r.message;
        for (const n of names) message = message.split(n).join(maskedName(n));
        return message === r.message ? r : { ...r, message };
    });
}

interface PreEvent {
    resourcePreEvent?: { metadata?: { new?: { inputs?: Record<string, unknown> } } };
}

/** The names the provider generated in a real preview, from the engine's JSON event stream. */
export function autonamesFromEvents(output: string): string[] {
    const names: string[] = [];
    for (const line of output.split("\n")) {
        if (!line.includes("pulumi.com/autonamed")) continue;
        let e: PreEvent;
        try {
            e = JSON.parse(line) as PreEvent;
        } catch {
            continue;
        }
        const meta = e.resourcePreEvent?.metadata?.new?.inputs?.metadata as
            { name?: unknown; annotations?: Record<string, unknown> } | undefined;
        if (meta?.annotations?.["pulumi.com/autonamed"] === "true" && typeof meta.name === "string")
            names.push(meta.name);
    }
    return names;
}
