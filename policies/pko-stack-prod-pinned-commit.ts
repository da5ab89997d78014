/**
 * pko-stack-prod-pinned-commit (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { stack } from "./model/examples";
import { classify, stackRule } from "./model/policy";
import { productionFindings } from "./model/production";
import { StackView, describeStack } from "./model/stack";
import { UNKNOWN } from "./model/values";
import { FLOATING_SOURCE } from "./model/origin";

export const NAME = "pko-stack-prod-pinned-commit";

const FULL_SHA = /^[0-9a-fA-F]{40}$/;

/** The reasons a Stack is not pinned; empty when it is. */
export function pinProblems(view: StackView, allowUnpinnableSources: boolean): string[] {
    const problems: string[] = [];
    if (view.spec === UNKNOWN) {
        return ["its spec is unknown during preview"];
    }
    const unpinnable = [
        view.fluxSource !== undefined && view.fluxSource !== null ? "spec.fluxSource" : undefined,
        view.programRef !== undefined && view.programRef !== null ? "spec.programRef" : undefined,
    ].filter((x): x is string => x !== undefined);
    if (unpinnable.length > 0) {
        if (!allowUnpinnableSources) {
            problems.push(
                `it deploys from ${unpinnable.join(" and ")}, which cannot be pinned to a commit (allowUnpinnableSources is off)`,
            );
        }
        if (view.projectRepo === undefined) {
            return problems;
        }
    }
    if (view.branch === UNKNOWN) {
        problems.push("spec.branch is unknown during preview");
    } else if (typeof view.branch === "string" && view.branch.length > 0) {
        problems.push("it tracks a branch (spec.branch), a movable ref");
    }
    // An object read from a fetched source whose reference can move (check sets the annotation itself): what the
    // cluster receives can change without a commit in the repository checked, whatever the spec pins.
    const floating = view.annotations === UNKNOWN ? undefined : view.annotations[FLOATING_SOURCE];
    if (typeof floating === "string" && floating !== "")
        problems.push(
            `it is read from ${floating}, a reference that can move (pin the source to a commit or exact version)`,
        );
    if (view.commit === UNKNOWN) {
        problems.push("spec.commit is unknown during preview");
    } else if (view.commit === undefined || view.commit === "") {
        problems.push("it sets no spec.commit");
    } else if (!FULL_SHA.test(view.commit)) {
        problems.push("spec.commit is not a full 40-hex commit SHA (a short SHA or tag is a movable ref)");
    }
    return problems;
}

/** The field a pinning finding points at: the branch when one is set, else the source or the commit. */
function pinField(view: StackView): string {
    if (view.branch !== undefined && view.branch !== "") return "spec.branch";
    if (view.fluxSource !== undefined && view.fluxSource !== null) return "spec.fluxSource";
    if (view.programRef !== undefined && view.programRef !== null) return "spec.programRef";
    return view.commit === undefined ? "spec" : "spec.commit";
}

export const rule = stackRule(
    {
        name: NAME,
        about: {
            what: "a production Stack deploys a full 40-hex `spec.commit`, sets no `spec.branch`, and does not\nuse a program source that cannot be pinned (`fluxSource`, `programRef`) unless configured to allow it.",
            why: "PKO treats a branch as something to poll and roll out; anything shorter than a full SHA is\nresolved as a movable ref. The Argo CD + PKO guide shows promotion through a moving `release` branch\nand notes that only a pinned commit records exactly which revision is live.",
            fix: "set `spec.commit` to the full 40-character SHA you validated, remove `spec.branch`, and promote\nby changing the commit in Git.",
            notes: [
                "Fails closed: when the commit, the branch or the values that decide production are unknown.",
                "`pko-guard check` also holds a production Stack it read from a fetched source whose reference can\nmove (another repository's branch or tag, a chart version range) as not pinned: what the cluster receives\ncan change without a commit in the repository checked. It marks such objects with the\n`pko-guard/floating-source` annotation itself (a value written in the manifest is discarded).",
            ],
            reads: ["pulumi.com/Stack"],
            readsProduction: true,
            patternSettings: [],
            example: [stack],
        },
        enforcementLevel: "mandatory",
        severity: "high",
        url: "https://www.pulumi.com/docs/iac/guides/continuous-delivery/argocd/",
        config: {
            allowUnpinnableSources: {
                type: "boolean",
                description:
                    "Allow production Stacks that deploy from fluxSource or programRef (which cannot be pinned).",
                default: false,
            },
        },
    },
    (view, config, ctx) => {
        const problems = pinProblems(view, config.allowUnpinnableSources === true);
        if (problems.length === 0) {
            return [];
        }
        const who = describeStack(view);
        const fix = "set spec.commit to the full 40-hex SHA and remove spec.branch";
        return productionFindings(
            who,
            classify(view, ctx),
            {
                production: (reason) => `${who} is ${reason} but is not pinned: ${problems.join("; ")}; ${fix}.`,
                unknown: (reason) =>
                    `${who} is not pinned (${problems.join("; ")}) and ${reason}; the rule fails closed: ${fix}, or make the deciding values known at preview time.`,
            },
            pinField(view),
        );
    },
);
