/**
 * pko-guard-production (mandatory; settings)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { RuleMeta, settingsRule } from "./model/policy";
import {
    ProductionSink,
    SETTINGS_POLICY,
    SettingsState,
    productionSchemaProperties,
    readSettings,
} from "./model/production";
import { describeStack, stackPatchView, stackView } from "./model/stack";

export const NAME = SETTINGS_POLICY;

const meta: RuleMeta = {
    name: NAME,
    about: {
        what: "holds the pack's one production classification (`productionStackPatterns`, `productionNamespaces`,\n`productionLabels`), which every production-aware rule reads, so a Stack is production for all of them or\nfor none. It reports only invalid settings, on every Stack and Stack patch.",
        why: "CrossGuard gives each policy only its own configuration. Settings repeated in five policies drift\napart (a namespace marked production for one rule but not for another); one policy holding them,\nwhich the pack places first and the others read, works the same under `--policy-pack-config`, Pulumi\nCloud policy groups and the harness.",
        fix: "correct the settings: `productionStackPatterns` are RE2 regular expressions (no lookaround or\nbackreferences), `productionNamespaces` a list of namespaces, `productionLabels` a map of label name to\nvalues. Do not disable this policy while production-aware rules are enabled: they\nthen cannot classify and report every Stack they judge (the CLI and harness reject such a config).",
        notes: [
            "Invalid settings are a pattern that is not valid RE2 syntax, a value of the wrong type or an unknown\nproperty.",
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
    (resource, state) => {
        if (!("problem" in state)) return [];
        const view = stackView(resource) ?? stackPatchView(resource);
        return view
            ? [
                  `${describeStack(view)}: the production settings are invalid: ${state.problem}; fix the ${NAME} configuration.`,
              ]
            : [];
    },
);
