/**
 * pko-stack-esc-or-oidc-preferred (advisory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { RuleFinding, stackRule } from "./model/policy";
import { describeStack, resourceRef } from "./model/stack";
import { UNKNOWN, entries, get, list } from "./model/values";

export const NAME = "pko-stack-esc-or-oidc-preferred";

const CLOUD_KEYS =
    /^(AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY|ARM_CLIENT_SECRET|AZURE_CLIENT_SECRET|GOOGLE_CREDENTIALS|GOOGLE_APPLICATION_CREDENTIALS)$/;

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "Stacks that authenticate with a long-lived static Pulumi access token from a Secret, or that take\nstatic cloud keys from Secrets without any Pulumi ESC environment, are told what they use and what to\nprefer. Stacks with no static token (OIDC token exchange) and with ESC environments pass.",
            why: "the Argo CD + PKO guide recommends OIDC token exchange (no stored secret) over a static token, and\nPulumi ESC for short-lived, dynamically brokered cloud credentials.",
            fix: "register the cluster as a Pulumi Cloud OIDC issuer and drop the token Secret; attach ESC\nenvironments (`spec.environment`) for cloud credentials.",
            reads: ["pulumi.com/Stack"],
            readsProduction: false,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "advisory",
        severity: "low",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
    },
    (view) => {
        if (view.spec === UNKNOWN) return [];
        const who = describeStack(view);
        const out: RuleFinding[] = [];
        const envRefs = get(view.spec, "envRefs");
        const token = resourceRef("spec.envRefs.PULUMI_ACCESS_TOKEN", get(envRefs, "PULUMI_ACCESS_TOKEN"));
        const legacy = get(view.spec, "accessTokenSecret");
        if (token.kind === "Secret") {
            out.push({
                message: `${who} uses a long-lived static Pulumi access token (spec.envRefs.PULUMI_ACCESS_TOKEN from a Secret); prefer OIDC token exchange, which stores no token in the cluster.`,
                field: token.field,
            });
        } else if (typeof legacy === "string" && legacy.length > 0) {
            out.push({
                message: `${who} uses a long-lived static Pulumi access token (spec.accessTokenSecret); prefer OIDC token exchange, which stores no token in the cluster.`,
                field: "spec.accessTokenSecret",
            });
        }
        const environments = list(view.environment);
        if (view.environment !== UNKNOWN && environments.length === 0) {
            const keys = entries(envRefs)
                .filter(([name]) => CLOUD_KEYS.test(name))
                .map(([name]) => name);
            if (keys.length > 0) {
                // The first key the finding names: the field to change (spec.environment, the advice, is absent).
                out.push({
                    message: `${who} takes static cloud credentials (${keys.join(", ")}) from the cluster and attaches no ESC environment; prefer short-lived credentials from a Pulumi ESC environment (spec.environment).`,
                    field: `spec.envRefs.${keys[0]}`,
                });
            }
        }
        return out;
    },
);
