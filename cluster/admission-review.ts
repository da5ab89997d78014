/**
 * The AdmissionReview (admission.k8s.io/v1) a webhook is sent, read into what a decision needs (parseReview: the
 * request's uid, operation, objects, dry run and requester; one clear BadInputError when it is not one), and the
 * denial message as it goes back (escapeLines).
 */
import { escapeText } from "../support/escape";
import { BadInputError } from "../support/errors";
import { AdmissionInput } from "./admission";
import { ReviewInput } from "./ordered-review";

/** A message of several lines (a denial): each line escaped (support/escape.ts), the line breaks kept. */
export function escapeLines(s: string): string {
    return s
        .split("\n")
        .map((l) => escapeText(l))
        .join("\n");
}

export interface Review {
    uid: string;
    input: ReviewInput;
    /** The requesting user (userInfo.username): per-user limits (cluster/limits.ts). */
    user: string;
    kind: string;
    namespace: string;
    name: string;
}

export function parseReview(text: string): Review {
    let body: unknown;
    try {
        body = JSON.parse(text);
    } catch {
        throw new BadInputError("the body is not JSON");
    }
    const b = body as { apiVersion?: unknown; kind?: unknown; request?: Record<string, unknown> };
    if (b?.apiVersion !== "admission.k8s.io/v1" || b.kind !== "AdmissionReview")
        throw new BadInputError("expected an AdmissionReview of admission.k8s.io/v1");
    const r = b.request;
    if (!r || typeof r.uid !== "string" || r.uid.length > 256)
        throw new BadInputError("the AdmissionReview has no request.uid (of at most 256 characters)");
    const object = (r.object ?? null) as AdmissionInput["object"];
    const kind = (r.kind as { kind?: string } | undefined)?.kind ?? String(object?.kind ?? "");
    return {
        uid: r.uid,
        input: {
            operation: String(r.operation ?? ""),
            object,
            oldObject: (r.oldObject ?? null) as AdmissionInput["oldObject"],
            dryRun: r.dryRun === true,
            userInfo: r.userInfo,
        },
        user: String((r.userInfo as { username?: unknown } | undefined)?.username ?? "").slice(0, 512),
        kind,
        namespace: typeof r.namespace === "string" ? r.namespace : "",
        name: typeof r.name === "string" ? r.name : String((object?.metadata ?? {}).name ?? ""),
    };
}
