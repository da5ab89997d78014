/**
 * pko-stack-resync-floor (advisory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { stackRule } from "./model/policy";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-resync-floor";

/** The field every finding of the rule is about. */
const FIELD = "spec.resyncFrequencySeconds";
export const PKO_MINIMUM = 60;

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "`spec.resyncFrequencySeconds`, when set, is at least the configured floor (default 60, PKO's own\nminimum).",
            why: "PKO polls branches and resyncs Stacks at this interval (Argo CD + PKO guide); a very low value\nhammers Git, the Pulumi Cloud API and the cluster, and PKO clamps values below 60 anyway.",
            fix: "raise `spec.resyncFrequencySeconds` to at least the floor, or remove it.",
            notes: [
                "Remediate: at the `remediate` level, a numeric `spec.resyncFrequencySeconds` below the floor is raised to the\nfloor (a slower resync only delays the next poll).",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "advisory",
        severity: "low",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
        config: {
            minResyncFrequencySeconds: {
                type: "integer",
                minimum: PKO_MINIMUM,
                description: "The lowest resyncFrequencySeconds allowed.",
                default: PKO_MINIMUM,
            },
        },
    },
    (view, config) => {
        const floor = floorOf(config);
        const v = view.resyncFrequencySeconds;
        const who = describeStack(view);
        if (v === undefined) {
            const raw =
                view.spec === UNKNOWN
                    ? undefined
                    : (view.spec as Record<string, unknown> | undefined)?.resyncFrequencySeconds;
            return raw === undefined || raw === null
                ? []
                : [
                      {
                          message: `${who}: spec.resyncFrequencySeconds is not a number; set it to at least ${floor}.`,
                          field: FIELD,
                      },
                  ];
        }
        if (v === UNKNOWN)
            return [
                {
                    message: `${who}: spec.resyncFrequencySeconds is unknown during preview; set it to at least ${floor}.`,
                    field: FIELD,
                },
            ];
        return v < floor
            ? [
                  {
                      message: `${who}: spec.resyncFrequencySeconds is ${v}, below the floor of ${floor} seconds; raise it to at least ${floor}.`,
                      field: FIELD,
                  },
              ]
            : [];
    },
    (view, config) => {
        const v = view.resyncFrequencySeconds;
        return typeof v === "number" && v < floorOf(config) ? { resyncFrequencySeconds: floorOf(config) } : undefined;
    },
);

function floorOf(config: Record<string, unknown>): number {
    return typeof config.minResyncFrequencySeconds === "number"
        ? Math.max(config.minResyncFrequencySeconds, PKO_MINIMUM)
        : PKO_MINIMUM;
}
