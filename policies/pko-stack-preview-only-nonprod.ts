/**
 * pko-stack-preview-only-nonprod (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { classify, stackRule } from "./model/policy";
import { compilePattern, invalidSettingsMessage, patternProblem } from "./model/production";
import { describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";

export const NAME = "pko-stack-preview-only-nonprod";

export const DEFAULT_PREVIEW_PATTERNS = ["(^|/)(preview|pr-[0-9]+)$"];

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "Stacks that configuration expects to be preview-only (pull-request previews, by default a\n`spec.stack` ending in `preview` or `pr-<n>`) set `spec.preview: true`, so they never deploy; and a\nproduction Stack that is not expected to be preview-only does not set `spec.preview: true` (it would\nsilently never deploy).",
            why: "the Argo CD + PKO guide previews pull requests with a dedicated Stack with `preview: true` on the\nPR branch and a dedicated Pulumi stack; without the flag, that Stack runs `pulumi up` from an\nunreviewed branch.",
            fix: "set `spec.preview: true` on preview Stacks; remove it from production Stacks.",
            notes: [
                "A `preview: true` Stack is otherwise fine anywhere.",
                "Fails closed when the preview flag or the deciding values are unknown during preview.",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: ["previewOnlyStackPatterns"],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
        config: {
            previewOnlyStackPatterns: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "RE2 regular expressions matched against spec.stack; a match means the Stack must be preview-only.",
                default: DEFAULT_PREVIEW_PATTERNS,
            },
        },
    },
    (view, config, ctx) => {
        const who = describeStack(view);
        const patterns = Array.isArray(config.previewOnlyStackPatterns)
            ? config.previewOnlyStackPatterns.filter((p): p is string => typeof p === "string")
            : DEFAULT_PREVIEW_PATTERNS;
        const bad = patternProblem("previewOnlyStackPatterns", patterns);
        if (bad !== undefined) return [`${who}: ${bad}; fix the policy configuration.`];
        const stack = view.stack;
        if (stack === UNKNOWN) {
            return view.preview === true
                ? []
                : [
                      `${who}: spec.stack is unknown during preview, so it may be a preview-only Stack that deploys; the rule fails closed: make spec.stack known or set spec.preview: true.`,
                  ];
        }
        const expected = typeof stack === "string" && patterns.some((p) => compilePattern(p)!.test(stack));
        if (expected) {
            if (view.preview === true) return [];
            return view.preview === UNKNOWN
                ? [
                      `${who} is expected to be preview-only but spec.preview is unknown during preview; set spec.preview: true.`,
                  ]
                : [
                      `${who} is expected to be preview-only (spec.stack matches previewOnlyStackPatterns) but does not set spec.preview: true, so it would deploy; set spec.preview: true.`,
                  ];
        }
        if (view.preview !== true && view.preview !== UNKNOWN) return [];
        const prod = classify(view, ctx);
        if (prod.verdict === "invalid-config") return [invalidSettingsMessage(who, prod.reason)];
        if (prod.verdict === "production") {
            return [
                `${who} is ${prod.reason} but ${view.preview === UNKNOWN ? "spec.preview is unknown during preview" : "sets spec.preview: true"}, so it would never deploy; remove spec.preview.`,
            ];
        }
        return [];
    },
);
