/**
 * pko-stack-prod-refresh (advisory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { classify, stackRule } from "./model/policy";
import { productionFindings } from "./model/production";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-prod-refresh";

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "production Stacks set `spec.refresh: true`.",
            why: 'with refresh, PKO reconciles Pulumi state with the real infrastructure before each update, so\ndrift is seen before it is overwritten (Argo CD + PKO guide: `refresh` "refreshes Pulumi state before\neach update"; its troubleshooting advises it for stuck updates).',
            fix: "set `spec.refresh: true` on production Stacks.",
            reads: ["pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "advisory",
        severity: "medium",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (view, _config, ctx) => {
        if (view.refresh === true) return [];
        const who = describeStack(view);
        // Advisory: a Stack that may be production is not reported (only gates fail closed).
        return productionFindings(
            who,
            classify(view, ctx),
            {
                production: (reason) =>
                    view.refresh === UNKNOWN
                        ? `${who} is ${reason} and spec.refresh is unknown during preview; set spec.refresh: true.`
                        : `${who} is ${reason} but does not set spec.refresh: true, so drift is not seen before updates; set spec.refresh: true.`,
            },
            "spec.refresh",
        );
    },
);
