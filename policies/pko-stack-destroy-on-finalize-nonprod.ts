/**
 * pko-stack-destroy-on-finalize-nonprod (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { classify, stackRule } from "./model/policy";
import { productionFindings } from "./model/production";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-destroy-on-finalize-nonprod";

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "`spec.destroyOnFinalize: true` is allowed only on non-production Stacks.",
            why: "with destroyOnFinalize, deleting the Stack object runs `pulumi destroy`. With Argo CD's\nautomated prune and the background resources finalizer (Argo CD + PKO guide), removing a manifest\nfrom Git, or deleting the Application, tears the infrastructure down. Fine for dev; not for prod.",
            fix: "remove `destroyOnFinalize` (or set it to false) on production Stacks.",
            notes: ["Fails closed: when the flag or the values that decide production are unknown during preview."],
            reads: ["pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: [],
            example: [stack],
            deletion:
                "deleting a Stack whose destroyOnFinalize is set runs `pulumi destroy`: the cluster door judges a DELETE of\na Stack with this rule too, and denies it when the Stack is production (by its own fields, or because\nanother production Stack deploys its Pulumi stack).",
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (view, _config, ctx) => {
        const destroy = view.destroyOnFinalize;
        if (destroy === false || destroy === undefined) {
            return [];
        }
        const who = describeStack(view);
        return productionFindings(
            who,
            classify(view, ctx),
            {
                production: (reason) =>
                    destroy === UNKNOWN
                        ? `${who} is ${reason} and spec.destroyOnFinalize is unknown during preview; set it to false explicitly so deleting the Stack never destroys production.`
                        : `${who} is ${reason} and sets spec.destroyOnFinalize: true, so deleting or pruning the Stack object destroys its infrastructure; remove destroyOnFinalize.`,
                unknown: (reason) =>
                    `${who} ${destroy === UNKNOWN ? "may set" : "sets"} spec.destroyOnFinalize and ${reason}; the rule fails closed: make the deciding values known at preview time or remove destroyOnFinalize.`,
            },
            "spec.destroyOnFinalize",
        );
    },
);
