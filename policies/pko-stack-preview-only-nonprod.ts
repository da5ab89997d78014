/**
 * pko-stack-preview-only-nonprod (mandatory, stack-level)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 * Stack-level because whether a `preview: true` production Stack is a preview twin can only be told with the
 * other Stacks in view.
 */
import { stack } from "./model/examples";
import { RuleContext, RuleFinding, classify, programRule } from "./model/policy";
import { compilePattern, invalidSettingsMessage, patternProblem } from "./model/production";
import { ResourceLike, StackView, describeStack } from "./model/stack";
import { UNKNOWN, configStrings } from "./model/values";

export const NAME = "pko-stack-preview-only-nonprod";

export const DEFAULT_PREVIEW_PATTERNS = ["(^|/)(preview|pr-[0-9]+)$"];

/** What a Stack is judged with besides itself: the patterns, and the stacks other Stacks deploy. */
interface Judging {
    patterns: string[];
    twinNames: string[];
    /** The Pulumi stack (`deployedKey`) of every Stack that deploys (preview neither true nor unknown), as patches leave them. */
    deployed: Set<string>;
    ctx: RuleContext;
}

/**
 * The Pulumi stack a Stack runs on: `spec.stack` in its state backend (`spec.backend`, else the default one), so
 * that one name in two backends is two stacks. Undefined when either is unknown: such a Stack is never taken
 * for the twin or the deployer of another.
 */
function deployedKey(view: StackView): string | undefined {
    if (typeof view.stack !== "string" || view.backend === UNKNOWN) return undefined;
    return JSON.stringify([typeof view.backend === "string" ? view.backend : "", view.stack]);
}

/**
 * When `check` judges several scopes (clusters) and a Stack of another one deploys the same Pulumi stack: a clause
 * saying so (that Stack is not judged with this one, since it runs in another cluster), else "". At most two named.
 */
function deployedElsewhere(key: string | undefined, ctx: RuleContext): string {
    if (key === undefined) return "";
    const names = (ctx.scope?.others ?? [])
        .filter(({ resources }) =>
            ctx.views
                .patchedStacks(resources as ResourceLike[])
                .some(({ view }) => view.preview !== true && view.preview !== UNKNOWN && deployedKey(view) === key),
        )
        .map((o) => o.name);
    if (names.length === 0) return "";
    const where =
        names.length > 2
            ? `${names.slice(0, 2).join(", ")} and ${names.length - 2} more scope(s)`
            : names.join(" and ");
    return ` (a Stack ${where} deploys it, but it is not judged with this one)`;
}

function judge(view: StackView, j: Judging): RuleFinding[] {
    const who = describeStack(view);
    const stack = view.stack;
    if (stack === UNKNOWN) {
        return view.preview === true
            ? []
            : [
                  {
                      message: `${who}: spec.stack is unknown during preview, so it may be a preview-only Stack that deploys; the rule fails closed: make spec.stack known or set spec.preview: true.`,
                      field: "spec.stack",
                  },
              ];
    }
    const expected = typeof stack === "string" && j.patterns.some((p) => compilePattern(p)!.test(stack));
    if (expected) {
        if (view.preview === true) return [];
        return view.preview === UNKNOWN
            ? [
                  {
                      message: `${who} is expected to be preview-only but spec.preview is unknown during preview; set spec.preview: true.`,
                      field: "spec.preview",
                  },
              ]
            : [
                  {
                      message: `${who} is expected to be preview-only (spec.stack matches previewOnlyStackPatterns) but does not set spec.preview: true, so it would deploy; set spec.preview: true.`,
                      field: "spec.preview",
                  },
              ];
    }
    if (view.preview !== true && view.preview !== UNKNOWN) return [];
    // A preview twin: another Stack deploys this stack, so this one only previews it (never a second deployer).
    const key = deployedKey(view);
    if (view.preview === true && key !== undefined && j.deployed.has(key)) return [];
    const name = view.name;
    if (typeof name === "string" && j.twinNames.some((p) => compilePattern(p)!.test(name))) return [];
    const prod = classify(view, j.ctx);
    if (prod.verdict === "invalid-config") return [{ message: invalidSettingsMessage(who, prod.reason) }];
    if (prod.verdict !== "production") return [];
    if (view.preview === UNKNOWN)
        return [
            {
                message: `${who} is ${prod.reason} but spec.preview is unknown during preview, so it may never deploy; make spec.preview known.`,
                field: "spec.preview",
            },
        ];
    const scope = j.ctx.scope?.name;
    return [
        {
            message: `${who} is ${prod.reason} but sets spec.preview: true, so it never deploys, and no Stack judged with it${scope === undefined ? "" : ` ${scope}`} deploys this stack${deployedElsewhere(key, j.ctx)}. If it previews a Stack deployed elsewhere (a preview twin), keep spec.preview: true and list its name in previewTwinNames; if it is meant to deploy, first make sure no other Stack deploys this stack, then set spec.preview: false.`,
            field: "spec.preview",
        },
    ];
}

/** Findings of the patched Stack that the unpatched one does not have (as a multiset of messages). */
function introduced(before: RuleFinding[], after: RuleFinding[]): RuleFinding[] {
    const seen = new Map<string, number>();
    for (const { message: m } of before) seen.set(m, (seen.get(m) ?? 0) + 1);
    return after.filter(({ message: m }) => {
        const n = seen.get(m) ?? 0;
        if (n > 0) seen.set(m, n - 1);
        return n === 0;
    });
}

export const rule = programRule(
    {
        name: NAME,
        about: {
            what: "Stacks that configuration expects to be preview-only (pull-request previews, by default a\n`spec.stack` ending in `preview` or `pr-<n>`) set `spec.preview: true`, so they never deploy; and a\nproduction Stack that is not expected to be preview-only does not set `spec.preview: true` (it would\nsilently never deploy).",
            why: "the Argo CD + PKO guide previews pull requests with a dedicated Stack with `preview: true` on the\nPR branch and a dedicated Pulumi stack; without the flag, that Stack runs `pulumi up` from an\nunreviewed branch.",
            fix: "set `spec.preview: true` on preview Stacks; a production Stack with it is either a preview twin (keep\nthe flag; list its name in `previewTwinNames` when its deployer is elsewhere) or meant to deploy (set\n`spec.preview: false` once no other Stack deploys its stack).",
            notes: [
                "A `preview: true` Stack is otherwise fine anywhere. A production one is a preview twin, and passes, when\nanother Stack judged with it deploys the same Pulumi stack (the same `spec.stack` in the same `spec.backend`),\nas PKO's `examples/preview-demo` and Kargo's previews do; or when its `metadata.name` matches\n`previewTwinNames`. Judged with it are: the gate's whole program (every namespace); in `check`, the objects\nthat land in the same destination cluster; at admission, the Stacks of its namespace; in `audit`, the\ncluster's. Without either, the finding never advises removing the flag blindly: that would make a second\ndeployer of production.",
                "What a platform team does: keep a twin beside its deployer (same repository and cluster, same\nnamespace for the door), or, when the deployer lives elsewhere (another cluster, another namespace, or a\nStack the admission webhook sees only after the twin), name the twins in `previewTwinNames` (e.g.\n`-preview$`), so that only Stacks named as previews may hold a production stack with the flag.",
                "Fails closed when the preview flag or the deciding values are unknown during preview.",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: ["previewOnlyStackPatterns", "previewTwinNames"],
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
            previewTwinNames: {
                type: "array",
                items: { type: "string", minLength: 1 },
                description:
                    "RE2 regular expressions matched against metadata.name; a production Stack with spec.preview: true whose name matches is a preview twin of a Stack deployed elsewhere.",
                default: [],
            },
        },
    },
    (resources, config, ctx) => {
        const patterns = configStrings(config.previewOnlyStackPatterns, DEFAULT_PREVIEW_PATTERNS);
        const twinNames = configStrings(config.previewTwinNames);
        const bad =
            patternProblem("previewOnlyStackPatterns", patterns) ?? patternProblem("previewTwinNames", twinNames);
        const deployed = new Set<string>();
        for (const { view } of ctx.views.patchedStacks(resources)) {
            const key = deployedKey(view);
            if (view.preview !== true && view.preview !== UNKNOWN && key !== undefined) deployed.add(key);
        }
        const j: Judging = { patterns, twinNames, deployed, ctx };
        const findings: RuleFinding[] = [];
        const on = (urn: string | undefined, found: RuleFinding[]) => {
            for (const f of found) findings.push(urn === undefined ? f : { ...f, urn });
        };
        for (const r of resources) {
            const view = ctx.views.view(r, "Stack");
            if (!view) continue;
            on(
                view.urn,
                bad !== undefined
                    ? [{ message: `${describeStack(view)}: ${bad}; fix the policy configuration.` }]
                    : judge(view, j),
            );
        }
        if (bad !== undefined) return findings;
        for (const p of ctx.views.stackPatches(resources))
            on(p.patch.urn, introduced(judge(p.before, j), judge(p.after, j)));
        return findings;
    },
);
