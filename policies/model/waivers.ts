/**
 * Per-resource waivers. A waiver lives in the pack config (owned by the platform team), in a `waivers`
 * array of the policy it waives (docs/configuration.md, "Waivers"). A waived finding stays visible, advisory
 * (report.ts), with a prefix the gate reads as "waived"; an expired waiver does not waive. Fail-closed findings
 * need `allowFailClosed: true`, and annotation waivers count only when `allowAnnotationWaivers` is set, since
 * whoever writes the program could then waive the policy.
 */
import { WaiverMark } from "./message";
import { resourceProps } from "./stack";
import { get, isObject, str } from "./values";

export interface Waiver {
    resource: string;
    reason: string;
    expires?: string;
    allowFailClosed?: boolean;
}

export const WAIVE_ANNOTATION = "pko-guard.io/waive";

/** The JSON-schema properties every policy's config gets (the engine and Pulumi Cloud validate them). */
export const WAIVER_CONFIG: Record<string, object> = {
    waivers: {
        type: "array",
        description:
            "Per-resource exceptions: {resource (URN, Pulumi name or Kind/namespace/name; globs * ?), reason, expires (YYYY-MM-DD), allowFailClosed}.",
        default: [],
        items: {
            type: "object",
            required: ["resource", "reason"],
            additionalProperties: false,
            properties: {
                resource: { type: "string", minLength: 1 },
                reason: { type: "string", minLength: 1 },
                expires: { type: "string", pattern: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$" },
                allowFailClosed: { type: "boolean" },
            },
        },
    },
    allowAnnotationWaivers: {
        type: "boolean",
        description: `Honour ${WAIVE_ANNOTATION} annotations on Kubernetes objects (whoever writes the program can then waive this policy).`,
        default: false,
    },
};

/** The identities a waiver's `resource` can name. */
export interface WaiverTarget {
    urn?: string;
    name?: string;
    /** Kind/namespace/name (Kind//name for cluster-scoped objects). */
    object?: string;
    annotations?: Record<string, unknown>;
}

function glob(pattern: string): RegExp {
    const re = pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".");
    return new RegExp(`^${re}$`);
}

export function waiverMatches(w: Pick<Waiver, "resource">, t: WaiverTarget): boolean {
    const re = glob(w.resource);
    return [t.urn, t.name, t.object].some((id) => typeof id === "string" && id !== "" && re.test(id));
}

/** True for a real calendar date written YYYY-MM-DD (2026-02-28, not 2026-02-30 or 9999-99-99). */
export function isCalendarDate(s: string): boolean {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** A waiver entry; one whose expiry is not a calendar date waives nothing (fails closed; the config check rejects it). */
function isWaiver(w: unknown): w is Waiver {
    const o = w as Record<string, unknown>;
    return (
        o !== null &&
        typeof o === "object" &&
        typeof o.resource === "string" &&
        typeof o.reason === "string" &&
        (o.expires === undefined || (typeof o.expires === "string" && isCalendarDate(o.expires)))
    );
}

/** The waivers of a policy's config (malformed entries are ignored here; the config schema rejects them). */
export function configWaivers(config: Record<string, unknown>): Waiver[] {
    return Array.isArray(config.waivers) ? config.waivers.filter(isWaiver) : [];
}

/** Annotation waivers for `policy` on an object, when the config allows them. */
function annotationWaivers(policy: string, config: Record<string, unknown>, t: WaiverTarget): Waiver[] {
    if (config.allowAnnotationWaivers !== true) return [];
    const value = t.annotations?.[WAIVE_ANNOTATION];
    if (typeof value !== "string") return [];
    return value
        .split(",")
        .map((s) => s.trim())
        .flatMap((entry) => {
            const i = entry.indexOf("=");
            const name = i < 0 ? entry : entry.slice(0, i).trim();
            const reason = i < 0 ? "" : entry.slice(i + 1).trim();
            return name === policy && reason ? [{ resource: "*", reason: `${reason} (annotation)` }] : [];
        });
}

/** The date as YYYY-MM-DD (UTC). */
export function today(now = new Date()): string {
    return now.toISOString().slice(0, 10);
}

/**
 * Whether a policy's config can waive anything at all: it lists waivers, or allows annotation waivers. When it
 * cannot, `applyWaivers` leaves every finding as it is, so the wrappers skip it (and the finding's resource).
 */
export function mayWaive(config: Record<string, unknown>): boolean {
    return (Array.isArray(config.waivers) && config.waivers.length > 0) || config.allowAnnotationWaivers === true;
}

/**
 * Applies a policy's waivers to one finding: the waiver that waives it (a live one that matches; for a
 * fail-closed finding only one with allowFailClosed), or the text with a note that the matching waiver
 * expired, or the text unchanged. How a waived finding is written into a message is message.ts's business.
 */
export function applyWaivers(
    policy: string,
    config: Record<string, unknown>,
    t: WaiverTarget,
    text: string,
    failClosed: boolean,
    now = new Date(),
): { text: string; waiver?: WaiverMark } {
    const candidates = [...configWaivers(config), ...annotationWaivers(policy, config, t)].filter((w) =>
        waiverMatches(w, t),
    );
    const eligible = candidates.filter((w) => !failClosed || w.allowFailClosed === true);
    const live = eligible.find((w) => !w.expires || w.expires >= today(now));
    if (live) return { text, waiver: { reason: live.reason, ...(live.expires ? { expires: live.expires } : {}) } };
    const expired = eligible.find((w) => w.expires && w.expires < today(now));
    if (expired)
        return { text: `${text} (waiver for ${expired.resource} expired ${expired.expires}: ${expired.reason})` };
    return { text };
}

/** The identities of a resource as the wrappers see it (type, name, URN and Kubernetes object fields). */
export function targetOf(
    r: { type?: string; name?: string; urn?: string; props?: unknown } | undefined,
    urn?: string,
): WaiverTarget {
    // Read as plain data, never through the policy SDK's proxy: a field unknown during preview (metadata of a
    // resource whose name is computed) is UNKNOWN here, where the proxy would throw and lose the waiver check.
    const props =
        r === undefined
            ? undefined
            : resourceProps({ type: r.type ?? "", name: r.name ?? "", urn: r.urn, props: r.props });
    const kind = str(get(props, "kind"));
    const objName = str(get(props, "metadata", "name"));
    const ns = str(get(props, "metadata", "namespace"));
    const annotations = get(props, "metadata", "annotations");
    const u = urn ?? r?.urn;
    return {
        urn: u,
        name: r?.name ?? (u ? u.split("::").slice(3).join("::") : undefined),
        object:
            typeof kind === "string" && typeof objName === "string" && objName !== "" && kind !== ""
                ? `${kind}/${typeof ns === "string" ? ns : ""}/${objName}`
                : undefined,
        annotations: isObject(annotations) ? annotations : undefined,
    };
}
