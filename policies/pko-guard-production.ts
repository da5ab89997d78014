/**
 * pko-guard-production (mandatory; settings)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { RuleFinding, RuleMeta, SettingsSight, classify, settingsRule } from "./model/policy";
import {
    ProductionSettings,
    ProductionSink,
    SETTINGS_POLICY,
    SettingsState,
    productionSchemaProperties,
    readSettings,
} from "./model/production";
import { Requester } from "./model/review";
import { StackView, describeStack, stackPatchView } from "./model/stack";

export const NAME = SETTINGS_POLICY;

const meta: RuleMeta = {
    name: NAME,
    about: {
        what: "holds the pack's one production classification (`productionStackPatterns`, `productionNamespaces`,\n`productionLabels`), which every production-aware rule reads. Production is sticky: at the cluster door a\nStack whose earlier version was production, or whose stack another production Stack deploys, is production.\nIt reports invalid settings and reclassifications (a Stack only that keeps production).",
        why: "CrossGuard gives each policy only its own configuration. Settings repeated in five policies drift\napart (a namespace marked production for one rule but not for another); one policy holding them,\nwhich the pack places first and the others read, works the same under `--policy-pack-config`, Pulumi\nCloud policy groups and the harness.",
        fix: "correct the settings: `productionStackPatterns` are RE2 regular expressions (no lookaround or\nbackreferences), `productionNamespaces` a list of namespaces, `productionLabels` a map of label name to\nvalues. Keep every Stack of a production stack marked production; a reclassification needs a user of\n`reclassificationUsers`, a member of `reclassificationGroups` or a waiver of this policy.",
        notes: [
            "Invalid settings are a pattern that is not valid RE2 syntax, a value of the wrong type or an unknown\nproperty. Do not disable this policy while production-aware rules are enabled: they then cannot classify\nand report every Stack they judge (the CLI and harness reject such a config).",
            "A Stack is production by its own fields when its `spec.stack` matches `productionStackPatterns`, its\nnamespace is one of `productionNamespaces`, or a label has a value `productionLabels` lists for it (in\nany case: `Production` is `production`).",
            "Production is sticky and belongs to the Pulumi stack. Where the judgement knows more than the Stack\n(the cluster door: `pko-guard webhook`), a Stack is also production when its earlier version was\nproduction by its own fields (an UPDATE that removes the label, changes it to another value, changes\n`spec.stack` or moves nothing else is judged as production), and when another Stack object that is\nproduction by its own fields names the same Pulumi stack (`spec.stack`, compared without case, a short\nname such as `app/prod` matching `acme/app/prod`). Every production-aware rule then judges it as\nproduction, and a DELETE of such a Stack with `destroyOnFinalize` is denied.",
            "A Stack production only by that stickiness is a reclassification: removing the production label or\nchanging `spec.stack` away from a production name, or a second Stack object of a production stack without\nthe marking. This policy reports it (mandatory) unless the request's user is in\n`reclassificationUsers` or one of its groups in `reclassificationGroups`, or a waiver of this policy names\nthe Stack (`Stack/<namespace>/<name>`). The reclassifying change itself is still judged as production;\nthe next one is not.",
        ],
        reads: ["pulumi.com/Stack"],
        readsProduction: false,
        patternSettings: ["productionStackPatterns"],
        example: [stack],
    },
    enforcementLevel: "mandatory",
    severity: "high",
    url: "https://www.pulumi.com/docs/iac/using-pulumi/crossguard/configuration/",
    config: { ...productionSchemaProperties },
};

/**
 * The configuration's identity (what publishing compares to tell a reconfiguration) and its settings, read anew
 * each time: reading them costs about what computing the identity does (docs/contributing/benchmarks.md).
 */
function stateOf(config: Record<string, unknown> | string): { configuration: string; state: SettingsState } {
    if (typeof config === "string") return { configuration: `problem:${config}`, state: { problem: config } };
    return { configuration: JSON.stringify(config), state: readSettings(config) };
}

/** Built by the pack with its settings sink, and placed first (policies/index.ts `buildPolicies`). */
export const rule = settingsRule(
    meta,
    (sink: ProductionSink, request, config) => {
        const { configuration, state } = stateOf(config);
        sink.publish(request, configuration, state);
        return state;
    },
    (resource, state, seen) => {
        const stackOf = seen.views.view(resource, "Stack");
        if ("problem" in state) {
            const view = stackOf ?? stackPatchView(resource);
            return view
                ? [
                      `${describeStack(view)}: the production settings are invalid: ${state.problem}; fix the ${NAME} configuration.`,
                  ]
                : [];
        }
        return stackOf ? reclassified(stackOf, state.settings, seen) : [];
    },
);

/** Whether the requester may take a Stack out of production (reclassificationUsers, reclassificationGroups). */
function approved(requester: Requester | undefined, settings: ProductionSettings): boolean {
    if (!requester) return false;
    return (
        settings.reclassificationUsers.includes(requester.username) ||
        requester.groups.some((g) => settings.reclassificationGroups.includes(g))
    );
}

/** A Stack that only its context keeps production (production.ts `classifyInContext`): a reclassification. */
function reclassified(view: StackView, settings: ProductionSettings, seen: SettingsSight): RuleFinding[] {
    const p = classify(view, { ...seen, production: { settings } });
    if (p.verdict !== "production" || !p.inherited || approved(seen.review.requester, settings)) return [];
    const who = describeStack(view);
    const how =
        p.inherited === "earlier"
            ? "but its own fields no longer say so: the change takes a production Stack out of production"
            : "but its own fields do not say so: a Stack object of a production stack must be marked production too";
    const message = `${who} is ${p.reason}, ${how}; reclassifying production needs an approved requester (${NAME} reclassificationUsers or reclassificationGroups) or a waiver of ${NAME}, else keep the production label, namespace or stack name.`;
    return [p.inherited === "stack" ? { message, field: "spec.stack" } : { message }];
}
